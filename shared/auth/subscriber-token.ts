/**
 * Self-care tokens (docs/self-care.md): a subscriber's own kind of JWT. It is signed with a key
 * derived from JWT_SECRET under its own label and carries the audience `self-care`, so it never
 * verifies as a manager's token and a manager's never verifies as one. `pv` is a fingerprint of the
 * stored (encrypted) PPPoE password: any password change, the subscriber's or an operator's, ends
 * every token issued before it. `jti` lets one token be revoked (sign-out) through the blacklist.
 */
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';

export const SELF_CARE_AUDIENCE = 'self-care';

export interface SubscriberToken {
  subscriberId: number;
  /** Fingerprint of password_enc at sign-in. */
  passwordVersion: string;
  jti: string;
  exp: number;
}

const keys = new Map<string, crypto.KeyObject>();
function keyFor(jwtSecret: string): crypto.KeyObject {
  let key = keys.get(jwtSecret);
  if (!key) {
    const raw = Buffer.from(crypto.hkdfSync('sha256', jwtSecret, Buffer.alloc(0), 'self-care-token', 32));
    keys.set(jwtSecret, (key = crypto.createSecretKey(raw)));
  }
  return key;
}

/** A short digest of the stored ciphertext: it changes with every password write and reveals nothing. */
export function passwordVersion(passwordEnc: string): string {
  return crypto.createHash('sha256').update(passwordEnc).digest('base64url').slice(0, 22);
}

export function signSubscriberToken(
  subscriberId: number,
  passwordEnc: string,
  jwtSecret: string,
  ttlSeconds: number,
): { token: string; expiresAt: Date } {
  const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
  const claims = { sub: String(subscriberId), pv: passwordVersion(passwordEnc), jti: crypto.randomUUID(), exp };
  const token = jwt.sign(claims, keyFor(jwtSecret), { algorithm: 'HS256', audience: SELF_CARE_AUDIENCE });
  return { token, expiresAt: new Date(exp * 1000) };
}

/** Signature (HS256 only), audience, expiry and the claim shapes; throws otherwise. */
export function verifySubscriberToken(token: string, jwtSecret: string): SubscriberToken {
  const payload = jwt.verify(token, keyFor(jwtSecret), { algorithms: ['HS256'], audience: SELF_CARE_AUDIENCE });
  if (typeof payload !== 'object' || payload === null) throw new Error('malformed token');
  const { sub, pv, jti, exp } = payload as Record<string, unknown>;
  const subscriberId = Number(sub);
  if (!Number.isInteger(subscriberId) || subscriberId <= 0) throw new Error('bad sub claim');
  if (typeof pv !== 'string' || !pv) throw new Error('bad pv claim');
  if (typeof jti !== 'string' || !jti) throw new Error('bad jti claim');
  if (typeof exp !== 'number') throw new Error('token without exp');
  return { subscriberId, passwordVersion: pv, jti, exp };
}
