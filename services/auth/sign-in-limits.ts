/**
 * Failed sign-ins per username and per client address (docs/security.md): past the limit within
 * the window, 429 with Retry-After until the window ends. Kept in each auth process's memory.
 * A wrong password and a wrong two-factor code count alike (docs/two-factor.md), so a stolen
 * password gives no more guesses at the code than a guessed password would.
 */
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { recordAudit, recordAuditAs } from '../../shared/audit';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';

let limiters: { username: RateLimiterMemory; address: RateLimiterMemory } | undefined;
function limits() {
  const cfg = config();
  limiters ??= {
    username: new RateLimiterMemory({ points: cfg.loginFailuresPerUsername, duration: cfg.loginLockSeconds }),
    address: new RateLimiterMemory({ points: cfg.loginFailuresPerAddress, duration: cfg.loginLockSeconds }),
  };
  return limiters;
}

/** 429 with Retry-After while the username (lower-cased) or the address is over its limit. */
export async function refuseWhileLocked(ctx: Ctx<unknown>, username: string, ip: string): Promise<void> {
  const l = limits();
  const [byName, byAddress] = await Promise.all([l.username.get(username), l.address.get(ip)]);
  const locked = [
    [byName, l.username.points],
    [byAddress, l.address.points],
  ] as const;
  const waitMs = Math.max(
    0,
    ...locked.filter(([r, max]) => r && r.consumedPoints >= max).map(([r]) => r!.msBeforeNext),
  );
  if (waitMs > 0) {
    ctx.meta.$responseHeaders = { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) };
    throw fail('loginLocked');
  }
}

export interface FailedAttempt {
  /** `auth.login_failed` (password) or `auth.two_factor_failed` (a code). */
  action: 'auth.login_failed' | 'auth.two_factor_failed';
  username: string;
  managerId: number | null;
}

/**
 * Counts the failure against the username and the address, and appends its audit row: anonymous
 * at sign-in, the signed-in caller when a code is checked for a change to two-factor sign-in.
 */
export async function countFailure(ctx: Ctx<unknown>, attempt: FailedAttempt): Promise<void> {
  const ip = ctx.meta.ip ?? 'unknown';
  await Promise.all([limits().username.penalty(attempt.username.toLowerCase()), limits().address.penalty(ip)]);
  const entry = {
    action: attempt.action,
    entity: 'manager',
    entityId: attempt.managerId,
    details: { username: attempt.username },
  };
  if (ctx.meta.auth) await recordAudit(db(), { ...ctx.meta.auth, ip }, entry);
  else await recordAuditAs(db(), { managerId: null, actorType: 'anonymous', apiKeyId: null, ip }, entry);
}

/** A sign-in that succeeded in full clears its username's count. */
export async function clearUsername(username: string): Promise<void> {
  await limits().username.delete(username.toLowerCase());
}
