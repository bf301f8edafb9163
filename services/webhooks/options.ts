/** The delivery worker's limits, from the environment (docs/webhooks.md lists them). */
import { intVar } from '../../shared/config';
import type { RetryPolicy } from './schedule';

export interface WebhookOptions extends RetryPolicy {
  timeoutMs: number;
  /** Largest body sent, and the most of an answer read (the rest is dropped). */
  maxBodyBytes: number;
  pollMs: number;
  /** Deliveries sent at once by one worker. */
  concurrency: number;
  /** Days a succeeded or failed delivery stays in the log (0: for ever). */
  retentionDays: number;
}

export function webhookOptions(env: NodeJS.ProcessEnv = process.env): WebhookOptions {
  return {
    timeoutMs: intVar(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
    maxBodyBytes: intVar(env, 'WEBHOOK_MAX_BODY_BYTES', 65_536, 1024),
    pollMs: intVar(env, 'WEBHOOK_POLL_MS', 5000, 50),
    concurrency: intVar(env, 'WEBHOOK_CONCURRENCY', 10, 1),
    baseMs: intVar(env, 'WEBHOOK_RETRY_BASE_MS', 30_000, 1),
    maxMs: intVar(env, 'WEBHOOK_RETRY_MAX_MS', 3_600_000, 1),
    windowMs: intVar(env, 'WEBHOOK_RETRY_WINDOW_MS', 86_400_000, 1),
    disableAfter: intVar(env, 'WEBHOOK_DISABLE_AFTER', 20, 1),
    retentionDays: intVar(env, 'WEBHOOK_RETENTION_DAYS', 30, 0),
  };
}
