/**
 * Whose money a report shows (docs/reports.md, "Scope"): an admin sees every tree unless it names a
 * reseller with `reseller_id`; a reseller sees its own tree, or a tree inside it that it names. A
 * named reseller stands for its whole tree. Naming one outside the caller's tree is 403, as the
 * lists do; an admin naming one that does not exist is 400.
 */
import type { Auth } from '../../shared/auth/claims';
import { requireAdminOrReseller, resellerInScope, scopeFor } from '../../shared/auth/policy';
import { db, pgPool } from '../../shared/db/client';
import { fail } from '../../shared/failures';

export interface ReportScope {
  /** `like` pattern of the reseller paths in scope; null: every reseller and the operator's own records. */
  pathPattern: string | null;
  /** The reseller the scope is rooted at (the caller's own or the named one); null for an admin's whole view. */
  rootId: number | null;
}

/**
 * `access` is the policy's: `read` (subscribers, their money, their resellers: widened by
 * `subscribers.view_all`) or `tree-read` (card batches: the caller's own tree whatever it holds).
 */
export async function reportScope(
  caller: Auth | undefined,
  resellerId: number | undefined,
  access: 'read' | 'tree-read' = 'read',
): Promise<ReportScope> {
  const auth = requireAdminOrReseller(caller);
  const scope = await scopeFor(db(), auth, access);
  if (resellerId === undefined) {
    return scope.kind === 'all'
      ? { pathPattern: null, rootId: null }
      : { pathPattern: `${scope.rootPath}%`, rootId: scope.rootId };
  }
  const { rows } = await pgPool().query<{ path: string }>('select path from resellers where id = $1', [resellerId]);
  if (scope.kind === 'tree' && !(await resellerInScope(db(), scope, resellerId))) throw fail('notAuthorized');
  if (!rows[0]) throw fail('referenceNotFound', 'reseller_id');
  return { pathPattern: `${rows[0].path}%`, rootId: resellerId };
}

/** Positional parameters of one statement: `p.add(value)` gives its `$n`. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** `column` belongs to a reseller of the scope (always true for an admin's whole view). */
export function scopeSql(scope: ReportScope, column: string, p: Params): string {
  if (scope.pathPattern === null) return 'true';
  return `${column} in (select id from resellers where path like ${p.add(scope.pathPattern)})`;
}
