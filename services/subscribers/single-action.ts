/**
 * One subscriber through an operation of operations.ts: the policy decides 404 / 403, then the row
 * is locked (scope checked again under the lock) and the operation's own failure (402, 409...)
 * becomes the HTTP error. The answer is the updated subscriber's view plus the operation's extras.
 */
import type { Auth } from '../../shared/auth/claims';
import type { Permission } from '../../shared/auth/permissions';
import { recordInScope, requirePermission, scopeFor } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { FAILURES, errorOf, fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult, HttpRoute } from '../../shared/http/route';
import { emptyBody, idParams, type IdPath } from '../../shared/http/schemas';
import { loadSettings } from '../../shared/settings';
import { todayIso } from '../../shared/domain/subscriber';
import { eq } from 'drizzle-orm';
import { auditedRequest, changedFields, recordAudit } from '../../shared/audit';
import { subscribers } from '../../shared/db/schema';
import * as ops from './operations';
import { loadRow, viewOf } from './subscriber-rows';

/** The caller holds `permission` and may write subscriber `id` (403 / 404 otherwise). */
export async function authorizeSingle(caller: Auth | undefined, permission: Permission, id: number): Promise<Auth> {
  const auth = requirePermission(caller, permission);
  await recordInScope(db(), auth, 'write', await loadRow(id), 'subscriberNotFound');
  return auth;
}

/**
 * Runs `op` over subscriber `id` for a caller `authorizeSingle` already let through, and appends
 * its audit row (`subscriber.<action>`, the fields changed) in the same transaction.
 */
export async function runAuthorized<P>(
  auth: Auth,
  id: number,
  op: ops.Operation<P>,
  payload: P,
  action = op.name || 'action',
): Promise<Record<string, unknown>> {
  const scope = await scopeFor(db(), auth, 'write');
  const settings = await loadSettings(db());
  const today = todayIso();
  const { extra, after } = await db().transaction(async (tx) => {
    const locked = await ops.lockInScope(tx, scope, [id]);
    if (locked.failed.length) throw errorOf(locked.failed[0]);
    // A subscriber on its own account (self-care) that the operator deactivated: RADIUS refuses it
    // and the sweep renews it no more, so nothing it buys could be used.
    if (auth.subscriberId !== undefined && locked.rows[0].status !== 'active') throw fail('accountInactive');
    const result = await op({ tx, auth, today, settings }, locked.rows, payload);
    if (result.failed.length) throw errorOf(result.failed[0]);
    const before = locked.rows[0];
    const [after] = await tx.select().from(subscribers).where(eq(subscribers.id, id));
    await recordAudit(tx, auth, {
      action: `subscriber.${action}`,
      entity: 'subscriber',
      entityId: id,
      resellerId: after?.resellerId ?? before?.resellerId ?? null,
      details: { ...changedFields(before, after), ...auditedPayload(payload) },
    });
    return { extra: result.extra.get(id) ?? {}, after };
  });
  return { ...(await viewOf(after)), ...extra };
}

/** `action` names the audit row (`subscriber.<action>`); by default the permission's name. */
export async function runSingle<P>(
  caller: Auth | undefined,
  permission: Permission,
  id: number,
  op: ops.Operation<P>,
  payload: P,
  action = permission.replace(/^subscribers\./, ''),
) {
  return runAuthorized(await authorizeSingle(caller, permission, id), id, op, payload, action);
}

/** A `POST /api/subscribers/:id/<path>` action with no body: one operation under one permission. */
export const simpleAction = (
  path: string,
  permission: Permission,
  op: ops.Operation<unknown>,
  summary: string,
  errors: Record<number, string> = {},
) => ({
  rest: `POST /api/subscribers/:id/${path}`,
  http: {
    auth: 'jwt',
    access: permission,
    summary,
    tag: 'subscribers',
    params: idParams(),
    body: emptyBody,
    errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message, ...errors },
  } satisfies HttpRoute,
  async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
    // Named by the route (activate and deactivate share a permission but not a meaning).
    return { data: await runSingle(ctx.meta.auth, permission, ctx.params.id, op, {}, path.replace(/-/g, '_')) };
  },
});

/** The request's own fields (a reason, days, a plan id) beside the changes, secrets left out. */
function auditedPayload(payload: unknown): Record<string, unknown> {
  if (!payload || typeof payload !== 'object') return {};
  const fields = auditedRequest(payload as Record<string, unknown>);
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [`request.${k}`, v]));
}
