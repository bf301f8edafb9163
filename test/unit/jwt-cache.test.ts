/** The gateway's memo of verified tokens must never accept what verifyToken would refuse. */
import jwt from 'jsonwebtoken';
import { cachedVerifier, signToken } from '../../shared/auth/jwt';

const SECRET = 'unit-test-secret';
const subject = { managerId: 7, role: 'admin' as const, resellerId: null, permissions: [] };

afterEach(() => jest.useRealTimers());

it('returns the same claims as a fresh verification, from the memo on a repeat', () => {
  const verify = cachedVerifier(SECRET);
  const { token } = signToken(subject, SECRET, 60);
  const first = verify(token);
  expect(first).toMatchObject({ managerId: 7, role: 'admin', resellerId: null });
  expect(verify(token)).toBe(first);
});

it('refuses a memoised token once it has expired', () => {
  jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
  const verify = cachedVerifier(SECRET);
  const { token } = signToken(subject, SECRET, 60);
  verify(token);
  jest.setSystemTime(new Date('2026-01-01T00:01:01Z'));
  expect(() => verify(token)).toThrow(jwt.TokenExpiredError);
});

it('a token differing from a memoised one only in its signature is verified, and refused', () => {
  const verify = cachedVerifier(SECRET);
  const { token } = signToken(subject, SECRET, 60);
  verify(token);
  const forged = `${token.slice(0, token.lastIndexOf('.') + 1)}${'A'.repeat(43)}`;
  expect(() => verify(forged)).toThrow(jwt.JsonWebTokenError);
});

it('stays within its bound, dropping the oldest entries', () => {
  const verify = cachedVerifier(SECRET, 2);
  const tokens = [1, 2, 3].map((managerId) => signToken({ ...subject, managerId }, SECRET, 60).token);
  const claims = tokens.map((t) => verify(t));
  // The third pushed the first out: verifying it again builds new claims; the third is still memoised.
  expect(verify(tokens[2])).toBe(claims[2]);
  expect(verify(tokens[0])).not.toBe(claims[0]);
  expect(verify(tokens[0])).toEqual(claims[0]);
});
