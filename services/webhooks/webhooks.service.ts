/**
 * `/api/webhooks` (issue 28, docs/webhooks.md): endpoints that receive signed events, their
 * deliveries with every attempt, and redelivery by hand. Admin only: an event carries any
 * reseller's subscribers and invoices, so no reseller or permission may subscribe to them.
 * Every write appends an audit row in its transaction; the secret is stored encrypted, shown in
 * the create answer only, and masked in the audit trail.
 */
import { and, count, desc, eq, inArray } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { changedFields, recordAudit } from '../../shared/audit';
import { requireAdmin } from '../../shared/auth/policy';
import { encrypt } from '../../shared/auth/secrets';
import { db } from '../../shared/db/client';
import { webhookAttempts, webhookDeliveries, webhooks } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { adminErrors, idParams, isoTimestamp, type IdPath } from '../../shared/http/schemas';
import { checkOutgoingUrl } from '../../shared/net/address-policy';
import { loadSettings } from '../../shared/settings';
import { allowPrivateTargets, attempt, recordAttempt } from './deliver';
import { WEBHOOK_EVENTS } from './events';
import { webhookOptions, type WebhookOptions } from './options';
import {
  createBody,
  deliveriesQuery,
  deliveryParams,
  updateBody,
  type CreateInput,
  type DeliveriesInput,
  type DeliveryPath,
  type UpdateInput,
} from './schemas';
import { newSecret } from './signing';

type WebhookRow = typeof webhooks.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

function view(w: WebhookRow) {
  return {
    id: w.id,
    url: w.url,
    description: w.description,
    events: w.events,
    enabled: w.enabled,
    disabled_reason: w.disabledReason,
    disabled_at: isoTimestamp(w.disabledAt),
    consecutive_failures: w.consecutiveFailures,
    created_at: isoTimestamp(w.createdAt),
    updated_at: isoTimestamp(w.updatedAt),
  };
}

function attemptView(a: AttemptRow) {
  return {
    id: a.id,
    trigger: a.trigger,
    status_code: a.statusCode,
    error: a.error,
    response_body: a.responseBody,
    duration_ms: a.durationMs,
    created_at: isoTimestamp(a.createdAt),
  };
}

function deliveryView(d: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event: d.event,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? isoTimestamp(d.nextAttemptAt) : null,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    created_at: isoTimestamp(d.createdAt),
    delivered_at: isoTimestamp(d.deliveredAt),
    payload: d.payload,
    attempt_log: attempts.map(attemptView),
  };
}

/** The URL under the address policy as it stands now: 400 naming `url` otherwise. */
async function checkUrl(url: string): Promise<void> {
  const { allow_private_targets } = await loadSettings(db(), ['allow_private_targets']);
  await checkOutgoingUrl('url', url, allow_private_targets === true);
}

async function loadWebhook(id: number): Promise<WebhookRow> {
  const [row] = await db().select().from(webhooks).where(eq(webhooks.id, id));
  if (!row) throw fail('webhookNotFound');
  return row;
}

/** What the audit trail says of a webhook: its fields, the secret only as "set". */
function auditFields(w: WebhookRow) {
  return { url: w.url, description: w.description, events: w.events, enabled: w.enabled, secret: w.secretEnc };
}

const ERRORS_404 = { ...adminErrors, 404: FAILURES.webhookNotFound.message };

