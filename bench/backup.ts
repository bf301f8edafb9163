/**
 * `npm run bench:backup` (issue 42): time and size of `npm run backup` and time of `npm run restore`
 * on a seeded database, beside a bare `pg_dump -Fc` and `pg_restore` of the same database in the
 * same run (the server's own client tools, which must match its version: Debian's
 * postgresql-client for a Debian server). Needs DATABASE_URL: the embedded PostgreSQL ships no
 * pg_dump, so the reference cannot run there.
 *
 * The base is seedBillingBase's (bench/seed-billing-base.ts, as bench:reports'): subscribers,
 * ledger, invoices, sessions, usage, card batches.
 *
 * Environment (all optional but DATABASE_URL):
 *   DATABASE_URL                 server; fresh databases are created on it and dropped after
 *   BENCH_BACKUP_SUBSCRIBERS     1000000    BENCH_BACKUP_LEDGER  10000000 (transactions rows; the issue's scale)
 *   BENCH_BACKUP_REUSE           the name of a kept database on that server (one seeded by
 *                                bench:reports with BENCH_KEEP=1): backed up as it is, without
 *                                seeding (tens of minutes at the issue's scale), and never dropped
 *   PG_BIN                       folder of pg_dump/pg_restore (default: found on PATH)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { createBackup } from '../shared/backup/backup';
import { compareFigures, restoreBackup } from '../shared/backup/restore';
import { intVar } from '../shared/config';
import { withClientAt } from '../shared/db/client-at';
import { runMigrations } from '../shared/db/database-setup';
import { reusedStore, timedStep } from './load';
import { seedBillingBase } from './seed-billing-base';

const SUBSCRIBERS = intVar(process.env, 'BENCH_BACKUP_SUBSCRIBERS', 1_000_000, 1000);
const LEDGER = intVar(process.env, 'BENCH_BACKUP_LEDGER', 10_000_000, 1000);
const KEY = Buffer.alloc(32, 7);
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

function withDb(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

function tool(name: string, args: string[]): void {
  const bin = process.env.PG_BIN ? path.join(process.env.PG_BIN, name) : name;
  const r = spawnSync(bin, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${name} failed (${r.status}): ${r.stderr || r.error?.message}`);
}

async function main(): Promise<void> {
  const server = process.env.DATABASE_URL;
  if (!server)
    throw new Error(
      'set DATABASE_URL: the reference pg_dump/pg_restore needs a server whose client tools are installed',
    );
  const reuse = process.env.BENCH_BACKUP_REUSE;
  const stamp = `bench_backup_${Date.now().toString(36)}`;
  // Dropped after the run: the targets, and the source unless it is a kept one.
  const names: Record<string, string> = {
    ...(reuse ? {} : { source: `${stamp}_src` }),
    ours: `${stamp}_ours`,
    ref: `${stamp}_ref`,
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-backup-'));
  await withClientAt(server, async (c) => {
    for (const n of Object.values(names)) await c.query(`create database "${n}"`);
  });
  const source = reuse ? reusedStore('BENCH_BACKUP_REUSE', reuse).env.DATABASE_URL : withDb(server, names.source);
  try {
    await runMigrations(source);
    const seedStart = process.hrtime.bigint();
    if (!reuse) {
      const pool = new Pool({ connectionString: source, max: 2 });
      try {
        await seedBillingBase(pool, SUBSCRIBERS, LEDGER);
      } finally {
        await pool.end();
      }
    }
    const { version, subscribers, ledger } = await withClientAt(source, async (c) => {
      const { rows } = await c.query<{ version: string; subscribers: number; ledger: number }>(
        `select current_setting('server_version') as version, (select count(*) from subscribers)::int as subscribers,
                (select count(*) from transactions)::int as ledger`,
      );
      return rows[0];
    });
    console.log(
      `${reuse ? `reusing ${reuse}:` : 'seeded'} ${subscribers} subscribers and ${ledger} ledger rows${reuse ? '' : ` in ${seconds(seedStart).toFixed(1)} s`} (PostgreSQL ${version}, ${os.cpus().length} cores)`,
    );
    const sizeOf = async (url: string) =>
      withClientAt(url, async (c) =>
        Number((await c.query('select pg_database_size(current_database()) as b')).rows[0].b),
      );
    console.log(`database size: ${((await sizeOf(source)) / 1e6).toFixed(1)} MB`);
    const step = async (label: string, run: () => Promise<unknown>) => (await timedStep(label, run)).seconds;
    const oursFile = path.join(dir, 'ours.backup');
    const refFile = path.join(dir, 'ref.dump');
    // Backups side by side, then restores: each pair as close in time (and load) as can be.
    const oursBackup = await step('npm run backup', () =>
      createBackup({ url: source, out: oursFile, key: KEY, keyLocation: 'bench' }),
    );
    const refBackup = await step('pg_dump -Fc', async () => tool('pg_dump', ['-Fc', '-f', refFile, '-d', source]));
    let figures: ReturnType<typeof compareFigures> | undefined;
    const oursRestore = await step('npm run restore', async () => {
      const restored = await restoreBackup({
        url: withDb(server, names.ours),
        file: oursFile,
        progress: (line) => console.log(`    ${line}`),
      });
      figures = compareFigures(restored.manifest, restored.restored);
    });
    if (!figures?.same) throw new Error(`restored figures differ from the manifest:\n${figures?.lines.join('\n')}`);
    const refRestore = await step('pg_restore', async () =>
      tool('pg_restore', ['--no-owner', '-d', withDb(server, names.ref), refFile]),
    );
    const restoredMb = async (name: string) => ((await sizeOf(withDb(server, name))) / 1e6).toFixed(1);
    console.log(
      `restored database size: ours ${await restoredMb(names.ours)} MB, pg_restore's ${await restoredMb(names.ref)} MB`,
    );

    const mb = (f: string) => (fs.statSync(f).size / 1e6).toFixed(1);
    console.log('');
    console.log('                          backup s   size MB   restore s');
    console.log(
      `npm run backup/restore  ${oursBackup.toFixed(1).padStart(9)} ${mb(oursFile).padStart(9)} ${oursRestore.toFixed(1).padStart(11)}`,
    );
    console.log(
      `pg_dump -Fc/pg_restore  ${refBackup.toFixed(1).padStart(9)} ${mb(refFile).padStart(9)} ${refRestore.toFixed(1).padStart(11)}`,
    );
    console.log(
      `ratio                   ${(oursBackup / refBackup).toFixed(2).padStart(8)}x ${(fs.statSync(oursFile).size / fs.statSync(refFile).size).toFixed(2).padStart(8)}x ${(oursRestore / refRestore).toFixed(2).padStart(10)}x`,
    );
    console.log(
      "\n(npm run restore's time includes checking both checksums, the migrations to the backup's level and the figures read again; pg_restore rebuilds the schema from the dump)",
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await withClientAt(server, async (c) => {
      for (const n of Object.values(names)) await c.query(`drop database if exists "${n}" with (force)`);
    });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
