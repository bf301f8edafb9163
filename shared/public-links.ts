/**
 * Public receipt links (ARCHITECTURE section 6): `/api/invoices/public/:id?token=...`.
 * The token is HMAC-SHA256(key, invoice id, nonce): 256 unguessable bits that the server can
 * re-derive to show `public_url`, while the database holds only the nonce and the token's hash
 * (a leaked database row yields no working link without the key). Rotating = a new nonce.
 */
import crypto from 'node:crypto';
import { derivedKey } from './auth/secrets';
import { config } from './config';

const key = () => derivedKey('public-invoice-links');

export function newPublicNonce(): string {
  return crypto.randomBytes(16).toString('base64url');
}

export function publicToken(invoiceId: number, nonce: string): string {
  return crypto.createHmac('sha256', key()).update(`invoice:${invoiceId}:${nonce}`).digest('base64url');
}

export function publicTokenHash(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** Columns to store for a new or rotated link. */
export function newPublicLink(invoiceId: number): { publicTokenNonce: string; publicTokenHash: string } {
  const nonce = newPublicNonce();
  return { publicTokenNonce: nonce, publicTokenHash: publicTokenHash(publicToken(invoiceId, nonce)) };
}

export function publicUrl(invoiceId: number, nonce: string): string {
  return `${config().publicBaseUrl}/api/invoices/public/${invoiceId}?token=${publicToken(invoiceId, nonce)}`;
}

/** Constant-time check of a presented token against the stored hash. */
export function verifyPublicToken(storedHash: string | null, presented: string | undefined): boolean {
  if (!storedHash || !presented) return false;
  const a = Buffer.from(publicTokenHash(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
