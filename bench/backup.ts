/**
 * `npm run bench:backup` (issue 42): time and size of `npm run backup` and time of `npm run restore`
 * on a seeded database, beside a bare `pg_dump -Fc` and `pg_restore` of the same database in the
 * same run (the server's own client tools, which must match its version: Debian's
 * postgresql-client for a Debian server). Needs DATABASE_URL: the embedded PostgreSQL ships no
 * pg_dump, so the reference cannot run there.
 *
 * Environment (all optional but DATABASE_URL):
 *   DATABASE_URL                 server; fresh databases are created on it and dropped after
 *   BENCH_BACKUP_SUBSCRIBERS     100000     BENCH_BACKUP_LEDGER  1000000 (transactions rows)
 *   PG_BIN                       folder of pg_dump/pg_restore (default: found on PATH)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createBackup } from '../shared/backup/backup';
import { restoreBackup } from '../shared/backup/restore';
import { intVar } from '../shared/config';
import { runMigrations } from '../shared/db/database-setup';
import { seedSubscriberBase } from './seed-subscribers';

const SUBSCRIBERS = intVar(process.env, 'BENCH_BACKUP_SUBSCRIBERS', 100_000, 1);
const LEDGER = intVar(process.env, 'BENCH_BACKUP_LEDGER', 1_000_000, 1);
const KEY = Buffer.alloc(32, 7);
const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9;

function withDb(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
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
  const stamp = `bench_backup_${Date.now().toString(36)}`;
  const names = { source: `${stamp}_src`, ours: `${stamp}_ours`, ref: `${stamp}_ref` };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-backup-'));
  await admin(server, async (c) => {
    for (const n of Object.values(names)) await c.query(`create database "${n}"`);
  });
  const source = withDb(server, names.source);
  try {
    await runMigrations(source);
    const seedStart = process.hrtime.bigint();
    await admin(source, async (c) => {
      await seedSubscriberBase(c, SUBSCRIBERS, 'bench-password');
      await c.query(
        `insert into transactions (type, amount, currency, subscriber_id, reseller_id, method, reference, created_at)
         select case when g % 5 = 0 then 'renewal' else 'payment' end, 100 + g % 9900, 'USD', 1 + g % $2::int, 1, 'cash',
                'ref-' || g, now() - make_interval(secs => g)
           from generate_series(1, $1::int) g`,
        [LEDGER, SUBSCRIBERS],
      );
      await c.query('vacuum analyze');
    });
    const version = await admin(
      source,
      async (c) => (await c.query('show server_version')).rows[0].server_version as string,
    );
    console.log(
      `seeded ${SUBSCRIBERS} subscribers and ${LEDGER} ledger rows in ${seconds(seedStart).toFixed(1)} s (PostgreSQL ${version}, ${os.cpus().length} cores)`,
    );
    const sizeOf = async (url: string) =>
      admin(url, async (c) => Number((await c.query('select pg_database_size(current_database()) as b')).rows[0].b));
    console.log(`database size: ${((await sizeOf(source)) / 1e6).toFixed(1)} MB`);

    const oursFile = path.join(dir, 'ours.backup');
    let t = process.hrtime.bigint();
    await createBackup({ url: source, out: oursFile, key: KEY, keyLocation: 'bench' });
    const oursBackup = seconds(t);
    t = process.hrtime.bigint();
    const restored = await restoreBackup({ url: withDb(server, names.ours), file: oursFile });
    const oursRestore = seconds(t);
    if (
      restored.restored.ledger['transactions.payment.USD.amount'] !==
      restored.manifest.ledger['transactions.payment.USD.amount']
    ) {
      throw new Error('restored ledger differs from the manifest');
    }

    const refFile = path.join(dir, 'ref.dump');
    t = process.hrtime.bigint();
    tool('pg_dump', ['-Fc', '-f', refFile, '-d', source]);
    const refBackup = seconds(t);
    t = process.hrtime.bigint();
    tool('pg_restore', ['--no-owner', '-d', withDb(server, names.ref), refFile]);
    const refRestore = seconds(t);

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
      "\n(restore of npm run restore includes checking both checksums, replaying the migrations to the backup's level, and migrating forward; pg_restore rebuilds the schema from the dump)",
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await admin(server, async (c) => {
      for (const n of Object.values(names)) await c.query(`drop database if exists "${n}" with (force)`);
    });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
