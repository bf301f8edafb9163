/**
 * The one place that decides who may do what, and over which reseller tree. Actions ask it; none
 * re-implements a role, permission or scope rule.
 *
 * - admin: every permission, every tree.
 * - reseller: the permissions in its token, over its own tree (itself and all descendants).
 * - user: the permissions in its token; over its reseller's tree when it has one, else over all
 *   (operator staff).
 * - `subscribers.view_all` widens reads of subscriber data (`read`) to every tree; every other read
 *   (`tree-read`: audit rows, card batches, card redemption tries) and every write keep the caller's
 *   own tree, so the operator's own records (no reseller) stay with the admin and operator staff.
 */
import { eq, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { isPoolDb, pgPool, type DbOrTx } from '../db/client';
import { resellers, resellerTreeGeneration } from '../db/schema';
import { errorOf, fail, type Failure, type FixedFailure } from '../failures';
import type { Auth, Role } from './claims';
import { INVOICE_PERMISSIONS, type InvoicePermission, type Permission } from './permissions';

/**
 * A tree scope carries the reseller tree's generation (migration 0013) read with its path: whatever
 * a caller keeps of a tree at that generation (which resellers it holds) is still the tree.
 */
export type Scope = { kind: 'all' } | { kind: 'tree'; rootId: number; rootPath: string; treeGeneration: number };
/**
 * `read`: subscribers and what hangs off them (invoices, payments) and the resellers that own them,
 * which `view_all` widens; `tree-read`: any other record; `write`: a change.
 */
export type Access = 'read' | 'tree-read' | 'write';

export const VIEW_ALL: Permission = 'subscribers.view_all';

export function requireAuth(auth: Auth | undefined): Auth {
  if (!auth) throw fail('unauthorized');
  return auth;
}

export function hasPermission(auth: Auth, permission: Permission): boolean {
  return auth.role === 'admin' || auth.permissions.includes(permission);
}

export function requirePermission(auth: Auth | undefined, permission: Permission): Auth {
  const a = requireAuth(auth);
  if (!hasPermission(a, permission)) throw fail('permissionRequired', permission);
  return a;
}

export function requireRole(auth: Auth | undefined, ...roles: Role[]): Auth {
  const a = requireAuth(auth);
  if (!roles.includes(a.role)) throw fail('roleRequired', roles.join(' or '));
  return a;
}

export const requireAdmin = (auth: Auth | undefined) => requireRole(auth, 'admin');
/** Writes on invoices and reseller-owned records: admin or reseller. */
export const requireAdminOrReseller = (auth: Auth | undefined) => requireRole(auth, 'admin', 'reseller');

/**
 * The invoice permissions `auth` holds: admin every one; a reseller-role caller the `invoices.*` its
 * token names, or every one when it names none (the spec's rule, so accounts and tokens made before
 * the names existed keep their rights); any other role none.
 */
export function invoicePermissions(auth: Auth): InvoicePermission[] {
  if (auth.role === 'admin') return [...INVOICE_PERMISSIONS];
  if (auth.role !== 'reseller') return [];
  const named = INVOICE_PERMISSIONS.filter((p) => auth.permissions.includes(p));
  return named.length ? named : [...INVOICE_PERMISSIONS];
}

/** An invoice write: admin or reseller (the spec's roles), holding `permission` (invoicePermissions). */
export function requireInvoicePermission(auth: Auth | undefined, permission: InvoicePermission): Auth {
  const a = requireAdminOrReseller(auth);
  if (!invoicePermissions(a).includes(permission)) throw fail('permissionRequired', permission);
  return a;
}

/**
 * Steps that change sign-in itself (two-factor sign-in, an admin's creation, promotion or password)
 * are a signed-in manager's, never an API key's: a key is no sign-in, has no second factor to prove
 * afresh, and what it created would outlive its revocation (docs/two-factor.md).
 */
export function requireSignedIn(
  auth: Auth | undefined,
  refusal: 'keyCannotChangeTwoFactor' | 'keyCannotGrantAdmin',
): Auth {
  const a = requireAuth(auth);
  if (a.keyId !== undefined) throw fail(refusal);
  return a;
}

export async function scopeFor(db: DbOrTx, auth: Auth, access: Access): Promise<Scope> {
  if (auth.role === 'admin') return { kind: 'all' };
  if (access === 'read' && auth.permissions.includes(VIEW_ALL)) return { kind: 'all' };
  if (auth.resellerId === null) {
    if (auth.role === 'user') return { kind: 'all' };
    throw fail('notAuthorized');
  }
  const found = await resellerPath(db, auth.resellerId);
  if (found === undefined) throw fail('tokenResellerGone');
  return { kind: 'tree', rootId: auth.resellerId, rootPath: found.path, treeGeneration: found.treeGeneration };
}

/**
 * Every request of a reseller caller reads its tree's path, and most reads of a record its
 * reseller's: outside a transaction as one prepared statement (building it through Drizzle and
 * planning it anew cost more than the read itself).
 */
async function resellerPath(db: DbOrTx, id: number): Promise<{ path: string; treeGeneration: number } | undefined> {
  if (!isPoolDb(db)) {
    const generation = sql<number>`(select ${resellerTreeGeneration.n} from ${resellerTreeGeneration})`.mapWith(Number);
    return (
      await db.select({ path: resellers.path, treeGeneration: generation }).from(resellers).where(eq(resellers.id, id))
    )[0];
  }
  const { rows } = await pgPool().query<{ path: string; treeGeneration: string }>({
    name: 'policy_reseller_path',
    text: 'select path, (select n from reseller_tree_generation) as "treeGeneration" from resellers where id = $1',
    values: [id],
  });
  return rows[0] && { path: rows[0].path, treeGeneration: Number(rows[0].treeGeneration) };
}

/**
 * `column` belongs to a reseller of the scope's tree. `pathPattern` lets a statement cached by
 * shape take the tree's `like` pattern (see `scopePathPattern`) as a placeholder.
 */
export function inScope(scope: Scope, column: AnyPgColumn | SQL, pathPattern: unknown = scopePathPattern(scope)): SQL {
  if (scope.kind === 'all') return sql`true`;
  return sql`${column} in (select ${resellers.id} from ${resellers} where ${resellers.path} like ${pathPattern})`;
}

export function scopePathPattern(scope: Scope): string | undefined {
  return scope.kind === 'all' ? undefined : `${scope.rootPath}%`;
}

export async function resellerInScope(db: DbOrTx, scope: Scope, resellerId: number): Promise<boolean> {
  if (scope.kind === 'all') return true;
  const found = await resellerPath(db, resellerId);
  return found !== undefined && found.path.startsWith(scope.rootPath);
}

/**
 * The rule for one record the caller has just loaded (`record` undefined: none): it exists (else
 * the failure `missing`, a 404, or a 400 when a body field named it) and its reseller is in the
 * caller's scope (else 403). Gives the record back.
 */
export async function recordInScope<T extends { resellerId: number | null }>(
  db: DbOrTx,
  auth: Auth,
  access: Access,
  record: T | undefined,
  missing: FixedFailure | Failure,
): Promise<T> {
  if (record === undefined || record.resellerId === null)
    throw typeof missing === 'string' ? fail(missing) : errorOf(missing);
  const scope = await scopeFor(db, auth, access);
  if (!(await resellerInScope(db, scope, record.resellerId))) throw fail('notAuthorized');
  return record;
}

/** The reseller a new record belongs to: the caller's own unless an admin (or an ancestor) names one in its tree. */
export async function targetReseller(db: DbOrTx, auth: Auth, requested: number | undefined): Promise<number> {
  if (requested === undefined) {
    if (auth.resellerId !== null) return auth.resellerId;
    throw fail('resellerRequiredForCaller');
  }
  const scope = await scopeFor(db, auth, 'write');
  const [row] = await db.select({ id: resellers.id }).from(resellers).where(eq(resellers.id, requested));
  if (!row) throw fail('referenceNotFound', 'reseller_id');
  if (!(await resellerInScope(db, scope, requested))) throw fail('notAuthorized');
  return requested;
}
