import crypto from 'node:crypto';
import { config } from '../config';

/**
 * AES-256-GCM for what must be readable again (subscriber passwords, router and chat credentials).
 * Stored as `v1:<iv>:<tag>:<ciphertext>` in base64url, so a later key or cipher can be told apart.
 */
export function encrypt(plain: string, key: Buffer = requireKey()): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), data]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join(':');
}

export function decrypt(stored: string, key: Buffer = requireKey()): string {
  const [version, iv, tag, data] = stored.split(':');
  if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unknown secret format');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

const derived = new Map<string, Buffer>();

/**
 * A key for one purpose (card PINs, recovery codes, public links), derived from ENCRYPTION_KEY by
 * HKDF-SHA256 under its label, so no two purposes share a key.
 */
export function derivedKey(label: string): Buffer {
  let key = derived.get(label);
  if (!key) {
    key = Buffer.from(crypto.hkdfSync('sha256', requireKey(), Buffer.alloc(0), label, 32));
    derived.set(label, key);
  }
  return key;
}

function requireKey(): Buffer {
  const key = config().encryptionKey;
  if (!key) throw new Error('ENCRYPTION_KEY is not configured');
  return key;
}
