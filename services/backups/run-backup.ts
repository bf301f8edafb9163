/** One scheduled backup into the backup folder, then retention; the caller holds the installation's lock. */
import fs from 'node:fs';
import path from 'node:path';
import { createBackup } from '../../shared/backup/backup';
import type { Manifest } from '../../shared/backup/file-format';
import { config, parseEncryptionKey } from '../../shared/config';
import { resolveUrl } from '../../shared/db/hosts';
import type { BackupScheduleOptions } from './options';
import { backupFileName, beyondRetention } from './retention';

export interface BackupDone {
  file: string;
  manifest: Manifest;
  deleted: string[];
}

/** Where the running installation's key came from: its DATA_DIR file when it is that key, else the variable. */
function keyLocation(key: Buffer): string {
  const file = path.resolve(config().dataDir, 'encryption.key');
  try {
    if (parseEncryptionKey(fs.readFileSync(file, 'utf8').trim()).equals(key)) return file;
  } catch {
    // No file: the key came from the environment.
  }
  return 'the ENCRYPTION_KEY environment variable';
}

export async function runScheduledBackup(opts: BackupScheduleOptions & { dir: string }): Promise<BackupDone> {
  const cfg = config();
  if (!cfg.databaseUrl || !cfg.encryptionKey)
    throw new Error('the database URL and encryption key are not resolved yet');
  fs.mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const file = path.join(opts.dir, backupFileName(new Date()));
  const manifest = await createBackup({
    url: await resolveUrl(cfg.databaseUrl),
    out: file,
    key: cfg.encryptionKey,
    keyLocation: keyLocation(cfg.encryptionKey),
    passphrase: opts.passphrase,
  });
  const deleted = beyondRetention(fs.readdirSync(opts.dir), opts.keep);
  for (const name of deleted) fs.rmSync(path.join(opts.dir, name), { force: true });
  return { file, manifest, deleted };
}
