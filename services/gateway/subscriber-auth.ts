/**
 * The self-care token check (docs/self-care.md). A subscriber token is verified with its own key
 * and audience (shared/auth/subscriber-token.ts), then against the subscriber's row as it is now:
 * a deleted subscriber, or a password changed since sign-in (by anyone), ends it. One prepared
 * primary-key read per request and no cache, so a password change takes effect on the next request.
 */
import type { SubscriberCaller } from '../../shared/http/context';
import { passwordVersion, verifySubscriberToken } from '../../shared/auth/subscriber-token';
import { pgPool } from '../../shared/db/client';
import { fail } from '../../shared/failures';

const SUBSCRIBER = {
  name: 'gateway_subscriber_identity',
  text: 'select password_enc from subscribers where id = $1 and deleted_at is null',
};

export async function authenticateSubscriber(
  header: string | string[] | undefined,
  jwtSecret: string,
  revoked: (jti: string) => boolean,
): Promise<SubscriberCaller> {
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  if (!match) throw fail('bearerMissing');
  let token;
  try {
    token = verifySubscriberToken(match[1], jwtSecret);
  } catch (err) {
    throw fail((err as Error).name === 'TokenExpiredError' ? 'tokenExpired' : 'tokenInvalid');
  }
  if (revoked(token.jti)) throw fail('tokenRevoked');
  const { rows } = await pgPool().query<{ password_enc: string }>({ ...SUBSCRIBER, values: [token.subscriberId] });
  if (!rows[0] || passwordVersion(rows[0].password_enc) !== token.passwordVersion) throw fail('tokenRevoked');
  return { subscriberId: token.subscriberId, jti: token.jti, exp: token.exp };
}
