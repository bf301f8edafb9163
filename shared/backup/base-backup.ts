/**
 * Base backups of the embedded cluster for point-in-time recovery (docs/operations.md): the
 * package ships no pg_basebackup, so this is PostgreSQL's own low-level API, in one session:
 * pg_backup_start, a copy of the cluster's files while the server runs, pg_backup_stop (which
 * waits until the WAL the copy needs is archived) and its backup_label written into the copy. The
 * copy goes to BACKUP_DIR/base/<name>.partial and is renamed whole, base.json last.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { repoRoot } from '../paths';
import {
  baseBackupName,
  basesBeyondRetention,
  isBaseBackupName,
  walBeyondRetention,
  type BaseBackupInfo,
} from './wal-archive';

/** Made again empty by the server at start, or its own run-time state: never copied (as pg_basebackup). */
const SKIP_CONTENTS = new Set([
  'pg_wal',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
  'pg_replslot',
]);
const SKIP_FILES = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'pg_internal.init',
  'backup_label',
  'tablespace_map',
  'recovery.signal',
  'standby.signal',
  'server.log',
  'server.log.1',
]);

function appVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** Copies a tree the server is writing to: a file it removes meanwhile is left out (its WAL redoes it). */
function copyLive(from: string, to: string, top: boolean): number {
  fs.mkdirSync(to, { recursive: true, mode: 0o700 });
  let bytes = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(from, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  for (const entry of entries) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) {
      if (top && SKIP_CONTENTS.has(entry.name)) {
        fs.mkdirSync(dst, { mode: 0o700 });
        if (entry.name === 'pg_wal') fs.mkdirSync(path.join(dst, 'archive_status'), { mode: 0o700 });
      } else if (!entry.name.startsWith('pgsql_tmp')) {
        bytes += copyLive(src, dst, false);
      }
    } else if (entry.isFile() && !(top && SKIP_FILES.has(entry.name)) && !entry.name.startsWith('pgsql_tmp')) {
      try {
        fs.copyFileSync(src, dst);
        bytes += fs.statSync(dst).size;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  }
  return bytes;
}

/** The base backups in BACKUP_DIR/base, oldest first (folders without base.json are unfinished). */
export function listBaseBackups(backupDir: string): BaseBackupInfo[] {
  const dir = path.join(backupDir, 'base');
  if (!fs.existsSync(dir)) return [];
  const out: BaseBackupInfo[] = [];
  for (const name of fs.readdirSync(dir).filter(isBaseBackupName).sort()) {
    const file = path.join(dir, name, 'base.json');
    if (fs.existsSync(file)) out.push(JSON.parse(fs.readFileSync(file, 'utf8')) as BaseBackupInfo);
  }
  return out;
}

export interface BaseBackupOptions {
  /** A superuser connection to the embedded server (its `postgres` role). */
  url: string;
  clusterDir: string;
  /** DATA_DIR: its pg-password goes with the base (the restored cluster's superuser password). */
  dataDir: string;
  backupDir: string;
  /** Base backups kept; the WAL only older ones needed is deleted with them. */
  keep: number;
  keyFingerprint: string | null;
}

export interface BaseBackupDone {
  info: BaseBackupInfo;
  deleted: string[];
}

export async function takeBaseBackup(opts: BaseBackupOptions): Promise<BaseBackupDone> {
  const baseDir = path.join(opts.backupDir, 'base');
  fs.mkdirSync(baseDir, { recursive: true, mode: 0o700 });
  const name = baseBackupName(new Date());
  const partial = path.join(baseDir, `${name}.partial`);
  fs.rmSync(partial, { recursive: true, force: true });
  const client = new Client({ connectionString: opts.url });
  await client.connect();
  let info: BaseBackupInfo;
  try {
    const { rows: sys } = await client.query<{ id: string; version: string; archiving: string }>(
      `select system_identifier::text as id, current_setting('server_version') as version,
              current_setting('archive_mode') as archiving from pg_control_system()`,
    );
    if (sys[0].archiving === 'off') throw new Error('WAL archiving is off: a base backup alone recovers to no time');
    const started = new Date();
    const { rows: start } = await client.query<{ lsn: string; wal: string; tli: number }>(
      `select lsn::text, pg_walfile_name(lsn) as wal, (select timeline_id from pg_control_checkpoint()) as tli
         from pg_backup_start($1, true) as lsn`,
      [name],
    );
    let bytes: number;
    try {
      bytes = copyLive(opts.clusterDir, partial, true);
    } catch (err) {
      await client.query('select pg_backup_stop(false)').catch(() => undefined);
      throw err;
    }
    const { rows: stop } = await client.query<{ lsn: string; labelfile: string; spcmapfile: string }>(
      'select lsn::text, labelfile, spcmapfile from pg_backup_stop(true)',
    );
    fs.writeFileSync(path.join(partial, 'backup_label'), stop[0].labelfile, { mode: 0o600 });
    if (stop[0].spcmapfile) fs.writeFileSync(path.join(partial, 'tablespace_map'), stop[0].spcmapfile, { mode: 0o600 });
    info = {
      name,
      system_identifier: sys[0].id,
      timeline: start[0].tli,
      start_lsn: start[0].lsn,
      stop_lsn: stop[0].lsn,
      start_wal: start[0].wal,
      start_time: started.toISOString(),
      stop_time: new Date().toISOString(),
      server_version: sys[0].version,
      app_version: appVersion(),
      bytes,
      key_fingerprint: opts.keyFingerprint,
    };
  } catch (err) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw err;
  } finally {
    await client.end();
  }
  // The cluster's password goes with its files (which hold its hash anyway): the restored cluster needs it.
  const password = path.join(opts.dataDir, 'pg-password');
  if (fs.existsSync(password)) fs.copyFileSync(password, path.join(partial, 'pg-password'));
  fs.writeFileSync(path.join(partial, 'base.json'), `${JSON.stringify(info, null, 2)}\n`);
  fs.renameSync(partial, path.join(baseDir, name));
  return { info, deleted: pruneArchive(opts.backupDir, opts.keep) };
}

/** Deletes base backups beyond the newest `keep` and the archived WAL that only they needed. */
export function pruneArchive(backupDir: string, keep: number): string[] {
  const baseDir = path.join(backupDir, 'base');
  const deleted: string[] = [];
  for (const name of basesBeyondRetention(fs.readdirSync(baseDir), keep)) {
    fs.rmSync(path.join(baseDir, name), { recursive: true, force: true });
    deleted.push(path.join('base', name));
  }
  const oldest = listBaseBackups(backupDir)[0];
  const walDir = path.join(backupDir, 'wal');
  if (!oldest || !fs.existsSync(walDir)) return deleted;
  for (const name of walBeyondRetention(fs.readdirSync(walDir), oldest.start_wal)) {
    fs.rmSync(path.join(walDir, name), { force: true });
    deleted.push(path.join('wal', name));
  }
  return deleted;
}
