/**
 * The embedded mode's backup before pending migrations touch a database with data
 * (shared/backup/before-migrations.ts), for both starts that own an embedded server: `npm start`
 * (runtime/app.ts) and `npm run start:cluster` (runtime/cluster.ts). UPGRADE_BACKUP=off skips it.
 */
import path from 'node:path';
import { backupBeforeMigrations } from '../shared/backup/before-migrations';

export async function backupBeforeUpgrade(
  install: { dataDir: string; encryptionKey: Buffer },
  url: string,
  env: NodeJS.ProcessEnv,
  log: (msg: string) => void,
): Promise<void> {
  if (env.UPGRADE_BACKUP === 'off') return;
  await backupBeforeMigrations({
    url,
    dir: env.BACKUP_DIR ? path.resolve(env.BACKUP_DIR) : path.resolve(install.dataDir, 'backups'),
    key: install.encryptionKey,
    keyLocation: env.ENCRYPTION_KEY
      ? 'the ENCRYPTION_KEY environment variable'
      : path.resolve(install.dataDir, 'encryption.key'),
    passphrase: env.BACKUP_PASSPHRASE || undefined,
    log,
  });
}
