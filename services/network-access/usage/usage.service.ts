/**
 * Usage and fair use (network-access unit). Accounting's octets and session changes wait in
 * `usage_deltas` (the radacct trigger, migration 0032); this service rolls them up into counters,
 * daily usage and the online state every USAGE_ROLLUP_SECONDS, and runs, every
 * USAGE_INTERVAL_SECONDS and on call, the reset of counters at day and month boundaries for
 * subscribers without traffic, the FUP engine (a rule in TypeScript, applied with RADIUS rows and an
 * outbox event), the stale-session sweep and the history purge. `usage.run` is for operators'
 * scripts and tests; it has no HTTP route.
 */
import type { Context, ServiceSchema } from 'moleculer';
import { closeStaleSessions } from '../../../shared/access/stale-sessions';
import { rollupUsage } from '../../../shared/access/usage-rollup';
import { db } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import { resetCountersBefore } from './counters';
import { evaluatePending } from './fup-engine';
import { usageOptionsFromEnv, type UsageOptions } from './options';
import { purgeAccountingHistory } from './retention';

export interface UsageRunResult {
  today: string;
  reset: number;
  evaluated: number;
  changed: number;
  /** Open sessions closed as Stale-Session (no update for 2 x accounting_interim_minutes + 1). */
  stale_closed: number;
  /** Closed sessions older than accounting_retention_months deleted by this run (bounded per run). */
  history_deleted: number;
}

const isIsoDate = (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`));

/** `today` defaults to the database's UTC date (the clock the radacct trigger dates deltas by). */
export async function runUsage(today?: string): Promise<UsageRunResult> {
  // The FUP engine and the resets read the counters: what accounting heard so far goes in first.
  await rollupUsage(db());
  const boundary = await resetCountersBefore(db(), today);
  const { evaluated, changed } = await evaluatePending(db());
  // Ghost sessions: closing them moves is_online (it rolls usage up), and is cheap: an indexed probe of
  // the open sessions. Here rather than in a timer of its own: the same cadence, one run at a time.
  const stale = await closeStaleSessions(db());
  // Last: a backlog of history (the first run after the setting was lowered) delays nothing above.
  const history = await purgeAccountingHistory(db(), boundary.today);
  return { ...boundary, evaluated, changed, stale_closed: stale.length, history_deleted: history.deleted };
}

/**
 * `fn` every `seconds`, one run at a time (a tick while the last run goes on is skipped); `stop`
 * ends the timer and waits for the run in progress.
 */
function every(seconds: number, fn: () => Promise<unknown>, onError: (err: unknown) => void, now = false) {
  let running: Promise<unknown> | undefined;
  const tick = () => {
    if (running) return;
    running = Promise.resolve()
      .then(fn)
      .catch(onError)
      .finally(() => {
        running = undefined;
      });
  };
  if (now) tick();
  const timer = setInterval(tick, seconds * 1000);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/**
 * Options default to the environment as it is when the service starts. The timers belong to the
 * service instance, not to this schema: every broker of a process (a test cluster) creates its own
 * instance from the one schema.
 */
export function createUsageService(given?: UsageOptions): ServiceSchema {
  const loops = new WeakMap<object, Array<() => Promise<void>>>();
  return {
    name: 'usage',
    actions: {
      /** Callable through the broker (not routed); `today` lets a script or test act as a later day. */
      run: {
        visibility: 'public',
        async handler(ctx: Context<{ today?: string }>): Promise<UsageRunResult> {
          const { today } = ctx.params;
          if (today !== undefined && !isIsoDate(today)) throw fail('todayInvalid');
          return runUsage(today);
        },
      },
    },
    events: {
      /** Usage or quota moved outside accounting (topup-data): evaluate now, not at the next tick. */
      'usage.pending'() {
        void evaluatePending(db()).catch((err) => this.logger.error('usage evaluation failed', err));
      },
    },
    started() {
      const options = given ?? usageOptionsFromEnv();
      const stops: Array<() => Promise<void>> = [];
      if (options.rollupSeconds > 0)
        stops.push(
          every(
            options.rollupSeconds,
            () => rollupUsage(db()),
            (err) => this.logger.error('usage rollup failed', err),
          ),
        );
      // One run at a time per process; other instances are kept apart by row locks.
      if (options.intervalSeconds > 0)
        stops.push(every(options.intervalSeconds, runUsage, (err) => this.logger.error('usage run failed', err), true));
      loops.set(this, stops);
    },
    async stopped() {
      await Promise.all((loops.get(this) ?? []).map((stop) => stop()));
      loops.delete(this);
    },
  };
}
