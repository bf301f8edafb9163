/**
 * Failed sign-ins per username and per client address (docs/security.md): past the limit within
 * the window, 429 with Retry-After until the window ends. Kept in each auth process's memory.
 * A wrong password and a wrong two-factor code count alike (docs/two-factor.md), so a stolen
 * password gives no more guesses at the code than a guessed password would.
 *
 * A try is counted before its password or code is checked and given back when it proves right, so
 * a burst of concurrent guesses gets no more of them checked than the limit (issue 43).
 */
import { recordAudit, recordAuditAs } from '../../shared/audit';
import { TryLimiter } from '../../shared/auth/try-limits';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import type { Ctx } from '../../shared/http/context';

let limiter: TryLimiter | undefined;
function limits(): TryLimiter {
  const cfg = config();
  limiter ??= new TryLimiter({
    perName: cfg.loginFailuresPerUsername,
    perAddress: cfg.loginFailuresPerAddress,
    seconds: cfg.loginLockSeconds,
  });
  return limiter;
}

export interface FailedAttempt {
  /** `auth.login_failed` (password) or `auth.two_factor_failed` (a code). */
  action: 'auth.login_failed' | 'auth.two_factor_failed';
  managerId: number | null;
}

/** One counted try: each of its outcomes is reported once. */
export interface SignInTry {
  /**
   * The password or code was wrong: the try stays counted and gets its audit row, anonymous at
   * sign-in, the signed-in caller's when a code was checked for a change to two-factor sign-in.
   */
  failed(attempt: FailedAttempt): Promise<void>;
  /** Right, but not a finished sign-in (a password before its second step, a code for a change). */
  giveBack(): Promise<void>;
  /** A sign-in finished: the username's count is cleared and the address's try given back. */
  signedIn(): Promise<void>;
}

/**
 * Counts a try against `username` (lower-cased) and the caller's address, or answers 429 with
 * Retry-After while either is past its limit. RateLimiterMemory counts inside `consume` itself,
 * before its promise settles, so no other request can slip in between the count and its check.
 */
export async function startTry(ctx: Ctx<unknown>, username: string): Promise<SignInTry> {
  const counted = await limits().start(ctx, username);
  const ip = ctx.meta.ip ?? 'unknown';
  return {
    async failed(attempt) {
      const entry = {
        action: attempt.action,
        entity: 'manager',
        entityId: attempt.managerId,
        details: { username },
      };
      if (ctx.meta.auth) await recordAudit(db(), { ...ctx.meta.auth, ip }, entry);
      else await recordAuditAs(db(), { managerId: null, actorType: 'anonymous', apiKeyId: null, ip }, entry);
    },
    giveBack: counted.giveBack,
    signedIn: counted.signedIn,
  };
}
