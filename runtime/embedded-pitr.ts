/**
 * Point-in-time recovery of an embedded PostgreSQL (docs/operations.md, "Point-in-time recovery"),
 * for both starts that run one: `npm start` (runtime/app.ts) and `npm run start:cluster`'s
 * embedded mode (runtime/cluster.ts). With BACKUP_DIR set, the server archives its WAL into
 * BACKUP_DIR/wal and base backups are taken into BACKUP_DIR/base on the backup schedule.
 */
import path from 'node:path';
import { scheduleBaseBackups, type BaseScheduleOptions } from '../shared/backup/base-schedule';
import { keyFingerprint } from '../shared/backup/key';
import type { EmbeddedPostgresHandle } from '../shared/db/database-setup';
import { backupOptionsFromEnv } from '../services/backups/options';

/** Where the embedded server archives its WAL (startEmbeddedPostgres's `walArchive`); none without BACKUP_DIR. */
export function walArchiveDir(env: NodeJS.ProcessEnv): string | undefined {
  return env.BACKUP_DIR ? path.resolve(env.BACKUP_DIR, 'wal') : undefined;
}

/** Starts the base backup schedule when BACKUP_DIR is set; the returned function stops it. */
export function scheduleEmbeddedBaseBackups(
  embedded: EmbeddedPostgresHandle,
  install: { dataDir: string; encryptionKey?: Buffer },
  env: NodeJS.ProcessEnv,
  log: BaseScheduleOptions['log'],
): (() => Promise<void>) | undefined {
  const opts = backupOptionsFromEnv(env);
  if (!opts.dir) return undefined;
  return scheduleBaseBackups({
    url: embedded.adminUrl,
    clusterDir: embedded.clusterDir,
    dataDir: path.resolve(install.dataDir),
    backupDir: opts.dir,
    intervalSeconds: opts.intervalSeconds,
    keep: opts.keep,
    keyFingerprint: install.encryptionKey ? keyFingerprint(install.encryptionKey) : null,
    log,
  });
}
