/** Usage service tuning from the environment (documented in docs/freeradius.md). */
import { intVar } from '../../../shared/config';

export interface UsageOptions {
  /** Seconds between two runs of the day/month reset and the FUP engine; 0 = only on call. */
  intervalSeconds: number;
}

export function usageOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): UsageOptions {
  return { intervalSeconds: intVar(env, 'USAGE_INTERVAL_SECONDS', 30, 0) };
}
