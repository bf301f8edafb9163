/** Lifecycle sweep tuning from the environment (README's configuration table, docs/lifecycle.md). */
import { intVar } from '../../../shared/config';

export interface LifecycleOptions {
  /** Seconds between sweeps of this process; 0: no sweep on its own (only `settings.changed` and the action). */
  intervalSeconds: number;
  /** Ids per transaction. */
  batchSize: number;
  /** Reminders sent at once (each a call to the notifier, which waits on the provider). */
  sendConcurrency: number;
}

export function lifecycleOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): LifecycleOptions {
  return {
    intervalSeconds: intVar(env, 'LIFECYCLE_INTERVAL_SECONDS', 60),
    batchSize: intVar(env, 'LIFECYCLE_BATCH_SIZE', 500, 1),
    sendConcurrency: intVar(env, 'LIFECYCLE_SEND_CONCURRENCY', 8, 1),
  };
}
