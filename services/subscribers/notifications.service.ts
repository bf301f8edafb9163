/**
 * GET /api/notifications?subscriber_id=: the messages the lifecycle sent or tried to send to one
 * subscriber (expiry reminders, docs/lifecycle.md), newest first. Read under the subscriber's own
 * rule: `subscribers.view`, and the subscriber in the caller's read scope (404 / 403).
 */
import { count, desc, eq } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { recordInScope, requirePermission } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { notifications } from '../../shared/db/schema';
import { FAILURES } from '../../shared/failures';
import { pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult, HttpRoute } from '../../shared/http/route';
import { idSchema, isoTimestamp, object, paginationProperties, type Infer } from '../../shared/http/schemas';
import { loadRow } from './subscriber-rows';

const listQuery = object({ subscriber_id: idSchema, ...paginationProperties }, ['subscriber_id']);
type ListQuery = Infer<typeof listQuery>;

type NotificationRow = typeof notifications.$inferSelect;

function view(n: NotificationRow) {
  return {
    id: n.id,
    subscriber_id: n.subscriberId,
    kind: n.kind,
    rule_days: n.ruleDays,
    expiry_date: n.expiryDate,
    provider: n.provider,
    recipient: n.recipient,
    message: n.message,
    status: n.status,
    error: n.error,
    created_at: isoTimestamp(n.createdAt),
    sent_at: isoTimestamp(n.sentAt),
  };
}

export const notificationsService: ServiceSchema = {
  name: 'notifications',
  actions: {
    list: {
      rest: 'GET /api/notifications',
      http: {
        auth: 'jwt',
        access: 'subscribers.view',
        summary:
          "A subscriber's notifications (expiry reminders): status pending, sending, sent, failed or skipped, newest first",
        tag: 'subscribers',
        query: listQuery,
        errors: {
          400: 'subscriber_id is required',
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
        },
      } satisfies HttpRoute,
      async handler(ctx: Ctx<ListQuery>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.view');
        await recordInScope(db(), auth, 'read', await loadRow(ctx.params.subscriber_id), 'subscriberNotFound');
        const { page, limit, offset } = pageOf(ctx.params);
        const where = eq(notifications.subscriberId, ctx.params.subscriber_id);
        const rows = await db()
          .select()
          .from(notifications)
          .where(where)
          .orderBy(desc(notifications.id))
          .limit(limit)
          .offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(notifications).where(where);
        return { data: rows.map(view), pagination: { page, limit, total } };
      },
    },
  },
};
