/**
 * The delivery worker's database side (docs/webhooks.md): take due deliveries, make one attempt
 * each, record it. A taken delivery is leased (its next_attempt_at moved past the attempt's
 * timeout) in the statement that takes it, so replicas never send one twice at once and a worker
 * that dies mid-attempt leaves it to be taken again when the lease ends: at least once, the same
 * event id every time (receivers deduplicate by it).
 */
import { sql } from 'drizzle-orm';
import { recordAudit } from '../../shared/audit';
import { decrypt } from '../../shared/auth/secrets';
import { db } from '../../shared/db/client';
import { loadSettings } from '../../shared/settings';
import { eventBody } from './events';
import type { WebhookOptions } from './options';
import { isDelivered, nextAttempt } from './schedule';
import { send, type SendOutcome } from './send';
import { SIGNATURE_HEADER, signatureHeader } from './signing';

/** Beyond the attempt's timeout, the time to resolve the name and record the outcome. */
const LEASE_MARGIN_MS = 5000;

export interface DueDelivery extends Record<string, unknown> {
  id: number;
  webhook_id: number;
  event_id: string;
  event: string;
  payload: Record<string, unknown>;
  attempts: number;
  created_at: Date;
  url: string;
  secret_enc: string;
}

/** Up to `limit` due deliveries of enabled endpoints, leased and counted as attempted. */
export async function takeDue(limit: number, opts: WebhookOptions): Promise<DueDelivery[]> {
  const { rows } = await db().execute<DueDelivery>(sql`
    update webhook_deliveries d
       set attempts = d.attempts + 1,
           next_attempt_at = now() + make_interval(secs => ${(opts.timeoutMs + LEASE_MARGIN_MS) / 1000})
      from webhooks w
     where w.id = d.webhook_id
       and d.id in (
         select d2.id from webhook_deliveries d2 join webhooks w2 on w2.id = d2.webhook_id and w2.enabled
          where d2.status = 'pending' and d2.next_attempt_at <= now()
          order by d2.next_attempt_at, d2.id
          limit ${limit}
          for update of d2 skip locked)
    returning d.id, d.webhook_id, d.event_id, d.event, d.payload, d.attempts, d.created_at, w.url, w.secret_enc`);
  return rows.map((r) => ({ ...r, id: Number(r.id), created_at: new Date(r.created_at) }));
}

/** The request of one attempt: the event's body, signed now. */
/** Whether deliveries may go to private addresses (the setting), read once per batch of attempts. */
export async function allowPrivateTargets(): Promise<boolean> {
  return (await loadSettings(db(), ['allow_private_targets'])).allow_private_targets === true;
}

export async function attempt(d: DueDelivery, opts: WebhookOptions, allowPrivate: boolean): Promise<SendOutcome> {
  const started = Date.now();
  try {
    const body = eventBody({ eventId: d.event_id, event: d.event, payload: d.payload, createdAt: d.created_at });
    const timestamp = Math.floor(Date.now() / 1000);
    return await send({
      url: d.url,
      body,
      headers: {
        'user-agent': 'isp-billing-webhooks/1',
        [SIGNATURE_HEADER]: signatureHeader(decrypt(d.secret_enc), timestamp, body),
        'X-Webhook-Event': d.event,
        'X-Webhook-Event-Id': d.event_id,
        'X-Webhook-Delivery': String(d.id),
      },
      allowPrivate,
      timeoutMs: opts.timeoutMs,
      maxBodyBytes: opts.maxBodyBytes,
    });
  } catch (err) {
    // A secret that no longer decrypts (ENCRYPTION_KEY changed) is this attempt's failure, recorded
    // and scheduled like any other: thrown, the delivery would be leased again every lease for ever,
    // with no attempt row and no count toward disabling the endpoint.
    return {
      statusCode: null,
      error: `not sent: ${(err as Error).message}`,
      responseBody: null,
      durationMs: Date.now() - started,
    };
  }
}

function describe(o: SendOutcome): string {
  return o.error ?? `HTTP ${o.statusCode}`;
}

/**
 * Records an attempt and what follows from it, in one transaction: delivered, or tried again on the
 * schedule, or failed for good once its day is over; the endpoint's run of failures, and its
 * disabling (with the reason, and an audit row of the system) when the run reaches the limit.
 * A manual attempt (redeliver) changes the schedule only by succeeding.
 */
export async function recordAttempt(
  d: Pick<DueDelivery, 'id' | 'webhook_id' | 'attempts' | 'created_at'>,
  o: SendOutcome,
  trigger: 'auto' | 'manual',
  opts: WebhookOptions,
): Promise<void> {
  const ok = isDelivered(o.statusCode);
  await db().transaction(async (tx) => {
    await tx.execute(sql`
      insert into webhook_attempts (delivery_id, trigger, status_code, error, response_body, duration_ms)
      values (${d.id}, ${trigger}, ${o.statusCode}, ${o.error}, ${o.responseBody}, ${o.durationMs})`);
    if (ok) {
      await tx.execute(sql`
        update webhook_deliveries set status = 'succeeded', delivered_at = now(), last_status_code = ${o.statusCode},
               last_error = null
         where id = ${d.id}`);
      await tx.execute(sql`update webhooks set consecutive_failures = 0 where id = ${d.webhook_id}`);
      return;
    }
    if (trigger === 'auto') {
      const next = nextAttempt(opts, d.created_at, d.attempts, new Date());
      // Only while this attempt is still the delivery's last: one that outlived its lease, after
      // another worker took the delivery again (and perhaps delivered it), must not set it back.
      const { rows: current } = await tx.execute(sql`
        update webhook_deliveries
           set status = ${next ? 'pending' : 'failed'}, next_attempt_at = coalesce(${next}::timestamptz, next_attempt_at),
               last_status_code = ${o.statusCode}, last_error = ${o.error}
         where id = ${d.id} and status = 'pending' and attempts = ${d.attempts}
        returning id`);
      if (current.length === 0) return;
    } else {
      await tx.execute(sql`
        update webhook_deliveries set last_status_code = ${o.statusCode}, last_error = ${o.error} where id = ${d.id}`);
    }
    const { rows } = await tx.execute<{ consecutive_failures: number; enabled: boolean }>(sql`
      update webhooks set consecutive_failures = consecutive_failures + 1 where id = ${d.webhook_id}
      returning consecutive_failures, enabled`);
    const run = rows[0];
    if (!run?.enabled || run.consecutive_failures < opts.disableAfter) return;
    const reason = `${run.consecutive_failures} failed attempts in a row; the last: ${describe(o)}`;
    await tx.execute(sql`
      update webhooks set enabled = false, disabled_reason = ${reason}, disabled_at = now(), updated_at = now()
       where id = ${d.webhook_id}`);
    await recordAudit(tx, undefined, {
      action: 'webhook.disable',
      entity: 'webhook',
      entityId: d.webhook_id,
      details: { reason },
    });
  });
}

/**
 * Deletes settled deliveries (and their attempts) older than `days`, at most `limit` at a time, so
 * the log stays bounded; pending ones are kept whatever their age. The number deleted.
 */
export async function pruneSettled(days: number, limit: number): Promise<number> {
  const { rowCount } = await db().execute(sql`
    delete from webhook_deliveries where id in (
      select id from webhook_deliveries
       where status <> 'pending' and created_at < now() - make_interval(days => ${days})
       order by id limit ${limit})`);
  return rowCount ?? 0;
}
