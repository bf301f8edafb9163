/**
 * `webhookDelivery`: sends the deliveries the triggers wrote (docs/webhooks.md). Woken by
 * PostgreSQL at the commit of a transaction that wrote one (NOTIFY webhook_deliveries) and every
 * WEBHOOK_POLL_MS, for retries that fall due and as a safety net; at start it sends whatever is
 * due, so a restart after a crash picks up where the dead process left off. Every
 * PRUNE_EVERY_MS it deletes settled deliveries past WEBHOOK_RETENTION_DAYS; `webhookDelivery.prune`
 * (not routed) runs that now, for tests and operators' scripts.
 */
import type { ServiceSchema } from 'moleculer';
import { NotifyWorker } from '../../shared/db/notify-worker';
import { allowPrivateTargets, attempt, pruneSettled, recordAttempt, takeDue } from './deliver';
import { webhookOptions, type WebhookOptions } from './options';

const PRUNE_EVERY_MS = 10 * 60_000;
/** Rows deleted per statement: a long backlog is worked off in short transactions. */
const PRUNE_BATCH = 5000;

export const webhookDeliveryService: ServiceSchema = {
  name: 'webhookDelivery',
  created() {
    const opts = webhookOptions();
    this.deliveryOptions = opts;
    this.worker = new NotifyWorker({
      name: 'webhook delivery',
      channel: 'webhook_deliveries',
      pollMs: opts.pollMs,
      logger: this.logger,
      drain: async (stopping) => {
        for (;;) {
          const allowPrivate = await allowPrivateTargets();
          const due = await takeDue(opts.concurrency, opts);
          await Promise.all(due.map(async (d) => recordAttempt(d, await attempt(d, opts, allowPrivate), 'auto', opts)));
          if (due.length < opts.concurrency || stopping()) return;
        }
      },
    });
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
      const { retentionDays } = this.deliveryOptions as WebhookOptions;
      if (retentionDays === 0) return 0;
      let total = 0;
      for (;;) {
        const deleted = await pruneSettled(retentionDays, PRUNE_BATCH);
        total += deleted;
        if (deleted < PRUNE_BATCH) return total;
      }
    },
  },
  async started() {
    await (this.worker as NotifyWorker).start();
    this.pruner = setInterval(
      () => void this.prune().catch((err: Error) => this.logger.warn('webhook log pruning failed', err.message)),
      PRUNE_EVERY_MS,
    );
    (this.pruner as NodeJS.Timeout).unref();
  },
  async stopped() {
    clearInterval(this.pruner as NodeJS.Timeout | undefined);
    await (this.worker as NotifyWorker).stop();
  },
};
