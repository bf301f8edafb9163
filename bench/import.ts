/**
 * `npm run bench:import` (issue 29): N subscribers with 10 history rows each in a daloRADIUS-shaped
 * MariaDB database (test/fixtures/import/daloradius/schema.sql), imported into a fresh PostgreSQL
 * database: seconds of the dry run, the real run and a second (no-op) run; then the same data as
 * CSV (subscribers.csv + history.csv) into another fresh database, dry and real. Every run must
 * reconcile to the cent, or the bench fails.
 *
 * Each line gives wall seconds and the CPU seconds of PostgreSQL's backends serving the run (read
 * from /proc: PostgreSQL on this host) and of this process: on a shared machine the wall time moves
 * with everyone's load, the CPU seconds much less. The reference, measured in the same run: every
 * row the real daloRADIUS run wrote, copied once more into tables of the same columns without
 * indexes or triggers (`insert ... select`, in the server): the floor of writing these rows, and
 * the ratio real run / floor says what is ours (indexes, triggers, look-ups, round trips).
 *
 * Environment (all optional):
 *   BENCH_SUBSCRIBERS  100000        BENCH_HISTORY  10 (rows per subscriber)
 *   DATABASE_URL       postgres://postgres@127.0.0.1:5432/test (server; fresh databases are created and dropped)
 *   BENCH_MARIADB_URL  mysql://root@127.0.0.1:3306/
 *   BENCH_KEEP=1       keep the databases and the CSV folder
 *   BENCH_CSV=0        skip the CSV source (quicker while iterating)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import mysql from 'mysql2/promise';
import { Client, Pool } from 'pg';
import { intVar, loadConfig, setConfig } from '../shared/config';
import * as schema from '../shared/db/schema';
import { runMigrations } from '../shared/db/database-setup';
import { repoRoot } from '../shared/paths';
import { runImport, type ImportReport, type SourceName } from '../shared/import';
import { PROF } from '../shared/import/writer';
import { backendCpu, cpuDelta } from './pg-cpu';

const N = intVar(process.env, 'BENCH_SUBSCRIBERS', 100_000, 1);
const H = intVar(process.env, 'BENCH_HISTORY', 10, 0);
const PG = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const MARIADB = process.env.BENCH_MARIADB_URL || 'mysql://root@127.0.0.1:3306/';
const KEEP = process.env.BENCH_KEEP === '1';
const CSV = process.env.BENCH_CSV !== '0';
const SCHEMA = path.join(repoRoot(), 'test/fixtures/import/daloradius/schema.sql');
const suffix = crypto.randomBytes(3).toString('hex');

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;
const PLANS = [
  ['Home 10M', '15.00', 'home10'],
  ['Home 20M', '22.50', 'home20'],
  ['Business 50M', '49.90', 'biz50'],
] as const;
const amountOf = (i: number, k: number) => `${10 + ((i * 7 + k) % 40)}.${String((i + k * 13) % 100).padStart(2, '0')}`;
const day = (i: number, k: number) => {
  const d = new Date(Date.UTC(2020, 0, 1) + ((i + k * 30) % 2000) * 86_400_000);
  return d.toISOString().slice(0, 10);
};

async function seedMariadb(): Promise<string> {
  const name = `bench_import_${suffix}`;
  const conn = await mysql.createConnection({ uri: MARIADB, multipleStatements: true });
  await conn.query(`create database \`${name}\` character set utf8mb4`);
  await conn.query(`use \`${name}\``);
  await conn.query(`set session sql_mode = ''`);
  await conn.query(fs.readFileSync(SCHEMA, 'utf8'));
  await conn.query(
    `insert into billing_plans (planName, planRecurring, planRecurringPeriod, planCost, planGroup, planActive) values ?`,
    [PLANS.map(([n, c, g]) => [n, 'Yes', 'Monthly', c, g, 'yes'])],
  );
  await conn.query(`insert into operators (username, password, firstname, lastname, title, department, company, phone1,
    phone2, email1, email2, messenger1, messenger2, notes) values ('administrator', 'radius', '', '', '', '', '', '', '', '', '', '', '', '')`);
  const CHUNK = 5000;
  for (let from = 1; from <= N; from += CHUNK) {
    const ids = Array.from({ length: Math.min(CHUNK, N - from + 1) }, (_, k) => from + k);
    const user = (i: number) => `user${i}@bench`;
    await conn.query('insert into radcheck (username, attribute, op, value) values ?', [
      ids.flatMap((i) => [
        [user(i), 'Cleartext-Password', ':=', `pw-${i}`],
        [
          user(i),
          'Expiration',
          ':=',
          `${day(i, 40).replace(/^(\d+)-(\d+)-(\d+)$/, (_m, y, mo, d) => `${['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][Number(mo) - 1]} ${d} ${Number(y) + 8}`)} 00:00:00`,
        ],
      ]),
    ]);
    await conn.query('insert into radusergroup (username, groupname, priority) values ?', [
      ids.map((i) => [user(i), PLANS[i % 3][2], 1]),
    ]);
    await conn.query('insert into userinfo (username, firstname, lastname, mobilephone, creationby) values ?', [
      ids.map((i) => [user(i), 'Subscriber', String(i), `+1555${String(i).padStart(7, '0')}`, 'administrator']),
    ]);
    await conn.query('insert into userbillinfo (username, planName) values ?', [
      ids.map((i) => [user(i), PLANS[i % 3][0]]),
    ]);
    if (H > 0) {
      await conn.query(
        'insert into billing_history (username, planId, billAmount, billAction, paymentmethod, creationdate) values ?',
        [
          ids.flatMap((i) =>
            Array.from({ length: H }, (_, k) => [
              user(i),
              1 + (i % 3),
              amountOf(i, k),
              'Refill',
              'cash',
              `${day(i, k)} 09:00:00`,
            ]),
          ),
        ],
      );
    }
  }
  await conn.end();
  const url = new URL(MARIADB);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The same data as the CSV source's files, read back from MariaDB so both sources carry the same rows. */
