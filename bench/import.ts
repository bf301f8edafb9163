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
 * Accounting history (issue 44): BENCH_SESSIONS sessions in the source's radacct (FreeRADIUS's MySQL
 * schema; the last BENCH_OPEN_SESSIONS of them still open), spread over the subscribers and about two
 * years, imported with the rest by the daloRADIUS runs; the reference copies the radacct and
 * daily_usage rows too. The secondary indexes of the source's radacct are dropped before seeding
 * (they only slow the seeding: the import reads by primary key). Each line prints the peak memory
 * of this process (RSS, sampled every 100 ms) beside the memory before the run: reading in chunks
 * keeps it flat whatever the number of sessions.
 *
 * Environment (all optional):
 *   BENCH_SUBSCRIBERS  100000        BENCH_HISTORY  10 (rows per subscriber)
 *   BENCH_SESSIONS     10000000      BENCH_OPEN_SESSIONS  2000
 *   DATABASE_URL       postgres://postgres@127.0.0.1:5432/test (server; fresh databases are created and dropped)
 *   BENCH_MARIADB_URL  mysql://root@127.0.0.1:3306/
 *   BENCH_KEEP=1       keep the databases and the CSV folder
 *   BENCH_SOURCE=name  import from this MariaDB database (seeded and kept by an earlier run with the
 *                      same sizes) instead of seeding one: seeding 10,000,000 sessions takes 20 minutes
 *   BENCH_SEED_ONLY=1  seed the source, print its name and stop (the source is kept)
 *   BENCH_DRY=0        skip the dry runs
 *   BENCH_CSV=0        skip the CSV source (quicker while iterating)
 *   BENCH_HEAP=default V8's default heap growth, not the bound `npm run import` sets (shared/import/heap.ts)
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
import { boundHeapGrowth } from '../shared/import/heap';
import { PROF } from '../shared/import/profile';
import { backendCpu, cpuDelta } from './pg-cpu';

const N = intVar(process.env, 'BENCH_SUBSCRIBERS', 100_000, 1);
const H = intVar(process.env, 'BENCH_HISTORY', 10, 0);
const SESSIONS = intVar(process.env, 'BENCH_SESSIONS', 10_000_000, 0);
const OPEN = Math.min(SESSIONS, intVar(process.env, 'BENCH_OPEN_SESSIONS', 2000, 0));
const PG = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const MARIADB = process.env.BENCH_MARIADB_URL || 'mysql://root@127.0.0.1:3306/';
const KEEP = process.env.BENCH_KEEP === '1';
const CSV = process.env.BENCH_CSV !== '0';
const SOURCE = process.env.BENCH_SOURCE;
const SEED_ONLY = process.env.BENCH_SEED_ONLY === '1';
const DRY = process.env.BENCH_DRY !== '0';
const HEAP = process.env.BENCH_HEAP === 'default' ? 'default' : 'bound';
const SCHEMA = path.join(repoRoot(), 'test/fixtures/import/daloradius/schema.sql');
const RADACCT = path.join(repoRoot(), 'test/fixtures/import/radacct.sql');
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

const sourceUrl = (name: string) => {
  const url = new URL(MARIADB);
  url.pathname = `/${name}`;
  return url.toString();
};

async function seedMariadb(): Promise<string> {
  const name = `bench_import_${suffix}`;
  const conn = await mysql.createConnection({ uri: MARIADB, multipleStatements: true });
  await conn.query(`create database \`${name}\` character set utf8mb4`);
  await conn.query(`use \`${name}\``);
  await conn.query(`set session sql_mode = ''`);
  for (const file of [SCHEMA, RADACCT]) await conn.query(fs.readFileSync(file, 'utf8'));
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
  await seedSessions(conn);
  await conn.end();
  return sourceUrl(name);
}

/**
 * SESSIONS sessions generated in the server (MariaDB's sequence engine), a million per statement:
 * evenly over the last 360 days (inside the default 13 months of accounting retention, so the import
 * keeps every one), each 1 to 3 hours long, round-robin over the subscribers, octets varying with the
 * row; the last OPEN have no stop.
 */
async function seedSessions(conn: mysql.Connection): Promise<void> {
  if (SESSIONS === 0) return;
  const keep = new Set(['PRIMARY', 'acctuniqueid']);
  const [indexes] = (await conn.query('show index from radacct')) as unknown as [{ Key_name: string }[]];
  for (const k of new Set(indexes.map((i) => i.Key_name).filter((k) => !keep.has(k))))
    await conn.query(`alter table radacct drop index \`${k}\``);
  const t0 = Math.floor(Date.now() / 1000) - 360 * 86_400;
  const step = (355 * 86_400) / SESSIONS;
  for (let from = 1; from <= SESSIONS; from += 1_000_000) {
    const to = Math.min(SESSIONS, from + 999_999);
    await conn.query(`
      insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime,
                           acctstoptime, acctsessiontime, acctinputoctets, acctoutputoctets, callingstationid,
                           acctterminatecause, framedipaddress)
      select concat('s', seq), md5(seq), concat('user', 1 + seq % ${N}, '@bench'), '192.0.2.1',
             from_unixtime(${t0} + seq * ${step}),
             from_unixtime(${t0} + seq * ${step} + 3600 + seq % 7200 - if(seq > ${SESSIONS - OPEN}, 600, 0)),
             if(seq > ${SESSIONS - OPEN}, null, from_unixtime(${t0} + seq * ${step} + 3600 + seq % 7200)),
             3600 + seq % 7200, (seq * 7919) % 50000000, (seq * 104729) % 500000000,
             concat('AA:BB:CC:', lpad(hex(seq % 256), 2, '0'), ':00:01'),
             if(seq > ${SESSIONS - OPEN}, '', 'User-Request'), concat('10.', seq % 250, '.', (seq div 250) % 250, '.1')
        from seq_${from}_to_${to}`);
  }
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
  /** This process's resident memory before the run and at its peak, MB. */
  rss: [number, number];
  /** The peak in each tenth of the run, MB: flat memory reads the same from the second tenth on. */
  tenths: number[];
  /** PostgreSQL backends' CPU seconds. */
  pg: number;
  /** This process's CPU seconds. */
  node: number;
}