export function createWebhooksService(): ServiceSchema {
  // Read at creation (the starting process's environment), like the delivery worker's.
  let opts!: WebhookOptions;
  return {
    name: 'webhooks',
    created() {
      opts = webhookOptions();
    },
    actions: {
      create: {
        rest: 'POST /api/webhooks',
        http: {
          auth: 'jwt',
          access: 'admin',
          summary: 'Register an endpoint for events; the signing secret (`secret`) is in this answer only',
          tag: 'webhooks',
          body: createBody,
          success: 201,
          errors: { ...adminErrors, 400: `${FAILURES.targetNotAllowed.message('url', '<why>')}; unknown event` },
        },
        async handler(ctx: Ctx<CreateInput>): Promise<ActionResult> {
          requireAdmin(ctx.meta.auth);
          const p = ctx.params;
          await checkUrl(p.url);
          const secret = p.secret ?? newSecret();
          const row = await db().transaction(async (tx) => {
            const [inserted] = await tx
              .insert(webhooks)
              .values({
                url: p.url,
                description: p.description ?? null,
                events: [...p.events],
                secretEnc: encrypt(secret),
                enabled: p.enabled ?? true,
                createdBy: ctx.meta.auth?.managerId ?? null,
              })
              .returning();
            await recordAudit(tx, ctx.meta.auth, {
              action: 'webhook.create',
              entity: 'webhook',
              entityId: inserted.id,
              details: changedFields(null, auditFields(inserted)),
            });
            return inserted;
          });
          return { data: { ...view(row), secret } };
        },
      },

      list: {
        rest: 'GET /api/webhooks',
        http: {
          auth: 'jwt',
          access: 'admin',
          summary: 'Webhook endpoints (no secrets); `events` beside the list names every event one may ask for',
          tag: 'webhooks',
          errors: adminErrors,
        },
        async handler(ctx: Ctx<unknown>): Promise<ActionResult> {
          requireAdmin(ctx.meta.auth);
          const rows = await db().select().from(webhooks).orderBy(webhooks.id);
          return { data: rows.map(view), events: WEBHOOK_EVENTS };
        },
      },

      get: {
        rest: 'GET /api/webhooks/:id',
        http: {
          auth: 'jwt',
          access: 'admin',
          summary: 'One webhook endpoint (no secret)',
          tag: 'webhooks',
          params: idParams(),
          errors: ERRORS_404,
        },
        async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
          requireAdmin(ctx.meta.auth);
          return { data: view(await loadWebhook(ctx.params.id)) };
        },
      },

      update: {
        rest: 'PUT /api/webhooks/:id',
        http: {
          auth: 'jwt',
          access: 'admin',
          summary:
            'Change an endpoint: URL, events, description, secret, enabled (enabling clears the run of failures and the reason)',
          tag: 'webhooks',
          params: idParams(),
          body: updateBody,
          errors: { ...ERRORS_404, 400: `${FAILURES.targetNotAllowed.message('url', '<why>')}; unknown event` },
        },
        async handler(ctx: Ctx<UpdateInput>): Promise<ActionResult> {
          requireAdmin(ctx.meta.auth);
          const p = ctx.params;
          if (p.url !== undefined) await checkUrl(p.url);
          const row = await db().transaction(async (tx) => {
            const [before] = await tx.select().from(webhooks).where(eq(webhooks.id, p.id)).for('update');
            if (!before) throw fail('webhookNotFound');
            const enabling = p.enabled === true && !before.enabled;
            const [after] = await tx
              .update(webhooks)
              .set({
                url: p.url,
                events: p.events ? [...p.events] : undefined,
                description: p.description,
                secretEnc: p.secret === undefined ? undefined : encrypt(p.secret),
                enabled: p.enabled,
                ...(p.enabled === undefined ? {} : { disabledReason: null, disabledAt: p.enabled ? null : new Date() }),
                ...(enabling ? { consecutiveFailures: 0 } : {}),
                updatedAt: new Date(),
              })
              .where(eq(webhooks.id, p.id))
              .returning();
            await recordAudit(tx, ctx.meta.auth, {
              action: 'webhook.update',
              entity: 'webhook',
              entityId: p.id,
              details: changedFields(auditFields(before), auditFields(after)),
            });
            return after;
          });
          return { data: view(row) };
        },
      },

      remove: {
        rest: 'DELETE /api/webhooks/:id',
        http: {
          auth: 'jwt',
          access: 'admin',
          summary: 'Delete an endpoint with its deliveries and their attempts',
          tag: 'webhooks',
          params: idParams(),
          errors: ERRORS_404,
        },
        async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
          requireAdmin(ctx.meta.auth);
          await db().transaction(async (tx) => {
            const [gone] = await tx.delete(webhooks).where(eq(webhooks.id, ctx.params.id)).returning();
            if (!gone) throw fail('webhookNotFound');
            await recordAudit(tx, ctx.meta.auth, {
              action: 'webhook.delete',
              entity: 'webhook',
              entityId: gone.id,
              details: changedFields(auditFields(gone), null),
            });
          });
          return { data: { id: ctx.params.id, deleted: true } };
        },
      },

      deliveries: {
        rest: 'GET /api/webhooks/:id/deliveries',
        http: {
          auth: 'jwt',
          access: 'admin',
          summary: "An endpoint's deliveries, newest first, each with its payload and every attempt",
          tag: 'webhooks',
          params: idParams(),
          query: deliveriesQuery,
          errors: ERRORS_404,
        },
        async handler(ctx: Ctx<DeliveriesInput>): Promise<ActionResult> {
          requireAdmin(ctx.meta.auth);
          const p = ctx.params;
          await loadWebhook(p.id);
          const { page, limit, offset } = pageOf(p);
          const where = and(
            eq(webhookDeliveries.webhookId, p.id),
            p.status ? eq(webhookDeliveries.status, p.status) : undefined,
            p.event ? eq(webhookDeliveries.event, p.event) : undefined,
          );
          const rows = await db()
            .select()
            .from(webhookDeliveries)
            .where(where)
            .orderBy(desc(webhookDeliveries.id))
            .limit(limit)
            .offset(offset);
          const attempts = rows.length
            ? await db()
                .select()
                .from(webhookAttempts)
                .where(
                  inArray(
                    webhookAttempts.deliveryId,
                    rows.map((r) => r.id),
                  ),
                )
                .orderBy(webhookAttempts.id)
            : [];
          const [{ total }] = await db().select({ total: count() }).from(webhookDeliveries).where(where);
          return {
            data: rows.map((r) =>
              deliveryView(
                r,
                attempts.filter((a) => a.deliveryId === r.id),
              ),
            ),
            pagination: { page, limit, total },
          };
        },
      },

      redeliver: {
        rest: 'POST /api/webhooks/:id/deliveries/:delivery_id/redeliver',
        http: {
          auth: 'jwt',
          access: 'admin',
          summary:
            'Send a delivery again now (same event id and body, a fresh signature); the attempt is recorded as manual and its outcome returned',
          tag: 'webhooks',
          params: deliveryParams,
          errors: {
            ...adminErrors,
            404: `${FAILURES.webhookNotFound.message}; ${FAILURES.webhookDeliveryNotFound.message}`,
          },
        },
        async handler(ctx: Ctx<DeliveryPath>): Promise<ActionResult> {
          requireAdmin(ctx.meta.auth);
          const hook = await loadWebhook(ctx.params.id);
          const [d] = await db()
            .select()
            .from(webhookDeliveries)
            .where(and(eq(webhookDeliveries.id, ctx.params.delivery_id), eq(webhookDeliveries.webhookId, hook.id)));
          if (!d) throw fail('webhookDeliveryNotFound');
          const due = {
            id: d.id,
            webhook_id: hook.id,
            event_id: d.eventId,
            event: d.event,
            payload: d.payload as Record<string, unknown>,
            attempts: d.attempts,
            created_at: d.createdAt,
            url: hook.url,
            secret_enc: hook.secretEnc,
          };
          const outcome = await attempt(due, opts, await allowPrivateTargets());
          await recordAttempt(due, outcome, 'manual', opts);
          const [after] = await db().select().from(webhookDeliveries).where(eq(webhookDeliveries.id, d.id));
          const log = await db()
            .select()
            .from(webhookAttempts)
            .where(eq(webhookAttempts.deliveryId, d.id))
            .orderBy(webhookAttempts.id);
          return { data: deliveryView(after, log) };
        },
      },
    },
  };
}