async function writeCsv(mariadbUrl: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-import-'));
  const conn = await mysql.createConnection({ uri: mariadbUrl, dateStrings: true });
  const q = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const [subs] = (await conn.query(`
    select c.username, c.value as password, b.planName as plan, p.planCost as price, e.value as expiration
      from radcheck c join userbillinfo b on b.username = c.username join billing_plans p on p.planName = b.planName
      join radcheck e on e.username = c.username and e.attribute = 'Expiration'
     where c.attribute = 'Cleartext-Password' order by c.id`)) as unknown as [Record<string, string>[]];
  const lines = ['username,password,plan,plan_price,plan_days,reseller,expiry'];
  for (const s of subs) {
    const expiry = new Date(Date.parse(`${s.expiration.replace(' 00:00:00', '')} UTC`) - 86_400_000)
      .toISOString()
      .slice(0, 10);
    lines.push([s.username, s.password, s.plan, s.price, '30', 'administrator', expiry].map(q).join(','));
  }
  fs.writeFileSync(path.join(dir, 'subscribers.csv'), lines.join('\n') + '\n');
  const out = fs.createWriteStream(path.join(dir, 'history.csv'));
  out.write('id,username,date,amount,method,description\n');
  const [hist] = (await conn.query(
    `select id, username, billAmount, creationdate, paymentmethod, billAction from billing_history order by id`,
  )) as unknown as [Record<string, string>[]];
  for (const h of hist) {
    out.write(
      `${h.id},${q(h.username)},${h.creationdate.slice(0, 10)},${h.billAmount},${h.paymentmethod},${h.billAction}\n`,
    );
  }
  await new Promise<void>((resolve) => out.end(resolve));
  await conn.end();
  return dir;
}

