/** Where an installation's encryption key is: ENCRYPTION_KEY, or the embedded DATA_DIR/encryption.key. */
import fs from 'node:fs';
import path from 'node:path';
import { parseEncryptionKey } from '../config';

export interface KeySource {
  key?: Buffer;
  /** Said to the operator: a path or the variable. */
  location: string;
  /** The file to write a restored key to (embedded only). */
  file?: string;
}

export function installationKey(env: NodeJS.ProcessEnv, dataDir: string): KeySource {
  if (env.ENCRYPTION_KEY) {
    return { key: parseEncryptionKey(env.ENCRYPTION_KEY), location: 'the ENCRYPTION_KEY environment variable' };
  }
  const file = path.resolve(dataDir, 'encryption.key');
  const key = fs.existsSync(file) ? parseEncryptionKey(fs.readFileSync(file, 'utf8').trim()) : undefined;
  return { key, location: file, file };
}

/** BACKUP_PASSPHRASE, or the first line of --passphrase-file; undefined when neither is given. */
export function passphraseFrom(file: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const raw = file !== undefined ? fs.readFileSync(file, 'utf8').split('\n')[0] : env.BACKUP_PASSPHRASE;
  if (raw === undefined) return undefined;
  if (raw.length < 8) throw new Error('the backup passphrase must be at least 8 characters');
  return raw;
}
