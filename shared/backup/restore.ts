/**
 * Restores a backup into the database at `url`: refuses a database that holds anything unless
 * forced, checks the checksums before touching it, recreates the schema of the backup's migration
 * level, loads the rows (triggers and foreign-key checks off, as pg_restore's data section does)
 * and builds the secondary indexes after them, sets the sequences, migrates forward with the
 * current code, all in one transaction, then reads the figures again.
 */
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { resolveUrl } from '../db/hosts';
import { createIndexes, dropSecondaryIndexes } from '../db/secondary-indexes';
import { quoteColumns } from './backup';
import { appTables, ledgerTotals, rowCounts } from './facts';
import { readHeader, verifyData, type Header, type Manifest } from './file-format';
import { openKey } from './key';
import { applyMigrations, migrationsAround } from './migration-level';

export class RestoreRefused extends Error {
  override name = 'RestoreRefused';
}

export interface RestoreOptions {
  url: string;
  file: string;
  /** Replace whatever the target database holds. */
  force?: boolean;
  /** Opens the key a backup carries; without it the key is not returned. */
  passphrase?: string;
  /** Told each step's time as it ends (a restore of gigabytes takes minutes: the operator sees where it is). */
  progress?: (line: string) => void;
  /** inspectBackup's answer when the caller checked the file already (read once, not twice). */
  inspected?: { header: Header; key?: Buffer };
}

export interface RestoreResult {
  manifest: Manifest;
  restored: { row_counts: Record<string, number>; ledger: Record<string, string> };
  /** The carried encryption key, when the passphrase opened it. */
  key?: Buffer;
}

/** Checks the file whole (header and data checksums) and opens the key; nothing is written. */
export async function inspectBackup(file: string, passphrase?: string): Promise<{ header: Header; key?: Buffer }> {
  const { header, dataEnd } = await readHeader(file);
  await verifyData(file, header, dataEnd);
  const key = header.key && passphrase !== undefined ? openKey(header.key, passphrase) : undefined;
  return { header, key };
}

async function emptyOrCleared(client: pg.Client, force: boolean): Promise<void> {
  const tables = await appTables(client);
  const { rows } = await client.query(`select to_regclass('drizzle.__drizzle_migrations') is not null as migrated`);
  if (tables.length === 0 && !rows[0].migrated) return;
  if (!force) {
    throw new RestoreRefused(
      `the target database is not empty (${tables.length} tables${rows[0].migrated ? ', migrations applied' : ''}): restore into an empty one, or pass --force to replace what it holds`,
    );
  }
  await client.query('drop schema if exists drizzle cascade');
  await client.query('drop schema public cascade');
  await client.query('create schema public');
}

const INDEX_BUILD_MEMORY = '256MB';

type Timed = <T>(what: string, run: () => Promise<T>) => Promise<T>;

function timer(progress: ((line: string) => void) | undefined): Timed {
  return async (what, run) => {
    const began = process.hrtime.bigint();
    const out = await run();
    progress?.(`${what}: ${(Number(process.hrtime.bigint() - began) / 1e9).toFixed(1)} s`);
    return out;
  };
}

async function loadRows(client: pg.ClientBase, file: string, header: Header, timed: Timed): Promise<void> {
  // The rows are a snapshot already: no trigger may add to them, nor a foreign key order them.
  await client.query('set local session_replication_role = replica');
  const present = new Set(await appTables(client));
  const missing = header.segments.filter((s) => !present.has(s.table)).map((s) => s.table);
  if (missing.length > 0)
    throw new Error(`the schema at the backup's migration level has no table ${missing.join(', ')}`);
  // The indexes no constraint stands on are built once the rows are in (as pg_restore does).
  const indexes = await dropSecondaryIndexes(client);
  // Rows the migrations seed are in the backup too. Truncated in this transaction, the tables take
  // COPY FREEZE: rows written frozen, no hint-bit rewrite of the whole ledger by its first reads.
  if (present.size > 0) await client.query(`truncate ${[...present].map((t) => `public."${t}"`).join(', ')}`);
  for (const s of header.segments) {
    if (s.bytes === 0 || header.manifest.row_counts[s.table] === 0) continue;
    await timed(`rows of ${s.table} (${header.manifest.row_counts[s.table] ?? '?'})`, () =>
      pipeline(
        fs.createReadStream(file, { start: s.offset, end: s.offset + s.bytes - 1 }),
        zlib.createGunzip(),
        client.query(copyFrom(`copy public."${s.table}" (${quoteColumns(s.columns)}) from stdin with (freeze)`)),
      ),
    );
  }
  // Each index build sorts its table's keys: with PostgreSQL's default 64 MB a ledger index of
  // millions of rows sorts on disk. More for this transaction only, never less than the server's.
  await client.query(
    `select set_config('maintenance_work_mem',
                       greatest(pg_size_bytes(current_setting('maintenance_work_mem')), pg_size_bytes($1)) / 1024 || 'kB', true)`,
    [INDEX_BUILD_MEMORY],
  );
  await timed(`indexes built after the rows (${indexes.length})`, () => createIndexes(client, indexes));
  for (const seq of header.sequences) {
    await client.query(
      seq.value === null ? `select setval($1::regclass, 1, false)` : `select setval($1::regclass, $2::bigint, true)`,
      seq.value === null ? [`public."${seq.name}"`] : [`public."${seq.name}"`, seq.value],
    );
  }
  await client.query('set local session_replication_role = origin');
}

