/**
 * `npm run bench:upgrade`: a rolling upgrade of the distributed mode under load, with two builds of
 * the code (docs/operations.md, "Rolling upgrade"). The cluster runs build A (this dist/) as
 * gateway, two billing and two subscribers processes over NATS. Build B is a copy of dist/ and of
 * the migrations with one more migration (a nullable column `invoice_payments.channel`) and one
 * more field in the invoice view (each payment's `channel`). While BENCH_UPGRADE_CLIENTS clients
 * pay and read without pause, each billing and subscribers process is replaced in turn: B's process
 * is started (the first one applies the migration), joins the bus, then A's is sent SIGTERM and
 * drains. After 10 s of warm-up, printed: payments/s and reads/s during the upgrade beside the same load without it, in
 * the same run; failed requests; payments acknowledged but missing (lost); the field served by B.
 * Exits 1 when a request failed, a payment was lost or B's field is not served.
 *
 * Environment (all optional):
 *   DATABASE_URL   a scratch database (build B migrates it; unset: an embedded PostgreSQL)
 *   BENCH_UPGRADE_REUSE  the name of a kept database on DATABASE_URL's server, e.g. one seeded at
 *                  the issue's scale by bench:reports (BENCH_KEEP=1): the clients' subscribers and
 *                  invoices are added beside its rows, and build B's column is dropped again after
 *   TRANSPORTER    nats://127.0.0.1:4222
 *   BENCH_UPGRADE_CLIENTS 50    BENCH_UPGRADE_BASELINE 20 (seconds of load without the upgrade)
 *   BENCH_UPGRADE_LOG  a file for the processes' log lines (a failed request's cause); unset: dropped
 * The lifecycle and usage sweeps are off (unless set): on a big base their catch-up at each
 * process start would be measured, not the API. PG_POOL_SIZE is 10 (unless set): six processes
 * at the overlap of a replacement, each with its own pool, stay under PostgreSQL's 100
 * connections (the default 20 each asked 120 of them when queries on a big base held them longer).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { intVar } from '../shared/config';
import { repoRoot } from '../shared/paths';
import { startCluster, type Cluster, type ClusterProcess } from '../runtime/cluster';
import { benchAdminToken, benchEnv, reusedStore } from './load';
import { scratchDataDir } from './scratch';

const CLIENTS = intVar(process.env, 'BENCH_UPGRADE_CLIENTS', 50, 1);
const BASELINE_S = intVar(process.env, 'BENCH_UPGRADE_BASELINE', 20, 1);
const SETTLE_MS = 5000;
const WARMUP_S = 10;
const MIGRATION_TAG = '9000_upgrade_bench_channel';

/** Build B: dist/ and shared/db copied and changed, everything else linked to this checkout. */
function makeBuildB(): { entry: string; migrationWhen: number; dispose(): void } {
  const root = repoRoot();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-upgrade-build-b-'));
  fs.chmodSync(dir, 0o755);
  for (const name of fs.readdirSync(root)) {
    if (name === 'dist' || name === 'shared' || name.startsWith('.')) continue;
    fs.symlinkSync(fs.realpathSync(path.join(root, name)), path.join(dir, name));
  }
  fs.mkdirSync(path.join(dir, 'shared'));
  for (const name of fs.readdirSync(path.join(root, 'shared'))) {
    if (name !== 'db') fs.symlinkSync(path.join(root, 'shared', name), path.join(dir, 'shared', name));
  }
  fs.cpSync(path.join(root, 'shared', 'db'), path.join(dir, 'shared', 'db'), { recursive: true });
  fs.cpSync(path.join(root, 'dist'), path.join(dir, 'dist'), { recursive: true });

  const migrations = path.join(dir, 'shared', 'db', 'migrations');
  fs.writeFileSync(
    path.join(migrations, `${MIGRATION_TAG}.sql`),
    // IF NOT EXISTS: a reused database that a failed run left at build B's level.
    'ALTER TABLE "invoice_payments" ADD COLUMN IF NOT EXISTS "channel" text;\n',
  );
  const journalFile = path.join(migrations, 'meta', '_journal.json');
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as {
    entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[];
  };
  const last = journal.entries[journal.entries.length - 1];
  const migrationWhen = Date.now();
  journal.entries.push({
    idx: last.idx + 1,
    version: last.version,
    when: migrationWhen,
    tag: MIGRATION_TAG,
    breakpoints: true,
  });
  fs.writeFileSync(journalFile, JSON.stringify(journal, null, 2));

  const view = path.join(dir, 'dist', 'services', 'billing', 'invoice-json.js');
  const source = fs.readFileSync(view, 'utf8');
  const changed = source.replace("'notes', p.notes,", "'notes', p.notes, 'channel', p.channel,");
  if (changed === source) throw new Error(`build B: the payment view in ${view} has changed: adapt this bench`);
  fs.writeFileSync(view, changed);
  return {
    entry: path.join(dir, 'dist', 'server.js'),
    migrationWhen,
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

async function api<T>(base: string, method: string, url: string, token?: string, body?: unknown): Promise<T> {
  const res = await fetch(base + url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

interface Seeded {
  token: string;
  invoices: number[];
  subscribers: number[];
}

/** The clients' plan, reseller, subscribers and invoices; names carry `run`, so a kept database takes them again. */
async function seed(base: string, token: string, run: string): Promise<Seeded> {
  const plan = await api<{ id: number }>(base, 'POST', '/api/services', token, {
    name: `Upgrade bench ${run}`,
    price: 20,
    duration_days: 30,
  });
  const reseller = await api<{ id: number }>(base, 'POST', '/api/resellers', token, {
    name: 'Upgrade bench',
    balance: 100000,
  });
  await api(base, 'POST', `/api/resellers/${reseller.id}/service-limits`, token, {
    service_id: plan.id,
    max_subscribers: CLIENTS,
  });
  const invoices: number[] = [];
  const subscribers: number[] = [];
  for (let i = 0; i < CLIENTS; i++) {
    const sub = await api<{ id: number }>(base, 'POST', '/api/subscribers', token, {
      username: `upgrade-${run}-${i}@isp`,
      password: 'pw',
      service_id: plan.id,
      reseller_id: reseller.id,
    });
    const invoice = await api<{ id: number }>(base, 'POST', '/api/invoices', token, {
      subscriber_id: sub.id,
      items: [{ description: 'Upgrade bench', qty: 1, unit_price: 10_000_000 }],
    });
    subscribers.push(sub.id);
    invoices.push(invoice.id);
  }
  return { token, invoices, subscribers };
}

interface Load {
  payments: number[];
  reads: number;
  failed: string[];
  seconds: number;
}

/** Every client pays its invoice, reads it, reads its subscriber, again, until `until` resolves. */
async function runLoad(base: string, s: Seeded, until: Promise<unknown>): Promise<Load> {
  let stop = false;
  void until.then(() => {
    stop = true;
  });
  const out: Load = { payments: [], reads: 0, failed: [], seconds: 0 };
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${s.token}` };
  const started = Date.now();
  const call = async (method: string, url: string, body?: unknown): Promise<Response | undefined> => {
    try {
      const res = await fetch(base + url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status === 200) return res;
      out.failed.push(`${method} ${url}: ${res.status} ${await res.text()}`);
    } catch (err) {
      const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
      out.failed.push(`${method} ${url}: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`);
    }
    return undefined;
  };
  await Promise.all(
    s.invoices.map(async (invoiceId, c) => {
      while (!stop) {
        const paid = await call('POST', `/api/invoices/${invoiceId}/payment`, { amount: 0.01, method: 'cash' });
        if (paid) out.payments.push(((await paid.json()) as { data: { payment: { id: number } } }).data.payment.id);
        for (const url of [`/api/invoices/${invoiceId}`, `/api/subscribers/${s.subscribers[c]}`]) {
          const read = await call('GET', url);
          if (!read) continue;
          await read.arrayBuffer();
          out.reads++;
        }
      }
    }),
  );
  out.seconds = (Date.now() - started) / 1000;
  return out;
}

/** Each billing and subscribers process of build A replaced by one of build B, one at a time. */
async function rollingUpgrade(cluster: Cluster, entry: string, log: string[]): Promise<void> {
  const old = cluster.processes.filter((p) => p.units === 'billing' || p.units === 'subscribers');
  for (const p of old) {
    const started = Date.now();
    const next: ClusterProcess = await cluster.add(p.units, entry);
    await cluster.waitForNode(next.nodeID);
    // The gateway learns of the new node from the same broadcast, but acts on it a heartbeat later at worst.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    p.child.kill('SIGTERM');
    const code = await p.exited;
    log.push(
      `${p.units}: ${p.nodeID} -> ${next.nodeID} in ${((Date.now() - started) / 1000).toFixed(1)} s (old exited ${code})`,
    );
  }
  // A moment of load on build B alone, so what it serves is measured too.
  await new Promise((r) => setTimeout(r, 2000));
}

/** Checked on the clients' invoices only: a reused base holds others. */
async function lost(
  databaseUrl: string,
  invoices: number[],
  acknowledged: number[],
): Promise<{ missing: number; extra: number; unbalanced: number }> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const found = await db.query<{ n: number }>('select count(*)::int as n from invoice_payments where id = any($1)', [
      acknowledged,
    ]);
    const all = await db.query<{ n: number }>(
      'select count(*)::int as n from invoice_payments where invoice_id = any($1)',
      [invoices],
    );
    const unbalanced = await db.query<{ n: number }>(
      `select count(*)::int as n from invoices i
        where i.id = any($1)
          and i.paid_amount <> coalesce((select sum(p.amount) from invoice_payments p where p.invoice_id = i.id), 0)`,
      [invoices],
    );
    return {
      missing: acknowledged.length - found.rows[0].n,
      extra: all.rows[0].n - found.rows[0].n,
      unbalanced: unbalanced.rows[0].n,
    };
  } finally {
    await db.end();
  }
}

function processLog(file: string | undefined): (units: string, line: string) => void {
  if (!file) return () => undefined;
  const out = fs.createWriteStream(file, { flags: 'a' });
  return (units, line) => out.write(`[${units}] ${line}\n`);
}

/** What a reused base holds, counted (the figure is read beside it). */
async function baseSize(databaseUrl: string, name: string): Promise<string> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ s: number; l: number; size: string }>(
      `select (select count(*) from subscribers)::int as s, (select count(*) from transactions)::int as l,
              pg_size_pretty(pg_database_size(current_database())) as size`,
    );
    return `reusing ${name}: ${rows[0].s.toLocaleString('en')} subscribers, ${rows[0].l.toLocaleString('en')} ledger rows, ${rows[0].size}`;
  } finally {
    await db.end();
  }
}

/**
 * A reused base goes back to this checkout's level: without build B's journal row (whose time is
 * now) the migrator would skip any real migration dated before this run.
 */
async function backToBuildA(databaseUrl: string, migrationWhen: number): Promise<void> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('alter table invoice_payments drop column if exists channel');
    await db.query('delete from drizzle.__drizzle_migrations where created_at = $1', [migrationWhen]);
  } finally {
    await db.end();
  }
}

async function main(): Promise<number> {
  const transporter = process.env.TRANSPORTER || 'nats://127.0.0.1:4222';
  const reuse = process.env.BENCH_UPGRADE_REUSE;
  const databaseUrl = reuse
    ? reusedStore('BENCH_UPGRADE_REUSE', reuse).env.DATABASE_URL
    : process.env.DATABASE_URL || '';
  const scratch = scratchDataDir('upgrade');
  const build = makeBuildB();
  const run = crypto.randomBytes(4).toString('hex');
  const env = benchEnv();
  console.log(`bench:upgrade  ${CLIENTS} clients, ${os.cpus().length} cores, NATS ${transporter}`);
  if (reuse) console.log(await baseSize(databaseUrl, reuse));
  const cluster = await startCluster({
    env: {
      ...env,
      SERVICES: 'gateway,billing,billing,subscribers,subscribers',
      // Our own namespace: another cluster on the same NATS must not answer our requests.
      NAMESPACE: `upgrade-bench-${run}`,
      TRANSPORTER: transporter,
      DATABASE_URL: databaseUrl,
      DATA_DIR: scratch.dir,
      PORT: '0',
      PUBLIC_RATE_LIMIT_PER_MIN: '1000000000',
      LIFECYCLE_INTERVAL_SECONDS: env.LIFECYCLE_INTERVAL_SECONDS ?? '0',
      USAGE_INTERVAL_SECONDS: env.USAGE_INTERVAL_SECONDS ?? '0',
      PG_POOL_SIZE: env.PG_POOL_SIZE ?? '10',
    },
    output: processLog(process.env.BENCH_UPGRADE_LOG),
  });
  try {
    const admin = new Client({ connectionString: cluster.databaseUrl });
    await admin.connect();
    const token = await benchAdminToken(admin, env.JWT_SECRET!).finally(() => admin.end());
    const seeded = await seed(cluster.baseUrl, token, run);
    // Warm-up, not counted: the first seconds of a fresh cluster (JIT, pools, plans) are slower.
    const warmup = await runLoad(cluster.baseUrl, seeded, new Promise((r) => setTimeout(r, WARMUP_S * 1000)));
    const baseline = await runLoad(cluster.baseUrl, seeded, new Promise((r) => setTimeout(r, BASELINE_S * 1000)));
    const steps: string[] = [];
    const upgrade = rollingUpgrade(cluster, build.entry, steps);
    const during = await runLoad(
      cluster.baseUrl,
      seeded,
      upgrade.catch(() => undefined),
    );
    await upgrade;

    const view = await api<{ payments: Record<string, unknown>[] }>(
      cluster.baseUrl,
      'GET',
      `/api/invoices/${seeded.invoices[0]}`,
      seeded.token,
    );
    const fieldServed = view.payments.length > 0 && view.payments.every((p) => 'channel' in p);
    const check = await lost(cluster.databaseUrl, seeded.invoices, [
      ...warmup.payments,
      ...baseline.payments,
      ...during.payments,
    ]);

    const rate = (n: number, s: number) => (n / s).toFixed(1).padStart(7);
    console.log('');
    for (const line of steps) console.log(`  replaced ${line}`);
    console.log('');
    console.log(
      `without upgrade  ${rate(baseline.payments.length, baseline.seconds)} payments/s  ${rate(baseline.reads, baseline.seconds)} reads/s  over ${baseline.seconds.toFixed(1)} s, ${baseline.failed.length} failed`,
    );
    console.log(
      `during upgrade   ${rate(during.payments.length, during.seconds)} payments/s  ${rate(during.reads, during.seconds)} reads/s  over ${during.seconds.toFixed(1)} s, ${during.failed.length} failed`,
    );
    console.log(
      `-> payments/s during the upgrade: ${(during.payments.length / during.seconds / (baseline.payments.length / baseline.seconds)).toFixed(2)}x the rate without it`,
    );
    console.log(
      `payments acknowledged ${warmup.payments.length + baseline.payments.length + during.payments.length}, lost ${check.missing}, unacknowledged but stored ${check.extra}, invoices whose paid amount differs from their payments ${check.unbalanced}`,
    );
    console.log(`build B's field (payments[].channel) served after the upgrade: ${fieldServed ? 'yes' : 'NO'}`);
    for (const f of [...baseline.failed, ...during.failed].slice(0, 10)) console.log(`  failed: ${f}`);
    const ok =
      baseline.failed.length + during.failed.length === 0 &&
      check.missing === 0 &&
      check.unbalanced === 0 &&
      fieldServed;
    return ok ? 0 : 1;
  } finally {
    if (reuse) await backToBuildA(cluster.databaseUrl, build.migrationWhen);
    await cluster.stop();
    build.dispose();
    scratch.dispose();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
