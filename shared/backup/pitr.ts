/**
 * Point-in-time recovery of the embedded cluster (docs/operations.md): the newest base backup that
 * finished before the target time is copied into a new DATA_DIR, told to replay the archived WAL
 * up to that time (recovery_target_time, restore_command) and promote; the server is started on it
 * until it has, the recovery settings are reset, and the figures of the recovered database read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { withClientAt } from '../db/client-at';
import { prepareClusterDir, restoreCommand, startEmbeddedPostgres } from '../db/database-setup';
import { listBaseBackups } from './base-backup';
import { appTables, ledgerTotals, rowCounts } from './facts';
import { baseFor, type BaseBackupInfo } from './wal-archive';

export interface RecoveryOptions {
  dataDir: string;
  backupDir: string;
  target: Date;
  /** Move a cluster already in DATA_DIR aside (kept as pg.replaced-<ms>) instead of refusing. */
  force: boolean;
  /** How long the replay may take before we give up (it goes on in the server's log). */
  timeoutMs?: number;
}

export interface RecoveryResult {
  base: BaseBackupInfo;
  /** The server's own line on where it stopped ("recovery stopping before commit of ..."), if any. */
  stoppedAt: string | null;
  seconds: number;
  rows: Record<string, number>;
  ledger: Record<string, string>;
}

/** A value for postgresql.auto.conf: single quotes doubled. */
function confValue(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function chownTree(dir: string, user: { uid: number; gid: number }): void {
  fs.chownSync(dir, user.uid, user.gid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, user);
    else fs.chownSync(p, user.uid, user.gid);
  }
}

/** Why the server stopped replaying, from its log: the fatal line when it gave up. */
function logLines(clusterDir: string, pattern: RegExp): string[] {
  const log = path.join(clusterDir, 'server.log');
  if (!fs.existsSync(log)) return [];
  return fs
    .readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => pattern.test(l))
    .map((l) => l.replace(/^.*?(LOG|FATAL|PANIC):\s+/, ''));
}

function existingCluster(dataDir: string): string | undefined {
  const link = path.join(dataDir, 'pg');
  return fs.existsSync(path.join(link, 'PG_VERSION')) ? link : undefined;
}

export async function recoverToTime(opts: RecoveryOptions): Promise<RecoveryResult> {
  const began = Date.now();
  const dataDir = path.resolve(opts.dataDir);
  const walDir = path.join(path.resolve(opts.backupDir), 'wal');
  const bases = listBaseBackups(path.resolve(opts.backupDir));
  if (bases.length === 0) throw new Error(`no base backup in ${path.join(opts.backupDir, 'base')}`);
  const base = baseFor(bases, opts.target);
  if (!base)
    throw new Error(
      `no base backup had finished by ${opts.target.toISOString()}: the oldest finished at ${bases[0].stop_time}`,
    );
  if (!fs.existsSync(walDir)) throw new Error(`no WAL archive at ${walDir}`);

  const existing = existingCluster(dataDir);
  if (existing) {
    if (!opts.force) throw new Error(`${dataDir} already holds a database: give an empty DATA_DIR, or --force`);
    fs.renameSync(existing, `${existing}.replaced-${Date.now()}`);
  }
  const { clusterDir, user } = await prepareClusterDir(dataDir);
  const from = path.join(path.resolve(opts.backupDir), 'base', base.name);
  for (const name of fs.readdirSync(from)) {
    if (name === 'base.json' || name === 'pg-password') continue;
    fs.cpSync(path.join(from, name), path.join(clusterDir, name), { recursive: true });
  }
  const password = path.join(dataDir, 'pg-password');
  if (fs.existsSync(password)) fs.renameSync(password, `${password}.replaced-${Date.now()}`);
  fs.copyFileSync(path.join(from, 'pg-password'), password);
  fs.chmodSync(password, 0o600);
  fs.writeFileSync(path.join(clusterDir, 'recovery.signal'), '');
  fs.appendFileSync(
    path.join(clusterDir, 'postgresql.auto.conf'),
    [
      `restore_command = ${confValue(await restoreCommand(walDir))}`,
      // PostgreSQL reads '2026-11-28 22:50:00.123+00', not ISO 8601's T and Z.
      `recovery_target_time = ${confValue(opts.target.toISOString().replace('T', ' ').replace('Z', '+00'))}`,
      "recovery_target_action = 'promote'",
      '',
    ].join('\n'),
  );
  if (user) chownTree(clusterDir, user);

  const pg = await startEmbeddedPostgres({ dataDir, log: () => undefined });
  try {
    const deadline = Date.now() + (opts.timeoutMs ?? 3_600_000);
    for (;;) {
      const inRecovery = await query<{ r: boolean }>(pg.adminUrl, 'select pg_is_in_recovery() as r').catch(
        () => undefined,
      );
      if (inRecovery && !inRecovery[0].r) break;
      if (!inRecovery && !fs.existsSync(path.join(clusterDir, 'postmaster.pid'))) {
        const fatal = logLines(clusterDir, /FATAL|PANIC/).pop();
        throw new Error(
          `recovery failed: ${fatal ?? 'the server stopped (see its log)'} (log: ${clusterDir}/server.log)`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`recovery still replaying after the timeout (log: ${clusterDir}/server.log)`);
      await new Promise((r) => setTimeout(r, 200));
    }
    // Promoted: the recovery settings would only confuse a later look at the configuration.
    await query(pg.adminUrl, 'alter system reset restore_command');
    await query(pg.adminUrl, 'alter system reset recovery_target_time');
    await query(pg.adminUrl, 'alter system reset recovery_target_action');
    return await withClientAt(pg.url, async (client) => {
      await client.query('begin isolation level repeatable read read only');
      const tables = await appTables(client);
      const rows = await rowCounts(client, tables);
      // A database never migrated (recovered to before the first start's migrations) has no ledger.
      const ledger = tables.includes('transactions') ? await ledgerTotals(client) : {};
      await client.query('commit');
      return {
        base,
        stoppedAt: logLines(clusterDir, /recovery stopping|last completed transaction/).join('; ') || null,
        seconds: (Date.now() - began) / 1000,
        rows,
        ledger,
      };
    });
  } finally {
    await pg.stop();
  }
}

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  return withClientAt(url, async (client) => (await client.query<T>(sql)).rows);
}
