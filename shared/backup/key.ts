/**
 * The encryption key in a backup: carried only when sealed with the operator's passphrase
 * (scrypt, then AES-256-GCM), and always named by a fingerprint so a restore can tell whether the
 * key it runs with is the one the data was encrypted under.
 */
import crypto from 'node:crypto';

export interface SealedKey {
  kdf: 'scrypt';
  n: number;
  r: number;
  p: number;
  salt: string;
  iv: string;
  tag: string;
  data: string;
}

const SCRYPT = { n: 1 << 15, r: 8, p: 1 };

export function keyFingerprint(key: Buffer): string {
  return crypto.createHash('sha256').update('isp-billing encryption key\0').update(key).digest('hex').slice(0, 16);
}

function derive(passphrase: string, salt: Buffer, params: { n: number; r: number; p: number }): Buffer {
  return crypto.scryptSync(passphrase, salt, 32, { N: params.n, r: params.r, p: params.p, maxmem: 256 * 1024 * 1024 });
}

export function sealKey(key: Buffer, passphrase: string): SealedKey {
  const salt = crypto.randomBytes(16);
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', derive(passphrase, salt, SCRYPT), iv);
  const data = Buffer.concat([cipher.update(key), cipher.final()]);
  return {
    kdf: 'scrypt',
    ...SCRYPT,
    salt: salt.toString('base64'),
    iv: iv.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    data: data.toString('base64'),
  };
}

/** The key, or an error when the passphrase is not the one it was sealed with. */
export function openKey(sealed: SealedKey, passphrase: string): Buffer {
  const decipher = crypto.createDecipheriv(
    'aes-256-gcm',
    derive(passphrase, Buffer.from(sealed.salt, 'base64'), sealed),
    Buffer.from(sealed.iv, 'base64'),
  );
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]);
  } catch {
    throw new Error('the passphrase does not open the encryption key carried in this backup');
  }
}
