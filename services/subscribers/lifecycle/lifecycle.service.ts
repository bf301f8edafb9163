/**
 * `lifecycle`: the sweep that lets billing drive access by itself (docs/lifecycle.md). It runs in
 * every process of the subscribers unit, at start, every LIFECYCLE_INTERVAL_SECONDS and on
 * `settings.changed`; the advisory lock (./lock.ts) lets one replica at a time do the work.
 * `lifecycle.sweep` (not routed) runs one now, for tests and the benchmark.
 */
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { config } from '../../../shared/config';
import { todayIso } from '../../../shared/domain/subscriber';
import { withTryLock } from '../../../shared/db/try-lock';
import { lifecycleOptionsFromEnv, type LifecycleOptions } from './options';
import { runSweep, type SweepCounts } from './sweep';

/** The settings whose change the sweep acts on at once (the others wait for the next tick). */
const SWEEP_SETTINGS = new Set([
  'suspend_overdue_after_days',
  'reminders_enabled',
  'reminder_days',
  'messaging_provider',
  'whatsapp_access_token',
  'whatsapp_phone_number_id',
  'whatsapp_base_url',
  'telegram_bot_token',
  'telegram_base_url',
  'currency',
  'default_tax_rate',
]);

export type SweepResult = (SweepCounts & { skipped: false }) | { skipped: true; reason: string };

interface LifecycleThis extends Service {
  opts: LifecycleOptions;
  timer?: NodeJS.Timeout;
  running?: Promise<SweepResult>;
  again: boolean;
  stopping: boolean;
  sweep(today?: string): Promise<SweepResult>;
  scheduled(): void;
}

const schema: ServiceSchema<ServiceSettingSchema, LifecycleThis> = {
  name: 'lifecycle',

  actions: {
    /** One sweep now; `{ skipped: true }` when another run (of any replica) holds the lock. */
    sweep: {
      visibility: 'public',
      async handler(this: LifecycleThis, ctx: Context<{ today?: string }>): Promise<SweepResult> {
        return this.sweep(ctx.params?.today);
      },
    },
  },

  events: {
    /** A setting can change who is blocked (suspend_overdue_after_days), who auto-renews and what reminders do. */
    'settings.changed': {
      handler(this: LifecycleThis, ctx: Context<{ keys?: string[] }>) {
        const keys = ctx.params?.keys;
        if (!Array.isArray(keys) || keys.some((k) => SWEEP_SETTINGS.has(k))) this.scheduled();
      },
    },
  },

  methods: {
    async sweep(this: LifecycleThis, today: string = todayIso()): Promise<SweepResult> {
      const run = withTryLock('lifecycle.sweep', () =>
        runSweep(today, {
          batchSize: this.opts.batchSize,
          sendConcurrency: this.opts.sendConcurrency,
          portalUrl: `${config().publicBaseUrl}/portal`,
          messaging: async () => {
            try {
              return await this.broker.call<{ provider: string }>('notifier.ready');
            } catch (err) {
              return { off: (err as Error).message };
            }
          },
          send: async (phone, text) =>
            this.broker.call<{ provider: string; recipient: string }, { phone: string; text: string }>(
              'notifier.sendText',
              { phone, text },
            ),
          stopping: () => this.stopping,
          warn: (message, detail) => this.logger.warn(`lifecycle: ${message}`, detail),
        }),
      );
      const counts = await run;
      if (!counts) return { skipped: true, reason: 'another sweep holds the lock' };
      this.logger.info('lifecycle sweep', counts);
      return { ...counts, skipped: false };
    },

    /** A sweep of its own (timer, start, event): one at a time in this process, one more if asked meanwhile. */
    scheduled(this: LifecycleThis) {
      if (this.stopping) return;
      if (this.running) {
        this.again = true;
        return;
      }
      this.running = this.sweep()
        .catch((err: unknown) => {
          this.logger.error('lifecycle sweep failed', err);
          return { skipped: true, reason: (err as Error).message } as SweepResult;
        })
        .finally(() => {
          this.running = undefined;
          if (this.again) {
            this.again = false;
            this.scheduled();
          }
        });
    },
  },

  created(this: LifecycleThis) {
    this.opts = lifecycleOptionsFromEnv();
    this.again = false;
    this.stopping = false;
  },

  started(this: LifecycleThis) {
    if (this.opts.intervalSeconds <= 0) return;
    // After the broker has started (the notifier may be a service of this very process).
    setImmediate(() => this.scheduled());
    this.timer = setInterval(() => this.scheduled(), this.opts.intervalSeconds * 1000);
    this.timer.unref();
  },

  async stopped(this: LifecycleThis) {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running;
  },
};

export const lifecycleService = schema as ServiceSchema;
