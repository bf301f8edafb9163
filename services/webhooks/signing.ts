/**
 * The signature of an outgoing webhook (docs/webhooks.md), as Stripe signs its own:
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under the endpoint's
 * secret. The timestamp is signed with the body, so a receiver that refuses old timestamps refuses
 * a replayed request. Pure: no I/O, the same code the doc's receiver snippet follows.
 */
import crypto from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Webhook-Signature';

export function sign(secret: string, timestamp: number, body: string): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${sign(secret, timestamp, body)}`;
}

/** Whether `header` signs `body` under `secret` with a timestamp within `toleranceSeconds` of `now`. */
export function verifySignature(
  header: string,
  body: string,
  secret: string,
  now: number = Math.floor(Date.now() / 1000),
  toleranceSeconds = 300,
): boolean {
  const parts = new Map(header.split(',').map((kv) => kv.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const v1 = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(now - t) > toleranceSeconds || !/^[0-9a-f]{64}$/.test(v1)) return false;
  return crypto.timingSafeEqual(Buffer.from(v1, 'hex'), Buffer.from(sign(secret, t, body), 'hex'));
}

/** A fresh secret: 32 random bytes, prefixed so a leaked one is recognisable. */
export function newSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64url')}`;
}
