/**
 * Guesses limited per name and per client address (docs/security.md): past the limit within the
 * window, 429 with Retry-After until the window ends. Kept in the process's memory. Manager
 * sign-ins (services/auth/sign-in-limits.ts) and subscriber sign-ins (services/self-care) each keep
 * their own counters, so a manager and a subscriber of the same name never lock each other out.
 *
 * A try is counted before its password or code is checked and given back when it proves right, so
 * a burst of concurrent guesses gets no more of them checked than the limit (issue 43).
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { fail } from '../failures';
import type { Ctx } from '../http/context';

export interface TryLimits {
  perName: number;
  perAddress: number;
  seconds: number;
}

/** One counted try. */
export interface CountedTry {
  /** Right, but not a finished sign-in: both tries are given back. */
  giveBack(): Promise<void>;
  /** A sign-in finished: the name's count is cleared and the address's try given back. */
  signedIn(): Promise<void>;
}

/** Gives one try back. Not below zero: a window that ended meanwhile must not credit the next one. */
async function refund(limiter: RateLimiterMemory, key: string): Promise<void> {
  const { consumedPoints } = await limiter.reward(key);
  if (consumedPoints < 0) await limiter.penalty(key, -consumedPoints);
}

export class TryLimiter {
  private readonly byName: RateLimiterMemory;
  private readonly byAddress: RateLimiterMemory;

  constructor(limits: TryLimits) {
    this.byName = new RateLimiterMemory({ points: limits.perName, duration: limits.seconds });
    this.byAddress = new RateLimiterMemory({ points: limits.perAddress, duration: limits.seconds });
  }

  /**
   * Counts a try against `name` (lower-cased) and the caller's address, or answers 429 with
   * Retry-After while either is past its limit. RateLimiterMemory counts inside `consume` itself,
   * before its promise settles, so no other request can slip in between the count and its check.
   */
  async start(ctx: Ctx<unknown>, name: string): Promise<CountedTry> {
    const ip = ctx.meta.ip ?? 'unknown';
    const key = name.toLowerCase();
    const [byName, byAddress] = await Promise.allSettled([this.byName.consume(key), this.byAddress.consume(ip)]);
    const refused = [byName, byAddress].flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    const giveBack = async () => {
      await Promise.all([refund(this.byName, key), refund(this.byAddress, ip)]);
    };
    if (refused.length) {
      const other = refused.find((r) => !(r instanceof RateLimiterRes));
      if (other) throw other;
      // A refused try is not checked, so it does not count either.
      await giveBack();
      const waitMs = Math.max(...refused.map((r: RateLimiterRes) => r.msBeforeNext));
      ctx.meta.$responseHeaders = { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) };
      throw fail('loginLocked');
    }
    return {
      giveBack,
      signedIn: async () => {
        await Promise.all([this.byName.delete(key), refund(this.byAddress, ip)]);
      },
    };
  }
}