const cpuText = (t: Timing) =>
  `(PostgreSQL CPU ${t.pg.toFixed(1)} s, ours ${t.node.toFixed(1)} s, memory ${t.rss[0]} -> peak ${t.rss[1]} MB; ` +
  `peak per tenth of the run ${t.tenths.join(' ')} MB)`;
const rssMb = () => Math.round(process.memoryUsage.rss() / 1e6);

function peaksPerTenth(samples: number[]): number[] {
  const tenths = Array.from({ length: 10 }, (_, i) =>
    samples.slice(Math.floor((i * samples.length) / 10), Math.floor(((i + 1) * samples.length) / 10)),
  );
  return tenths.filter((part) => part.length).map((part) => Math.max(...part));
}

/** Runs `f` on a pool of its own whose connections stay open until the end, so their CPU is counted. */
async function measured<T>(pgUrl: string, f: (pool: Pool) => Promise<T>): Promise<[T, Timing]> {
  const db = new URL(pgUrl).pathname.slice(1);
  const pool = new Pool({ connectionString: pgUrl, max: 4, idleTimeoutMillis: 0 });
  try {
    const before = await dbBackendCpu(db);
    const cpu0 = process.cpuUsage();
    const rss: [number, number] = [rssMb(), rssMb()];
    const samples: number[] = [];
    const sampler = setInterval(() => {
      samples.push(rssMb());
      rss[1] = Math.max(rss[1], samples[samples.length - 1]);
    }, 100);
    const t0 = process.hrtime.bigint();
    let result: T;
    try {
      result = await f(pool);
    } finally {
      clearInterval(sampler);
    }
    const wall = seconds(t0);
    const cpu = process.cpuUsage(cpu0);
    const pg = cpuDelta(before, await dbBackendCpu(db));
    return [result, { wall, rss, tenths: peaksPerTenth(samples), pg, node: (cpu.user + cpu.system) / 1e6 }];
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
    `${from.padEnd(10)} ${(dryRun ? 'dry run' : 'real run').padEnd(9)} ${t.wall.toFixed(1).padStart(7)} s ${cpuText(t)}   subscribers ${e.subscribers.imported} new ${e.subscribers.unchanged} unchanged, history ${e.history.imported} new ${e.history.unchanged} unchanged, sessions ${e.sessions.imported} new ${e.sessions.unchanged} unchanged, reconciled ${report.money.reconciled && (report.sessions?.reconciled ?? true)}`,
  );
  if (!report.money.reconciled || report.sessions?.reconciled === false)
    throw new Error(`${from} ${dryRun ? 'dry run' : 'run'} does not reconcile`);
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
  'radacct',
  'daily_usage',
  'usage_seen',
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
  // Memory as `npm run import` gets it (scripts/import.ts), unless asked for V8's default.
  if (HEAP === 'bound') boundHeapGrowth();
  const load = () => `load average ${os.loadavg()[0].toFixed(1)}`;
  console.log(
    `bench:import: ${N} subscribers, ${N * H} history rows, ${SESSIONS} sessions (${OPEN} open); ${os.cpus().length} cores, ${load()}, heap growth ${HEAP}`,
  );
  let t0 = process.hrtime.bigint();
  const mariadbUrl = SOURCE ? sourceUrl(SOURCE) : await seedMariadb();
  if (!SOURCE) console.log(`seeded MariaDB in ${seconds(t0).toFixed(1)} s: ${new URL(mariadbUrl).pathname.slice(1)}`);
  if (SEED_ONLY) return;
  t0 = process.hrtime.bigint();
  const csvDir = CSV ? await writeCsv(mariadbUrl) : undefined;
  if (csvDir) console.log(`wrote the CSV files in ${seconds(t0).toFixed(1)} s`);
  const dalo = await freshPg('dalo');
  const csv = CSV ? await freshPg('csv') : undefined;
  try {
    if (DRY) await timed(dalo.url, 'daloradius', mariadbUrl, true);
    const [, real] = await timed(dalo.url, 'daloradius', mariadbUrl, false);
    const [rows, ref] = await floor(dalo.url);
    console.log(
      `reference: the same ${rows} rows copied into unindexed tables without triggers ${ref.wall.toFixed(1)} s ${cpuText(ref)}; ${load()}`,
    );
    console.log(`daloradius real run / reference: ${ratio(real, ref)}`);
    await timed(dalo.url, 'daloradius', mariadbUrl, false);
    if (csv && csvDir) {
      if (DRY) await timed(csv.url, 'csv', csvDir, true);
      const [, csvReal] = await timed(csv.url, 'csv', csvDir, false);
      console.log(`csv real run / reference: ${ratio(csvReal, ref)}; ${load()}`);
    }
  } finally {
    if (!KEEP) {
      await dalo.drop();
      await csv?.drop();
      if (csvDir) fs.rmSync(csvDir, { recursive: true, force: true });
    }
    if (!KEEP && !SOURCE) {
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
