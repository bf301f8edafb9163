/**
 * `GET /api/audit`: the audit trail (shared/audit.ts, docs/security.md), newest first, paged. An
 * admin reads every row; a reseller the rows of targets in its own tree, `view_all` or not: rows of
 * no tree (settings, managers, keys, sign-ins) are the admin's. There is no route that changes or
 * deletes a row.
 */
import { and, count, desc, eq, gte, lt, type SQL } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { inScope, requireAdminOrReseller, scopeFor } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { auditLog } from '../../shared/db/schema';
import { FAILURES } from '../../shared/failures';
import { pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { idSchema, isoTimestamp, object, type Infer } from '../../shared/http/schemas';
import { auditNames } from './audit-names';

const auditQuery = object({
  /** A manager's id: its own writes and those of its keys. */
  actor: idSchema,
  api_key_id: idSchema,
  target_type: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$' },
  target_id: idSchema,
  from: { type: 'string', format: 'date-time' },
  to: { type: 'string', format: 'date-time' },
  page: { type: 'integer', minimum: 1, maximum: 100_000 },
  limit: { type: 'integer', minimum: 1, maximum: 500 },
});
type AuditQuery = Infer<typeof auditQuery>;

type AuditRow = typeof auditLog.$inferSelect;

function view(r: AuditRow, names: Awaited<ReturnType<typeof auditNames>>[number]) {
  return {
    id: r.id,
    at: isoTimestamp(r.createdAt),
    actor_type: r.actorType,
    manager_id: r.managerId,
    manager_name: names.manager_name,
    api_key_id: r.apiKeyId,
    subscriber_id: r.actorSubscriberId,
    api_key_name: names.api_key_name,
    ip: r.ip,
    action: r.action,
    target_type: r.entity,
    target_id: r.entityId,
    target_name: names.target_name,
    reseller_id: r.resellerId,
    changes: r.details,
  };
}

export const auditService: ServiceSchema = {
  name: 'audit',
  actions: {
    list: {
      rest: 'GET /api/audit',
      http: {
        auth: 'jwt',
        access: "admin or reseller (rows of its own tree's targets; subscribers.view_all does not widen them)",
        summary: 'The audit trail: who did what to which record, when, from where, with the fields changed',
        tag: 'audit',
        query: auditQuery,
        errors: { 403: FAILURES.roleRequired.message('admin or reseller') },
      },
      async handler(ctx: Ctx<AuditQuery>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const p = ctx.params;
        const scope = await scopeFor(db(), auth, 'tree-read');
        const filters: (SQL | undefined)[] = [
          scope.kind === 'all' ? undefined : inScope(scope, auditLog.resellerId),
          p.actor === undefined ? undefined : eq(auditLog.managerId, p.actor),
          p.api_key_id === undefined ? undefined : eq(auditLog.apiKeyId, p.api_key_id),
          p.target_type === undefined ? undefined : eq(auditLog.entity, p.target_type),
          p.target_id === undefined ? undefined : eq(auditLog.entityId, p.target_id),
          p.from === undefined ? undefined : gte(auditLog.createdAt, new Date(p.from)),
          p.to === undefined ? undefined : lt(auditLog.createdAt, new Date(p.to)),
        ];
        const where = and(...filters);
        const { page, limit, offset } = pageOf(p);
        const rows = await db()
          .select()
          .from(auditLog)
          .where(where)
          .orderBy(desc(auditLog.id))
          .limit(limit)
          .offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(auditLog).where(where);
        const names = await auditNames(db(), rows);
        return { data: rows.map((r, i) => view(r, names[i])), pagination: { page, limit, total } };
      },
    },
  },
};
