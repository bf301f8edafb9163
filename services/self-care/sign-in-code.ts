/**
 * Sign-in with a one-time code sent over the chat channel (docs/self-care.md). Six digits, kept
 * only as an HMAC, one live code per subscriber, five minutes, five tries, single use. A request
 * answers the same at once whether the username exists or has a phone: the look-up and the
 * sending happen after the answer, and a failure is logged without the code.
 */
import crypto from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Context } from 'moleculer';
import { derivedKey } from '../../shared/auth/secrets';
import { TryLimiter } from '../../shared/auth/try-limits';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import { loadSettings } from '../../shared/settings';
import { auditFailure, signInLimits, subscriberNamed, tokenFor } from './sign-in';

export const CODE_TTL_SECONDS = 300;
export const CODE_TRIES = 5;

let sendLimiter: TryLimiter | undefined;
/** Code requests per username and address: each sends a message, so each counts and none is given back. */
function sendLimits(): TryLimiter {
  const cfg = config();
  sendLimiter ??= new TryLimiter({
    perName: cfg.loginFailuresPerUsername,
    perAddress: cfg.loginFailuresPerAddress,
    seconds: cfg.loginLockSeconds,
  });
  return sendLimiter;
}

function codeHash(subscriberId: number, code: string): string {
  return crypto.createHmac('sha256', derivedKey('self-care-code')).update(`${subscriberId}:${code}`).digest('hex');
}

/** Six digits, uniform (crypto.randomInt has no modulo bias). */
export function newCode(): string {
  return String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
}

/** Counts the request, then sends in the background; the caller answers at once. */
export async function requestCode(ctx: Ctx<unknown>, username: string): Promise<void> {
  await sendLimits().start(ctx, username);
  void sendCode(ctx, username).catch((err: Error) =>
    ctx.service?.logger.warn(`self-care: sign-in code not sent: ${err.message}`),
  );
}

async function sendCode(ctx: Context<unknown>, username: string): Promise<void> {
  const { rows } = await db().execute<{ id: number; phone: string | null }>(
    sql`select id, phone from subscribers where username = ${username} and deleted_at is null`,
  );
  const sub = rows[0];
  if (!sub?.phone) return;
  const code = newCode();
  await db().execute(sql`
    insert into self_care_codes (subscriber_id, code_hash, tries, expires_at)
    values (${sub.id}, ${codeHash(sub.id, code)}, 0, now() + make_interval(secs => ${CODE_TTL_SECONDS}))
    on conflict (subscriber_id) do update
      set code_hash = excluded.code_hash, tries = 0, expires_at = excluded.expires_at, created_at = now()`);
  const { operator_name: operator } = await loadSettings(db(), ['operator_name']);
  await ctx.call('notifier.sendText', {
    phone: sub.phone,
    text: `${operator}: your sign-in code is ${code}. It expires in ${CODE_TTL_SECONDS / 60} minutes.`,
  });
}

/**
 * Spends one of the code's tries (atomically, so a burst gets no more than five checked), then
 * takes the code away if it matches: two requests with the right code cannot both sign in.
 */
async function consumeCode(subscriberId: number, code: string): Promise<boolean> {
  const { rows } = await db().execute<{ code_hash: string }>(sql`
    update self_care_codes set tries = tries + 1
     where subscriber_id = ${subscriberId} and expires_at > now() and tries < ${CODE_TRIES}
    returning code_hash`);
  const stored = rows[0]?.code_hash;
  if (!stored) return false;
  const given = codeHash(subscriberId, code);
  if (!crypto.timingSafeEqual(Buffer.from(stored), Buffer.from(given))) return false;
  const taken = await db().execute(
    sql`delete from self_care_codes where subscriber_id = ${subscriberId} and code_hash = ${stored}`,
  );
  return (taken.rowCount ?? 0) === 1;
}

export async function codeSignIn(ctx: Ctx<unknown>, username: string, code: string) {
  const attempt = await signInLimits().start(ctx, username);
  const subject = await subscriberNamed(username);
  if (!subject || !/^\d{6}$/.test(code) || !(await consumeCode(subject.id, code))) {
    await auditFailure(ctx, 'self_care.code_failed', username, subject?.id ?? null);
    throw fail('signInCodeRejected');
  }
  await attempt.signedIn();
  return tokenFor(subject);
}
