import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import { ROLES, type Auth, type Role } from './claims';

/**
 * What a token says of its manager. Role, reseller and permissions are there for clients (the
 * console shows what the bearer may do); the gateway takes them from the manager's row as it is
 * now. `tokenVersion` is the row's token_version at login: a password change raises it, ending
 * every older token.
 */
export interface TokenSubject {
  managerId: number;
  role: Role;
  resellerId: number | null;
  permissions: string[];
  tokenVersion?: number;
  /** How the sign-in was proved (RFC 8176 names): `['pwd']`, or `['pwd', 'otp']` after a second step. */
  amr?: string[];
  /** Issued to set up two-factor sign-in only (docs/two-factor.md). */
  enrolOnly?: boolean;
}

/** A verified token: the claims of Auth, plus the token version it was issued under. */
export interface VerifiedToken extends Auth {
  tokenVersion: number;
}

export function signToken(
  subject: TokenSubject,
  secret: string,
  ttlSeconds: number,
): { token: string; expiresAt: Date } {
  const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
  const claims: Record<string, unknown> = {
    sub: String(subject.managerId),
    role: subject.role,
    permissions: subject.permissions,
    tv: subject.tokenVersion ?? 0,
    jti: crypto.randomUUID(),
    exp,
  };
  if (subject.resellerId !== null) claims.reseller_id = subject.resellerId;
  if (subject.amr) claims.amr = subject.amr;
  if (subject.enrolOnly) claims.enrol_only = true;
  return { token: jwt.sign(claims, secret, { algorithm: 'HS256' }), expiresAt: new Date(exp * 1000) };
}

// jsonwebtoken first tries a string secret as a PEM public key (createPublicKey throws, ~5 ms per
// verify); a secret KeyObject skips that, so the key is built once per secret.
const secretKeys = new Map<string, crypto.KeyObject>();
function secretKey(secret: string): crypto.KeyObject {
  let key = secretKeys.get(secret);
  if (!key) secretKeys.set(secret, (key = crypto.createSecretKey(Buffer.from(secret, 'utf8'))));
  return key;
}

/** Verifies signature (HS256 only, so `alg: none` is refused), expiry and the claim shapes. */
export function verifyToken(token: string, secret: string): VerifiedToken {
  const payload = jwt.verify(token, secretKey(secret), { algorithms: ['HS256'] });
  if (typeof payload !== 'object' || payload === null) throw new Error('malformed token');
  const {
    sub,
    role,
    reseller_id: resellerId,
    permissions,
    jti,
    exp,
    tv,
    amr,
    enrol_only: enrolOnly,
    aud,
  } = payload as Record<string, unknown>;
  // A token with an audience is another kind (a subscriber's self-care token): never a manager's.
  if (aud !== undefined) throw new Error('token of another audience');
  const managerId = Number(sub);
  if (!Number.isInteger(managerId) || managerId <= 0) throw new Error('bad sub claim');
  if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role)) throw new Error('bad role claim');
  if (resellerId !== undefined && resellerId !== null && !Number.isInteger(resellerId))
    throw new Error('bad reseller_id claim');
  if (role === 'reseller' && !Number.isInteger(resellerId)) throw new Error('reseller token without reseller_id');
  if (!Array.isArray(permissions) || !permissions.every((p) => typeof p === 'string'))
    throw new Error('bad permissions claim');
  if (typeof jti !== 'string' || !jti) throw new Error('bad jti claim');
  if (typeof exp !== 'number') throw new Error('token without exp');
  if (tv !== undefined && !Number.isInteger(tv)) throw new Error('bad tv claim');
  if (amr !== undefined && !(Array.isArray(amr) && amr.every((m) => typeof m === 'string')))
    throw new Error('bad amr claim');
  if (enrolOnly !== undefined && enrolOnly !== true) throw new Error('bad enrol_only claim');
  return {
    managerId,
    role: role as Role,
    resellerId: Number.isInteger(resellerId) ? (resellerId as number) : null,
    permissions: permissions as string[],
    jti,
    exp,
    tokenVersion: (tv as number | undefined) ?? 0,
    ...(amr ? { amr: amr as string[] } : {}),
    ...(enrolOnly ? { enrolOnly: true } : {}),
  };
}

/**
 * verifyToken with a bounded memo of tokens already verified (about 24 µs of HMAC and JSON per
 * request saved). Keyed by the whole token, signature included, so only a token that verified
 * before can hit; expiry is re-checked on every hit, and revocation stays the caller's check.
 */
export function cachedVerifier(secret: string, maxEntries = 10_000): (token: string) => VerifiedToken {
  const verified = new Map<string, VerifiedToken>();
  return (token) => {
    const hit = verified.get(token);
    if (hit) {
      if (hit.exp * 1000 > Date.now()) return hit;
      verified.delete(token);
    }
    const auth = verifyToken(token, secret);
    // Oldest first out: a Map iterates in insertion order.
    if (verified.size >= maxEntries) verified.delete(verified.keys().next().value as string);
    verified.set(token, auth);
    return auth;
  };
}
