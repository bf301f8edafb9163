/**
 * The embedded mode's safety net for upgrades: before migrations run on a database that holds
 * data and has migrations pending, a backup is written (BACKUP_DIR, else DATA_DIR/backups). The
 * way back from a failed or unwanted upgrade is the previous release restored from it
 * (docs/operations.md, "Rolling back an upgrade"). A failed backup stops the start: migrating
 * without the way back is not done silently.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createBackup } from './backup';
import { codeLevel, databaseLevel } from './migration-level';

export interface BeforeMigrationsOptions {
  url: string;
  dir: string;
  key: Buffer;
  keyLocation: string;
  passphrase?: string;
  log(msg: string): void;
}

/** Holds data: a manager, a subscriber or a ledger row (a fresh install has none before its first start). */
async function holdsData(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ yes: boolean }>(
    `select exists (select 1 from managers) or exists (select 1 from subscribers) or exists (select 1 from transactions) as yes`,
  );
  return rows[0].yes;
}

/** The file written, or undefined when nothing is pending or there is nothing to lose. */
export async function backupBeforeMigrations(opts: BeforeMigrationsOptions): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: opts.url });
  await client.connect();
  let from;
  try {
    from = await databaseLevel(client);
    if (from.count === 0 || from.when >= codeLevel().when || !(await holdsData(client))) return undefined;
  } finally {
    await client.end();
  }
  const to = codeLevel();
  fs.mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  const stamp = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const file = path.join(opts.dir, `before-${to.tag}-${stamp}.backup`);
  opts.log(`migrations pending (${from.tag} -> ${to.tag}): backing up first to ${file}`);
  try {
    await createBackup({
      url: opts.url,
      out: file,
      key: opts.key,
      keyLocation: opts.keyLocation,
      passphrase: opts.passphrase,
    });
  } catch (err) {
    throw new Error(
      `the backup before migrating failed (${(err as Error).message}): nothing was migrated; free space or fix ${opts.dir}, or set UPGRADE_BACKUP=off to migrate without one`,
      { cause: err },
    );
  }
  opts.log(
    `backup before migrating written: ${file}; to roll back, restore it with the previous release (docs/operations.md)`,
  );
  return file;
}
