/**
 * The challenge between a sign-in's password and its second step: a signed token of five
 * minutes naming the manager and its token version (a password change ends a pending challenge).
 * Signed with a key derived from JWT_SECRET for this purpose alone, so it can never pass as an
 * access token, nor an access token as a challenge.
 */
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import { config } from '../../shared/config';

const CHALLENGE_TTL_SECONDS = 300;
const AUDIENCE = 'two-factor-challenge';

function key(): string {
  return crypto.createHmac('sha256', config().jwtSecret).update(AUDIENCE).digest('hex');
}

export function signChallenge(managerId: number, tokenVersion: number): { challenge: string; expiresAt: Date } {
  const exp = Math.floor(Date.now() / 1000) + CHALLENGE_TTL_SECONDS;
  const challenge = jwt.sign({ sub: String(managerId), tv: tokenVersion, aud: AUDIENCE, exp }, key(), {
    algorithm: 'HS256',
  });
  return { challenge, expiresAt: new Date(exp * 1000) };
}

/** The manager and token version a valid, unexpired challenge names; null for anything else. */
export function verifyChallenge(challenge: string): { managerId: number; tokenVersion: number } | null {
  try {
    const payload = jwt.verify(challenge, key(), { algorithms: ['HS256'], audience: AUDIENCE });
    if (typeof payload !== 'object' || payload === null) return null;
    const managerId = Number(payload.sub);
    const tokenVersion = (payload as Record<string, unknown>).tv;
    if (!Number.isInteger(managerId) || managerId <= 0 || !Number.isInteger(tokenVersion)) return null;
    return { managerId, tokenVersion: tokenVersion as number };
  } catch {
    return null;
  }
}
