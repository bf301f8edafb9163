/**
 * The outbox relay: committed `outbox` rows become broker events (ARCHITECTURE section 5).
 *
 * - It lives in the network-access unit, the only consumer of these events today, so a
 *   deployment without network-access simply keeps its rows until one starts.
 * - Woken by PostgreSQL (a statement trigger NOTIFYs `outbox`, delivered at commit), and every
 *   OUTBOX_POLL_MS as a safety net; at start it drains whatever is waiting.
 * - Several replicas drain together safely: each batch is claimed with `for update skip locked` and
 *   marked published in one statement, then emitted.
 * - Broker events are fire-and-forget. A published event whose consumer never recorded it (in
 *   `processed_events`) within OUTBOX_REDELIVER_SECONDS is published again, for up to a day and
 *   OUTBOX_MAX_ATTEMPTS times: an event lost on the way, and a batch marked published by a relay
 *   that stopped before emitting it, alike (consumers are idempotent by event id).
 */
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import { sql } from 'drizzle-orm';
import { intVar } from '../../shared/config';
import { db } from '../../shared/db/client';
import { NotifyWorker } from '../../shared/db/notify-worker';
import { CONSUMED_EVENTS } from './event-consumer';

const BATCH = 500;

export interface RelaySettings {
  pollMs: number;
  redeliverSeconds: number;
  maxAttempts: number;
}

export function relaySettings(env: NodeJS.ProcessEnv = process.env): RelaySettings {
  return {
    pollMs: intVar(env, 'OUTBOX_POLL_MS', 5000, 100),
    redeliverSeconds: intVar(env, 'OUTBOX_REDELIVER_SECONDS', 120, 1),
    maxAttempts: intVar(env, 'OUTBOX_MAX_ATTEMPTS', 10, 1),
  };
}

interface OutboxRow extends Record<string, unknown> {
  id: number;
  event: string;
  payload: Record<string, unknown>;
}

/**
 * Publishes every unpublished row, batch by batch; the number published. A batch is claimed and
 * marked published in one statement (one round trip, where a transaction around a select and an
 * update took four while a bulk job kept the server busy), then emitted in id order.
 */
export async function drainOutbox(broker: ServiceBroker): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await db().execute<OutboxRow>(sql`
      update outbox o set published_at = now(), attempts = o.attempts + 1
        from (select id from outbox
               where published_at is null
               order by id
               limit ${BATCH}
               for update skip locked) claimed
       where o.id = claimed.id
      returning o.id, o.event, o.payload`);
    rows.sort((a, b) => Number(a.id) - Number(b.id));
    try {
      await Promise.all(rows.map((r) => broker.emit(r.event, { ...r.payload, event_id: Number(r.id) })));
    } catch (err) {
      // The broker refused (a transporter down): the batch goes back to the next drain rather than
      // waiting for the redelivery sweep; any of it already sent is skipped by the consumer's event id.
      await db().execute(sql`
        update outbox set published_at = null
         where id = any(${sql.param(rows.map((r) => Number(r.id)))}::bigint[])`);
      throw err;
    }
    total += rows.length;
    if (rows.length < BATCH) return total;
  }
}

/** Marks for publication again the consumed events published long ago and still not processed. */
export async function requeueUnprocessed(s: RelaySettings): Promise<number> {
  const { rowCount } = await db().execute(sql`
    update outbox o set published_at = null
     where o.id in (
       select o2.id from outbox o2
        where o2.published_at < now() - make_interval(secs => ${s.redeliverSeconds})
          and o2.published_at > now() - interval '1 day'
          and o2.attempts < ${s.maxAttempts}
          and o2.event = any(${sql.param(CONSUMED_EVENTS)}::text[])
          and not exists (select 1 from processed_events p where p.event_id = o2.id)
        for update skip locked)`);
  return rowCount ?? 0;
}

export const outboxRelayService: ServiceSchema = {
  name: 'outboxRelay',
  created() {
    const settings = relaySettings();
    this.relay = new NotifyWorker({
      name: 'outbox',
      channel: 'outbox',
      pollMs: settings.pollMs,
      logger: this.logger,
      drain: async () => {
        await drainOutbox(this.broker);
      },
      sweep: async () => {
        if (await requeueUnprocessed(settings)) this.logger.info('outbox: unprocessed events queued for redelivery');
      },
    });
  },
  async started() {
    await (this.relay as NotifyWorker).start();
  },
  async stopped() {
    await (this.relay as NotifyWorker).stop();
  },
};
