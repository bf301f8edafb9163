/** Helpers of the backup tests: the CLIs as an operator runs them, empty databases, figures read back. */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from 'pg';
import { appTables, ledgerTotals, rowCounts } from '../../shared/backup/facts';
import { journal, migrationsAround, migrationsDir, type MigrationLevel } from '../../shared/backup/migration-level';
import { repoRoot } from '../../shared/paths';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET } from './app';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/scripts/<name>.js args` (what `npm run <name> -- args` runs after its build). */
export async function runCli(
  name: 'backup' | 'restore',
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  const child = spawn(process.execPath, [path.join(repoRoot(), 'dist', 'scripts', `${name}.js`), ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      JWT_SECRET: TEST_JWT_SECRET,
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { status, stdout, stderr };
}

/** An empty database (no schema, no migrations) on the run's server; the teardown drops it. */
export async function emptyDatabase(): Promise<string> {
  const admin = process.env.TEST_PG_ADMIN_URL!;
  const name = `${process.env.TEST_RUN_ID}_empty_${crypto.randomBytes(4).toString('hex')}`;
  const c = new Client({ connectionString: admin });
  await c.connect();
  await c.query(`create database "${name}"`);
  await c.end();
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A temporary copy of the migrations folder whose journal stops at `level` (an older release's
 * schema); the caller removes it. Throws when the level is not one of this code's.
 */
export function migrationsUpTo(level: MigrationLevel): string {
  const kept = journal().slice(0, migrationsAround(level).upTo.length);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-migrations-'));
  fs.mkdirSync(path.join(dir, 'meta'));
  for (const e of kept) fs.copyFileSync(path.join(migrationsDir(), `${e.tag}.sql`), path.join(dir, `${e.tag}.sql`));
  const full = JSON.parse(fs.readFileSync(path.join(migrationsDir(), 'meta', '_journal.json'), 'utf8')) as object;
  fs.writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify({ ...full, entries: kept }));
  return dir;
}

/** Migrates `url` with the given migrations folder (bootstrap.mjs is ESM: run in a child). */
export function migrate(url: string, folder?: string): void {
  const bootstrap = pathToFileURL(path.join(repoRoot(), 'shared', 'db', 'bootstrap.mjs')).href;
  const script = `import { runMigrations } from ${JSON.stringify(bootstrap)}; await runMigrations(${JSON.stringify(url)}${folder ? `, ${JSON.stringify(folder)}` : ''});`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`migrations failed: ${r.stderr}`);
}

export interface Figures {
  tables: string[];
  rows: Record<string, number>;
  ledger: Record<string, string>;
  /** Digest of every ledger, payment and wallet row, to compare contents and not only sums. */
  digest: string;
  migrations: number;
}

export async function figures(url: string): Promise<Figures> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    await c.query('begin isolation level repeatable read read only');
    const tables = await appTables(c);
    const rows = await rowCounts(c, tables);
    const ledger = await ledgerTotals(c);
    const { rows: d } = await c.query<{ h: string }>(
      `select md5(
         (select coalesce(string_agg(t::text, '|' order by t.id), '') from transactions t) ||
         (select coalesce(string_agg(p::text, '|' order by p.id), '') from invoice_payments p) ||
         (select coalesce(string_agg(w::text, '|' order by w.id), '') from wallet_entries w) ||
         (select coalesce(string_agg(i::text, '|' order by i.id), '') from invoices i)) as h`,
    );
    const m = await c.query<{ n: number }>(
      `select case when to_regclass('drizzle.__drizzle_migrations') is null then 0
              else (select count(*)::int from drizzle.__drizzle_migrations) end as n`,
    );
    await c.query('commit');
    return { tables, rows, ledger, digest: d[0].h, migrations: m.rows[0].n };
  } finally {
    await c.end();
  }
}
