/**
 * Card secrets. A PIN is 14 random decimal digits (crypto.randomBytes: nothing about it follows from
 * the serial); the database keeps HMAC-SHA256 of it under a key derived from ENCRYPTION_KEY, which a
 * redemption recomputes to find the card by a unique index. A keyed hash and not bcrypt: a PIN has 46
 * bits, a leaked table without the key is useless, and a 100,000-card batch hashes in a tenth of a second.
 */
import crypto from 'node:crypto';
import { derivedKey } from '../../shared/auth/secrets';

export const PIN_DIGITS = 14;

const key = () => derivedKey('prepaid-card-pins');

/** `count` PINs, distinct among themselves. */
export function newPins(count: number): string[] {
  const out = new Set<string>();
  while (out.size < count) {
    const bytes = crypto.randomBytes(8 * (count - out.size));
    for (let i = 0; i < bytes.length; i += 8) {
      // 64 random bits mod 10^14: the bias (2^64 / 10^14 is not whole) is below 1e-5, harmless here.
      const n = bytes.readBigUInt64BE(i) % 10n ** BigInt(PIN_DIGITS);
      out.add(n.toString().padStart(PIN_DIGITS, '0'));
    }
  }
  return [...out];
}

/** What the subscriber types, with the spaces and dashes of a printed card removed. */
export function normalizePin(typed: string): string {
  return typed.replace(/[\s-]/g, '');
}

export function pinHash(pin: string): string {
  return crypto.createHmac('sha256', key()).update(pin).digest('hex');
}

/** A PIN as printed: groups of four or fewer digits. */
export function printedPin(pin: string): string {
  return pin.replace(/(\d{4})(?=\d)/g, '$1 ');
}
