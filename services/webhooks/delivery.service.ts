/**
 * `webhookDelivery`: sends the deliveries the triggers wrote (docs/webhooks.md). Woken by
 * PostgreSQL at the commit of a transaction that wrote one (NOTIFY webhook_deliveries) and every
 * WEBHOOK_POLL_MS, for retries that fall due and as a safety net; at start it sends whatever is
 * due, so a restart after a crash picks up where the dead process left off. Every
 * PRUNE_EVERY_MS it deletes settled deliveries past WEBHOOK_RETENTION_DAYS; `webhookDelivery.prune`
 * (not routed) runs that now, for tests and operators' scripts.
 */
import { Client } from 'pg';
import type { ServiceSchema } from 'moleculer';
import { config } from '../../shared/config';
import { attempt, pruneSettled, recordAttempt, takeDue } from './deliver';
import { webhookOptions, type WebhookOptions } from './options';

const PRUNE_EVERY_MS = 10 * 60_000;
/** Rows deleted per statement: a long backlog is worked off in short transactions. */
const PRUNE_BATCH = 5000;

interface WorkerState {
  opts: WebhookOptions;
  listener?: Client;
  timer?: NodeJS.Timeout;
  pruner?: NodeJS.Timeout;
  reconnect?: NodeJS.Timeout;
  running?: Promise<void>;
  again: boolean;
  stopping: boolean;
}

export const webhookDeliveryService: ServiceSchema = {
  name: 'webhookDelivery',
  created() {
    this.worker = { opts: webhookOptions(), again: false, stopping: false } satisfies WorkerState;
  },
  actions: {
    prune: {
      visibility: 'public',
      async handler(): Promise<{ deleted: number }> {
        return { deleted: await this.prune() };
      },
    },
  },
  methods: {
    async prune(): Promise<number> {
      const { retentionDays } = (this.worker as WorkerState).opts;
      if (retentionDays === 0) return 0;
      let total = 0;
      for (;;) {
        const deleted = await pruneSettled(retentionDays, PRUNE_BATCH);
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
      }
    },
    /** Takes and sends due deliveries until none is left; once more if woken meanwhile. */
    wake(): void {
      const state = this.worker as WorkerState;
      if (state.stopping) return;
      if (state.running) {
        state.again = true;
        return;
      }
      state.running = (async () => {
        do {
          state.again = false;
          try {
            for (;;) {
              const due = await takeDue(state.opts.concurrency, state.opts);
              await Promise.all(
                due.map(async (d) => recordAttempt(d, await attempt(d, state.opts), 'auto', state.opts)),
              );
              if (due.length < state.opts.concurrency || state.stopping) break;
            }
          } catch (err) {
            this.logger.warn('webhook delivery run failed; the next wake-up retries', err);
          }
        } while (state.again && !state.stopping);
      })().finally(() => {
        state.running = undefined;
      });
    },
    scheduleListen(): void {
      const state = this.worker as WorkerState;
      if (state.stopping) return;
      clearTimeout(state.reconnect);
      state.reconnect = setTimeout(() => void this.listen().catch(() => this.scheduleListen()), state.opts.pollMs);
      state.reconnect.unref();
    },
    async listen(): Promise<void> {
      const state = this.worker as WorkerState;
      if (state.stopping) return;
      const client = new Client({ connectionString: config().databaseUrl });
      client.on('error', (err) => {
        this.logger.warn('webhook LISTEN connection lost', err.message);
        if (state.listener === client) state.listener = undefined;
        client.end().catch(() => undefined);
        this.scheduleListen();
      });
      client.on('notification', () => this.wake());
      try {
        await client.connect();
        await client.query('listen webhook_deliveries');
      } catch (err) {
        await client.end().catch(() => undefined);
        throw err;
      }
      if (state.stopping) {
        await client.end().catch(() => undefined);
        return;
      }
      state.listener = client;
    },
  },
  async started() {
    const state = this.worker as WorkerState;
    await this.listen().catch((err: Error) => {
      this.logger.warn('webhook LISTEN unavailable; polling until it connects', err.message);
      this.scheduleListen();
    });
    state.timer = setInterval(() => this.wake(), state.opts.pollMs);
    state.timer.unref();
    state.pruner = setInterval(
      () => void this.prune().catch((err: Error) => this.logger.warn('webhook log pruning failed', err.message)),
      PRUNE_EVERY_MS,
    );
    state.pruner.unref();
    this.wake();
  },
  async stopped() {
    const state = this.worker as WorkerState;
    state.stopping = true;
    if (state.timer) clearInterval(state.timer);
    if (state.pruner) clearInterval(state.pruner);
    clearTimeout(state.reconnect);
    await state.running;
    await state.listener?.end().catch(() => undefined);
  },
};
