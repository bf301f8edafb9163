/** Usage service tuning from the environment (documented in docs/freeradius.md). */
import { intVar } from '../../../shared/config';

export interface UsageOptions {
  /** Seconds between two runs of the day/month reset and the FUP engine; 0 = only on call. */
  intervalSeconds: number;
  /** Seconds between two usage rollups (accounting's deltas into counters and online state); 0 = only within runs. */
  rollupSeconds: number;
}

export function usageOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): UsageOptions {
  return {
    intervalSeconds: intVar(env, 'USAGE_INTERVAL_SECONDS', 30, 0),
    rollupSeconds: intVar(env, 'USAGE_ROLLUP_SECONDS', 5, 0),
  };
}