async function freshPg(tag: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_import_${tag}_${suffix}`;
  const admin = new Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(PG);
  url.pathname = `/${name}`;
  await runMigrations(url.toString());
  return {
    url: url.toString(),
    async drop() {
      const c = new Client({ connectionString: PG });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

/** CPU seconds so far of the backends connected to `db`, but the one asking (0 for those not on this host). */
const dbBackendCpu = (db: string) => backendCpu(PG, 'datname = $1 and pid <> pg_backend_pid()', [db]);

interface Timing {
  wall: number;
  /** PostgreSQL backends' CPU seconds. */
  pg: number;
  /** This process's CPU seconds. */
  node: number;
}

const cpuText = (t: Timing) => `(PostgreSQL CPU ${t.pg.toFixed(1)} s, ours ${t.node.toFixed(1)} s)`;

/** Runs `f` on a pool of its own whose connections stay open until the end, so their CPU is counted. */
async function measured<T>(pgUrl: string, f: (pool: Pool) => Promise<T>): Promise<[T, Timing]> {
  const db = new URL(pgUrl).pathname.slice(1);
  const pool = new Pool({ connectionString: pgUrl, max: 4, idleTimeoutMillis: 0 });
  try {
    const before = await dbBackendCpu(db);
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    const result = await f(pool);
    const wall = seconds(t0);
    const cpu = process.cpuUsage(cpu0);
    const pg = cpuDelta(before, await dbBackendCpu(db));
    return [result, { wall, pg, node: (cpu.user + cpu.system) / 1e6 }];
  } finally {
    await pool.end();
  }
}

async function timed(
  pgUrl: string,
  from: SourceName,
  source: string,
  dryRun: boolean,
): Promise<[ImportReport, Timing]> {
  const [report, t] = await measured(pgUrl, (pool) =>
    runImport(drizzle(pool, { schema }), { from, source, dryRun, connection: { allowPrivateTargets: true } }),
  );
  if (process.env.IMPORT_PROFILE) {
    console.log([...PROF].map(([k, v]) => `${k} ${v.toFixed(2)}`).join('  '));
    PROF.clear();
  }
  const e = report.entities;
  console.log(
    `${from.padEnd(10)} ${(dryRun ? 'dry run' : 'real run').padEnd(9)} ${t.wall.toFixed(1).padStart(7)} s ${cpuText(t)}   subscribers ${e.subscribers.imported} new ${e.subscribers.unchanged} unchanged, history ${e.history.imported} new ${e.history.unchanged} unchanged, reconciled ${report.money.reconciled}`,
  );
  if (!report.money.reconciled) throw new Error(`${from} ${dryRun ? 'dry run' : 'run'} does not reconcile`);
  return [report, t];
}

/** Tables an import writes rows into (docs/import.md, "What a run does"). */
const WRITTEN = [
  'services',
  'radgroupreply',
  'resellers',
  'subscribers',
  'radcheck',
  'radusergroup',
  'radreply',
  'audit_log',
  'transactions',
  'wallet_entries',
  'invoice_sequences',
  'invoices',
  'invoice_items',
  'invoice_status_counts',
  'invoice_tree',
  'invoice_payments',
];

/**
 * The reference: every row of the tables the import writes (a fresh database holds only the import's
 * rows and the migrations' few), copied into tables of the same columns without indexes, triggers
 * or defaults, in one transaction. Returns the timing and the number of rows; the copies are dropped.
 */
async function floor(pgUrl: string): Promise<[number, Timing]> {
  const [rows, t] = await measured(pgUrl, async (pool) => {
    const c = await pool.connect();
    try {
      await c.query('begin');
      let n = 0;
      for (const table of WRITTEN) {
        await c.query(`create table "floor_${table}" (like "${table}")`);
        n += (await c.query(`insert into "floor_${table}" select * from "${table}"`)).rowCount ?? 0;
      }
      await c.query('commit');
      return n;
    } finally {
      for (const table of WRITTEN) await c.query(`drop table if exists "floor_${table}"`);
      c.release();
    }
  });
  return [rows, t];
}

const ratio = (a: Timing, b: Timing) =>
  `wall ${(a.wall / b.wall).toFixed(2)}x, PostgreSQL CPU ${(a.pg / b.pg).toFixed(2)}x`;

async function main(): Promise<void> {
  setConfig(loadConfig({ JWT_SECRET: 'bench', ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex') }));
  const load = () => `load average ${os.loadavg()[0].toFixed(1)}`;
  console.log(`bench:import: ${N} subscribers, ${N * H} history rows; ${os.cpus().length} cores, ${load()}`);
  let t0 = process.hrtime.bigint();
  const mariadbUrl = await seedMariadb();
  console.log(`seeded MariaDB in ${seconds(t0).toFixed(1)} s`);
  t0 = process.hrtime.bigint();
  const csvDir = CSV ? await writeCsv(mariadbUrl) : undefined;
  if (csvDir) console.log(`wrote the CSV files in ${seconds(t0).toFixed(1)} s`);
  const dalo = await freshPg('dalo');
  const csv = CSV ? await freshPg('csv') : undefined;
  try {
    await timed(dalo.url, 'daloradius', mariadbUrl, true);
    const [, real] = await timed(dalo.url, 'daloradius', mariadbUrl, false);
    const [rows, ref] = await floor(dalo.url);
    console.log(
      `reference: the same ${rows} rows copied into unindexed tables without triggers ${ref.wall.toFixed(1)} s ${cpuText(ref)}; ${load()}`,
    );
    console.log(`daloradius real run / reference: ${ratio(real, ref)}`);
    await timed(dalo.url, 'daloradius', mariadbUrl, false);
    if (csv && csvDir) {
      await timed(csv.url, 'csv', csvDir, true);
      const [, csvReal] = await timed(csv.url, 'csv', csvDir, false);
      console.log(`csv real run / reference: ${ratio(csvReal, ref)}; ${load()}`);
    }
  } finally {
    if (!KEEP) {
      await dalo.drop();
      await csv?.drop();
      if (csvDir) fs.rmSync(csvDir, { recursive: true, force: true });
      const conn = await mysql.createConnection({ uri: MARIADB });
      await conn.query(`drop database if exists \`${new URL(mariadbUrl).pathname.slice(1)}\``);
      await conn.end();
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
