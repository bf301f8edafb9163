/**
 * Subscriber sign-in (docs/self-care.md): the PPPoE username and the password the subscriber
 * already has, checked against the stored encrypted one. Tries are counted per username and per
 * address before the check (shared/auth/try-limits.ts), in counters of their own (a manager and a
 * subscriber of one name never lock each other out); a failure is audited without the password.
 */
import crypto from 'node:crypto';
import { recordAuditAs } from '../../shared/audit';
import { signSubscriberToken } from '../../shared/auth/subscriber-token';
import { decrypt, encrypt } from '../../shared/auth/secrets';
import { TryLimiter } from '../../shared/auth/try-limits';
import { config } from '../../shared/config';
import { db, pgPool } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';

let limiter: TryLimiter | undefined;
/** The subscriber sign-in counters: password and code guesses count alike. */
export function signInLimits(): TryLimiter {
  const cfg = config();
  limiter ??= new TryLimiter({
    perName: cfg.loginFailuresPerUsername,
    perAddress: cfg.loginFailuresPerAddress,
    seconds: cfg.loginLockSeconds,
  });
  return limiter;
}

export interface SignInSubject {
  id: number;
  passwordEnc: string;
}

const BY_USERNAME = {
  name: 'self_care_subscriber_by_username',
  text: `select id, password_enc as "passwordEnc" from subscribers where username = $1 and deleted_at is null`,
};

export async function subscriberNamed(username: string): Promise<SignInSubject | null> {
  const { rows } = await pgPool().query<SignInSubject>({ ...BY_USERNAME, values: [username] });
  return rows[0] ?? null;
}

let dummy: string | undefined;

/** Constant-time comparison of the given password with the stored one; an unknown user costs the same. */
export function passwordMatches(given: string, passwordEnc: string | undefined): boolean {
  dummy ??= encrypt(crypto.randomBytes(16).toString('hex'));
  let stored: string;
  try {
    stored = decrypt(passwordEnc ?? dummy);
  } catch {
    return false;
  }
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(stored).digest();
  return crypto.timingSafeEqual(a, b) && passwordEnc !== undefined;
}

/** The answer of a finished sign-in. */
export function tokenFor(subject: SignInSubject): { token: string; expires_at: string; subscriber_id: number } {
  const cfg = config();
  const { token, expiresAt } = signSubscriberToken(
    subject.id,
    subject.passwordEnc,
    cfg.jwtSecret,
    cfg.selfCareTokenTtlSeconds,
  );
  return { token, expires_at: expiresAt.toISOString(), subscriber_id: subject.id };
}

/** The anonymous audit row of a failed try: the username and which proof failed, never the secret. */
export async function auditFailure(
  ctx: Ctx<unknown>,
  action: 'self_care.login_failed' | 'self_care.code_failed',
  username: string,
  subscriberId: number | null,
): Promise<void> {
  await recordAuditAs(
    db(),
    { managerId: null, actorType: 'anonymous', apiKeyId: null, ip: ctx.meta.ip ?? null },
    { action, entity: 'subscriber', entityId: subscriberId, details: { username } },
  );
}

export async function passwordSignIn(ctx: Ctx<unknown>, username: string, password: string) {
  const attempt = await signInLimits().start(ctx, username);
  const subject = await subscriberNamed(username);
  if (!subject || !passwordMatches(password, subject.passwordEnc)) {
    await auditFailure(ctx, 'self_care.login_failed', username, subject?.id ?? null);
    throw fail('badCredentials');
  }
  await attempt.signedIn();
  return tokenFor(subject);
}