/**
 * One transaction from the empty target to the migrated copy: the schema at the backup's level,
 * the rows, the indexes, the forward migrations. A restore that fails at any step leaves the
 * target as it found it (empty), never a schema with half its rows.
 */
export async function restoreBackup(opts: RestoreOptions): Promise<RestoreResult> {
  const { header, key } = opts.inspected ?? (await inspectBackup(opts.file, opts.passphrase));
  const { manifest } = header;
  const migrations = migrationsAround(manifest.migration);
  const timed = timer(opts.progress);
  const client = new pg.Client({ connectionString: await resolveUrl(opts.url) });
  await client.connect();
  try {
    await client.query('begin');
    try {
      // The lock a starting server takes before it migrates (bootstrap.mjs): none migrates meanwhile.
      await client.query('select pg_advisory_xact_lock(727274)');
      await emptyOrCleared(client, opts.force ?? false);
      await timed(`schema at the backup's level (${migrations.upTo.length} migrations)`, () =>
        applyMigrations(client, migrations.upTo),
      );
      await loadRows(client, opts.file, header, timed);
      await timed(`forward migrations (${migrations.after.length})`, () => applyMigrations(client, migrations.after));
      await timed('commit', () => client.query('commit'));
    } catch (err) {
      await client.query('rollback').catch(() => undefined);
      throw err;
    }
    const restored = await timed('figures read again', async () => {
      await client.query('begin isolation level repeatable read read only');
      const present = new Set(await appTables(client));
      const figures = {
        // A table a later migration dropped (0052 replaced two ledger rollups by one) has no count.
        row_counts: await rowCounts(
          client,
          Object.keys(manifest.row_counts).filter((t) => present.has(t)),
        ),
        ledger: await ledgerTotals(client),
      };
      await client.query('commit');
      return figures;
    });
    return { manifest, restored, key };
  } finally {
    await client.end();
  }
}

/** Lines "what  manifest  restored" for every figure, and whether all of them agree. */
export function compareFigures(
  manifest: Manifest,
  restored: RestoreResult['restored'],
): { lines: string[]; same: boolean } {
  const rows: [string, string, string][] = [];
  const dropped: string[] = [];
  for (const [table, n] of Object.entries(manifest.row_counts)) {
    if (table in restored.row_counts) rows.push([`rows ${table}`, String(n), String(restored.row_counts[table])]);
    else dropped.push(table);
  }
  const keys = new Set([...Object.keys(manifest.ledger), ...Object.keys(restored.ledger)]);
  for (const k of [...keys].sort()) rows.push([k, manifest.ledger[k] ?? '-', restored.ledger[k] ?? '-']);
  const width = Math.max(...rows.map((r) => r[0].length), 4);
  const lines = [`${'what'.padEnd(width)}  ${'manifest'.padStart(16)}  ${'restored'.padStart(16)}`];
  let same = true;
  for (const [what, a, b] of rows) {
    const differs = a !== b;
    if (differs) same = false;
    lines.push(`${what.padEnd(width)}  ${a.padStart(16)}  ${b.padStart(16)}${differs ? '  DIFFERS' : ''}`);
  }
  if (dropped.length > 0) lines.push(`tables dropped by the migrations since the backup: ${dropped.join(', ')}`);
  return { lines, same };
}
