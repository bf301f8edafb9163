/**
 * Recovery codes: ten random codes of 10 characters (50 bits each), shown once. Kept as
 * HMAC-SHA256 under a key derived from ENCRYPTION_KEY, as the prepaid cards' PINs are: the
 * database alone does not let anyone test guesses offline, and a code is found by its hash in one
 * indexed statement (a slow hash such as bcrypt would need one comparison per stored code).
 */
import crypto from 'node:crypto';
import { derivedKey } from '../../shared/auth/secrets';

export const RECOVERY_CODE_COUNT = 10;
// Crockford's base32: no I, L, O or U to misread.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

const key = () => derivedKey('two-factor-recovery-codes');

/** Codes as shown: `xxxxx-xxxxx`. */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const chars = Array.from({ length: 10 }, () => ALPHABET[crypto.randomInt(ALPHABET.length)]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** What is hashed: the code without spaces or dashes, in lower case (typed as printed or not). */
export function recoveryCodeHash(typed: string): string {
  const code = typed.replace(/[\s-]/g, '').toLowerCase();
  return crypto.createHmac('sha256', key()).update(code).digest('hex');
}
