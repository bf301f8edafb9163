/**
 * API keys' text form (docs/security.md): `isk_<lookup>_<secret>`. The prefix tells a key from a
 * JWT (which starts `eyJ`); `lookup` (12 base32 characters) finds the row; only the SHA-256 of the
 * whole key is stored, so the secret is shown once, at creation.
 */
import crypto from 'node:crypto';
import net from 'node:net';

export const API_KEY_PREFIX = 'isk_';
const KEY_FORM = /^isk_([a-z2-7]{12})_([A-Za-z0-9_-]{43})$/;

export function isApiKey(bearer: string): boolean {
  return bearer.startsWith(API_KEY_PREFIX);
}

export function newApiKey(): { key: string; lookup: string; secretHash: string } {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const lookup = Array.from(crypto.randomBytes(12), (b) => alphabet[b & 31]).join('');
  const key = `${API_KEY_PREFIX}${lookup}_${crypto.randomBytes(32).toString('base64url')}`;
  return { key, lookup, secretHash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return crypto.createHash('sha256').update(key).digest('hex');
}

/** The lookup part of a well-formed key, or null. */
export function apiKeyLookup(key: string): string | null {
  return KEY_FORM.exec(key)?.[1] ?? null;
}

/** Constant-time comparison of a presented key with the stored hash. */
export function apiKeyMatches(key: string, secretHash: string): boolean {
  const a = Buffer.from(hashApiKey(key), 'hex');
  const b = Buffer.from(secretHash, 'hex');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** An allow-list entry is an IPv4/IPv6 address or a CIDR block. */
export function isAddressOrCidr(entry: string): boolean {
  const [ip, bits, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const family = net.isIP(ip);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Whether `ip` is in the allow-list (an empty list allows every address). */
export function addressAllowed(list: string[], ip: string): boolean {
  if (list.length === 0) return true;
  const bare = ip.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
  const family = net.isIP(bare) === 6 ? 'ipv6' : 'ipv4';
  const block = new net.BlockList();
  for (const entry of list) {
    const [addr, bits] = entry.split('/');
    const type = net.isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) block.addAddress(addr, type);
    else block.addSubnet(addr, Number(bits), type);
  }
  return net.isIP(bare) !== 0 && block.check(bare, family);
}
