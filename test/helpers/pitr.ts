/** Steps the point-in-time recovery tests share: the base backup, the archived segment, the restore to T. */
import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { BaseBackupInfo } from '../../shared/backup/wal-archive';
import { runCli, type CliResult } from './backup';
import { waitFor } from './wait';

interface Queryable {
  query<R extends pg.QueryResultRow>(text: string): Promise<pg.QueryResult<R>>;
}

/** The base backup a start takes on its own, once complete (its base.json written): WAL alone recovers nothing. */
export function waitForBaseBackup(backupDir: string): Promise<BaseBackupInfo> {
  return waitFor(
    'the base backup',
    () => {
      const dir = path.join(backupDir, 'base');
      const name = fs.existsSync(dir) ? fs.readdirSync(dir).find((n) => /^base-\d{8}T\d{6}Z$/.test(n)) : undefined;
      const file = name && path.join(dir, name, 'base.json');
      return file && fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as BaseBackupInfo) : undefined;
    },
    120_000,
    250,
  );
}

/** Closes the WAL segment holding what was written so far and waits until it is archived (as archive_timeout would within a minute). */
export async function archiveCurrentSegment(db: Queryable): Promise<void> {
  const { rows } = await db.query<{ wal: string }>('select pg_walfile_name(pg_switch_wal()) as wal');
  await waitFor(
    'the archiver',
    async () => {
      const { rows: st } = await db.query<{ last: string | null }>(
        'select last_archived_wal as last from pg_stat_archiver',
      );
      return !!st[0].last && st[0].last >= rows[0].wal;
    },
    120_000,
    250,
  );
}

/** `restore --pitr --to target` into `dataDir`: it must say it recovered to T and print the ledger as it was at T. */
export async function expectRecoveredTo(
  backupDir: string,
  dataDir: string,
  target: Date,
  atT: Record<string, string>,
): Promise<CliResult> {
  const restored = await runCli('restore', ['--pitr', '--to', target.toISOString()], {
    DATA_DIR: dataDir,
    BACKUP_DIR: backupDir,
  });
  expect([restored.status, restored.stderr]).toEqual([
    0,
    expect.stringContaining(`recovered to ${target.toISOString()}`),
  ]);
  expect(restored.stderr).not.toContain('!!!');
  for (const [key, value] of Object.entries(atT)) expect(restored.stdout).toContain(`ledger ${key}: ${value}\n`);
  return restored;
}
