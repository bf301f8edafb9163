/**
 * Writes a backup of the database at `url`: every table's rows copied out of one REPEATABLE READ
 * snapshot (consistent as pg_dump's is, whatever runs meanwhile), with a manifest computed in that
 * same snapshot, so its row counts and ledger totals are exactly what the file holds. The schema
 * is not copied: it is the migrations' up to the level recorded, which a restore replays
 * (docs/operations.md says why this and not pg_dump). Written to `<out>.partial`, then renamed.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { repoRoot } from '../paths';
import { appTables, ledgerTotals } from './facts';
import { MAGIC, trailerFor, type Header, type Manifest, type Segment } from './file-format';
import { keyFingerprint, sealKey } from './key';
import { databaseLevel } from './migration-level';
import path from 'node:path';

export interface BackupOptions {
  url: string;
  out: string;
  /** The key the database's secrets are encrypted under, and where it was read from. */
  key: Buffer;
  keyLocation: string;
  /** Seals the key into the backup; without it the backup does not hold the key. */
  passphrase?: string;
  /** gzip level (1 fastest .. 9 smallest). */
  level?: number;
}

export function appVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

export async function tableColumns(client: pg.ClientBase, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select attname as name from pg_attribute
      where attrelid = $1::regclass and attnum > 0 and not attisdropped and attgenerated = ''
      order by attnum`,
    [`public."${table}"`],
  );
  return rows.map((r) => r.name);
}

export function quoteColumns(columns: string[]): string {
  return columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(', ');
}

/** Appends what passes through to the open file, hashing and counting it. */
class FileSink extends Writable {
  bytes = 0;
  constructor(
    private readonly fh: fs.promises.FileHandle,
    private readonly hash: crypto.Hash,
  ) {
    super();
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.fh.write(chunk).then(() => done(), done);
  }
}

/** Rows of a COPY text stream: one newline each (newlines inside values are escaped as \n). */
function rowCounter(): Transform & { rows: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      let n = 0;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) n += 1;
      (t as Transform & { rows: number }).rows += n;
      done(null, chunk);
    },
  }) as Transform & { rows: number };
  t.rows = 0;
  return t;
}

export async function createBackup(opts: BackupOptions): Promise<Manifest> {
  const started = Date.now();
  const partial = `${opts.out}.partial`;
  const client = new pg.Client({ connectionString: opts.url });
  await client.connect();
  const fh = await fs.promises.open(partial, 'w', 0o600);
  try {
    await client.query('begin isolation level repeatable read read only');
    const tables = await appTables(client);
    // As pg_dump does: no DDL may change a table while it is being copied.
    if (tables.length > 0)
      await client.query(`lock table ${tables.map((t) => `public."${t}"`).join(', ')} in access share mode`);
    const migration = await databaseLevel(client);
    const ledger = await ledgerTotals(client);
    const { rows: seqRows } = await client.query<{ name: string; value: string | null }>(
      `select sequencename as name, last_value::text as value from pg_sequences where schemaname = 'public' order by 1`,
    );
    const serverVersion = (await client.query<{ v: string }>('show server_version')).rows[0].v;

    await fh.write(MAGIC);
    const hash = crypto.createHash('sha256');
    const segments: Segment[] = [];
    let offset = MAGIC.length;
    for (const table of tables) {
      const columns = await tableColumns(client, table);
      const counter = rowCounter();
      const sink = new FileSink(fh, hash);
      await pipeline(
        client.query(copyTo(`copy public."${table}" (${quoteColumns(columns)}) to stdout`)),
        counter,
        zlib.createGzip({ level: opts.level ?? 6 }),
        sink,
      );
      segments.push({ table, columns, offset, bytes: sink.bytes, rows: counter.rows });
      offset += sink.bytes;
    }
    await client.query('commit');

    const manifest: Manifest = {
      app_version: appVersion(),
      created_at: new Date(started).toISOString(),
      seconds: (Date.now() - started) / 1000,
      server_version: serverVersion,
      migration,
      row_counts: Object.fromEntries(segments.map((s) => [s.table, s.rows])),
      ledger,
      encryption_key: {
        carried: opts.passphrase !== undefined,
        fingerprint: keyFingerprint(opts.key),
        location: opts.keyLocation,
      },
      checksum: { algorithm: 'sha256', data: hash.digest('hex'), bytes: offset - MAGIC.length },
    };
    const header: Header = {
      manifest,
      segments,
      sequences: seqRows,
      ...(opts.passphrase !== undefined ? { key: sealKey(opts.key, opts.passphrase) } : {}),
    };
    const json = Buffer.from(JSON.stringify(header));
    await fh.write(json);
    await fh.write(trailerFor(json));
    await fh.sync();
    await fh.close();
    await fs.promises.rename(partial, opts.out);
    return manifest;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    await fh.close().catch(() => undefined);
    await fs.promises.rm(partial, { force: true });
    throw err;
  } finally {
    await client.end();
  }
}

/** The lines printed when a backup does not hold the key: without it the secrets in it are useless. */
export function keyWarning(location: string): string {
  return [
    '!!! WARNING: this backup does NOT hold the encryption key.',
    '!!! Without it, the subscriber passwords, router and chat credentials, tokens and public links in',
    `!!! it cannot be read. The key is in ${location}: keep a copy apart from the backups, or back up`,
    '!!! with --passphrase-file <file> (or BACKUP_PASSPHRASE) to carry it sealed with a passphrase.',
  ].join('\n');
}
