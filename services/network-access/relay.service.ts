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
import { Client, type Notification } from 'pg';
import type { ServiceBroker, ServiceSchema } from 'moleculer';
import { sql } from 'drizzle-orm';
import { config, intVar } from '../../shared/config';
import { db } from '../../shared/db/client';
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

interface RelayState {
  listener?: Client;
  timer?: NodeJS.Timeout;
  /** The next LISTEN attempt after a lost or failed connection; cleared on stop. */
  reconnect?: NodeJS.Timeout;
  running?: Promise<void>;
  again: boolean;
  stopping: boolean;
  settings: RelaySettings;
}

export const outboxRelayService: ServiceSchema = {
  name: 'outboxRelay',
  created() {
    this.relay = { again: false, stopping: false, settings: relaySettings() } satisfies RelayState;
  },
  methods: {
    /** Drains now, or once more after the drain in progress when one is running. */
    wake(): void {
      const state = this.relay as RelayState;
      if (state.stopping) return;
      if (state.running) {
        state.again = true;
        return;
      }
      state.running = (async () => {
        do {
          state.again = false;
          try {
            await drainOutbox(this.broker);
          } catch (err) {
            this.logger.warn('outbox drain failed; the next wake-up retries', err);
          }
        } while (state.again && !state.stopping);
      })().finally(() => {
        state.running = undefined;
      });
    },
    /** LISTEN again in a while; meanwhile the poll keeps the outbox moving. */
    scheduleListen(): void {
      const state = this.relay as RelayState;
      if (state.stopping) return;
      clearTimeout(state.reconnect);
      state.reconnect = setTimeout(() => void this.listen().catch(() => this.scheduleListen()), state.settings.pollMs);
      state.reconnect.unref();
    },
    async listen(): Promise<void> {
      const state = this.relay as RelayState;
      if (state.stopping) return;
      const client = new Client({ connectionString: config().databaseUrl });
      client.on('error', (err) => {
        this.logger.warn('outbox LISTEN connection lost', err.message);
        if (state.listener === client) state.listener = undefined;
        client.end().catch(() => undefined);
        this.scheduleListen();
      });
      client.on('notification', (_n: Notification) => this.wake());
      try {
        await client.connect();
        await client.query('listen outbox');
      } catch (err) {
        await client.end().catch(() => undefined);
        throw err;
      }
      // Stopped while connecting: nobody would close this connection later.
      if (state.stopping) {
        await client.end().catch(() => undefined);
        return;
      }
      state.listener = client;
    },
  },
  async started() {
    const state = this.relay as RelayState;
    await this.listen().catch((err: Error) => {
      this.logger.warn('outbox LISTEN unavailable; polling until it connects', err.message);
      this.scheduleListen();
    });
    const tick = async () => {
      try {
        if (await requeueUnprocessed(state.settings))
          this.logger.info('outbox: unprocessed events queued for redelivery');
      } catch (err) {
        this.logger.warn('outbox redelivery sweep failed', err);
      }
      this.wake();
    };
    state.timer = setInterval(() => void tick(), state.settings.pollMs);
    state.timer.unref();
    this.wake();
  },
  async stopped() {
    const state = this.relay as RelayState;
    state.stopping = true;
    if (state.timer) clearInterval(state.timer);
    clearTimeout(state.reconnect);
    await state.running;
    await state.listener?.end().catch(() => undefined);
  },
};
