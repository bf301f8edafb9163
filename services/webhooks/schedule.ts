/**
 * When a failed delivery is tried again, and when an endpoint is given up on (docs/webhooks.md).
 * Pure, so the schedule is tested without waiting for it.
 */
export interface RetryPolicy {
  /** Delay after the first failure; doubled after each further one. */
  baseMs: number;
  /** The longest delay between two attempts. */
  maxMs: number;
  /** How long after the event it is still tried (a day). */
  windowMs: number;
  /** Failed attempts in a row, of any of its deliveries, that disable an endpoint. */
  disableAfter: number;
}

/** Milliseconds to wait after the `failedAttempts`-th failure (1-based): base, 2 base, 4 base, ... capped. */
export function retryDelay(policy: RetryPolicy, failedAttempts: number): number {
  const doubled = policy.baseMs * 2 ** Math.min(Math.max(failedAttempts - 1, 0), 40);
  return Math.min(doubled, policy.maxMs);
}

/** The next attempt's time after a failure, or null when it would fall past the delivery's window. */
export function nextAttempt(policy: RetryPolicy, createdAt: Date, failedAttempts: number, now: Date): Date | null {
  const next = new Date(now.getTime() + retryDelay(policy, failedAttempts));
  return next.getTime() > createdAt.getTime() + policy.windowMs ? null : next;
}

/** A 2xx answer is a delivery; anything else (3xx included: redirects are not followed) is a failure. */
export function isDelivered(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300;
}
