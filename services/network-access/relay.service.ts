/**
 * The outbox relay: committed `outbox` rows become broker events (ARCHITECTURE section 5).
 *
 * - It lives in the network-access unit, the only consumer of these events today, so a
 *   deployment without network-access simply keeps its rows until one starts.
 * - Woken by PostgreSQL (a statement trigger NOTIFYs `outbox`, delivered at commit), and every
 *   OUTBOX_POLL_MS as a safety net; at start it drains whatever is waiting.
 * - Several replicas drain together safely: each batch is claimed with `for update skip locked`,
 *   emitted, and marked published in the same transaction. A crash before commit leaves the rows
 *   unpublished; they are emitted again (consumers are idempotent by event id).
 * - Broker events are fire-and-forget. A published event whose consumer never recorded it (in
 *   `processed_events`) within OUTBOX_REDELIVER_SECONDS is published again, for up to a day and
 *   OUTBOX_MAX_ATTEMPTS times.
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

/** Publishes every unpublished row, batch by batch; the number published. */
export async function drainOutbox(broker: ServiceBroker): Promise<number> {
  let total = 0;
  for (;;) {
    const published = await db().transaction(async (tx) => {
      const { rows } = await tx.execute<OutboxRow>(sql`
        select id, event, payload from outbox
         where published_at is null
         order by id
         limit ${BATCH}
         for update skip locked`);
      if (rows.length === 0) return 0;
      for (const r of rows) await broker.emit(r.event, { ...r.payload, event_id: Number(r.id) });
      await tx.execute(sql`
        update outbox set published_at = now(), attempts = attempts + 1
         where id = any(${sql.param(rows.map((r) => Number(r.id)))}::bigint[])`);
      return rows.length;
    });
    total += published;
    if (published < BATCH) return total;
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
