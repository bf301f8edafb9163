/** Scheduled backups from the environment (README's configuration table, docs/operations.md). */
import path from 'node:path';
import { intVar } from '../../shared/config';

export interface BackupScheduleOptions {
  /** Where backups are written and listed from; unset: no scheduled backups. */
  dir?: string;
  /** Seconds between backups of the installation (one replica at a time); 0: none on their own. */
  intervalSeconds: number;
  /** Backups kept in `dir`; older ones are deleted after each successful backup. */
  keep: number;
  /** Chat recipient (phone or chat id) told of a failed backup, through the configured chat provider. */
  alertTo?: string;
  /** Seals the encryption key into each backup (BACKUP_PASSPHRASE). */
  passphrase?: string;
}

export function backupOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): BackupScheduleOptions {
  return {
    dir: env.BACKUP_DIR ? path.resolve(env.BACKUP_DIR) : undefined,
    intervalSeconds: intVar(env, 'BACKUP_INTERVAL_SECONDS', 86_400),
    keep: intVar(env, 'BACKUP_KEEP', 7, 1),
    alertTo: env.BACKUP_ALERT_TO || undefined,
    passphrase: env.BACKUP_PASSPHRASE || undefined,
  };
}
