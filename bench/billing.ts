/**
 * `npm run bench:billing`: seeds invoices with set-based SQL, serves the app from a child process
 * (so the load generator does not share the server's event loop), then prints invoice reads/s and
 * list pages/s through HTTP (autocannon), payments/s with concurrent payers, and the count of
 * invoices whose paid_amount differs from the sum of their payments.
 *
 * Environment (all optional):
 *   DATABASE_URL        target database (unset: the embedded PostgreSQL of ./data)
 *   BENCH_INVOICES      100000     BENCH_SUBSCRIBERS 10000     BENCH_RESELLERS 10
 *   BENCH_CONNECTIONS   50         BENCH_DURATION    10 (seconds per HTTP phase)
 *   BENCH_PAYERS        50         BENCH_RESET=1 truncates the billing tables first
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Pool } from 'pg';
import { signToken } from '../shared/auth/jwt';
import { intVar, loadConfig } from '../shared/config';
import { startApp } from '../shared/runtime/app';
import { autocannon, benchEnv, runBench } from './load';

const env = (name: string, fallback: number) => intVar(process.env, name, fallback, 1);
const INVOICES = env('BENCH_INVOICES', 100_000);
const SUBSCRIBERS = env('BENCH_SUBSCRIBERS', 10_000);
const RESELLERS = env('BENCH_RESELLERS', 10);
const CONNECTIONS = env('BENCH_CONNECTIONS', 50);
const DURATION = env('BENCH_DURATION', 10);
const PAYERS = env('BENCH_PAYERS', 50);

/** Child mode: run the app and report where it listens. */
async function serve(): Promise<void> {
  const app = await startApp(loadConfig(process.env));
  process.send?.({ baseUrl: app.baseUrl, databaseUrl: app.databaseUrl });
  process.on('message', (m) => {
    if (m === 'stop') void app.stop().then(() => process.exit(0));
    if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpu: user + system });
    }
  });
}

async function startServer(): Promise<{ child: ChildProcess; baseUrl: string; databaseUrl: string }> {
  const child = fork(__filename, ['serve'], { env: benchEnv(), stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...(m as { baseUrl: string; databaseUrl: string }) }));
    child.once('exit', (code) => reject(new Error(`server exited with code ${code}`)));
  });
}

type Server = { child: ChildProcess; baseUrl: string };

/**
 * The server process's CPU time so far in µs. CPU per request is printed beside the rates because
 * it moves far less than req/s on a host whose steal and neighbours vary from run to run.
 */
function serverCpu(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.child.once('message', (m) => resolve((m as { cpu: number }).cpu));
    server.child.send('cpu');
  });
}

async function seed(pool: Pool): Promise<{ minId: number; maxId: number; subscriberIds: number[]; resellerIds: number[] }> {
  const c = await pool.connect();
  try {
    if (process.env.BENCH_RESET === '1') {
      await c.query(`truncate invoices, invoice_items, invoice_payments, transactions, wallet_entries, invoice_sequences, idempotency_keys restart identity`);
    }
    const { rows: [{ n }] } = await c.query<{ n: number }>('select count(*)::int as n from invoices');
    if (n > 0) throw new Error(`the database already holds ${n} invoices; point DATABASE_URL at an empty one or set BENCH_RESET=1`);
    const tag = Date.now().toString(36);
    const t0 = Date.now();
    await c.query('begin');
    const { rows: resellers } = await c.query<{ id: number }>(
      `insert into resellers (name, path, currency, commission_rate)
       select 'bench-' || $1 || '-' || g, '', 'USD', 10 from generate_series(1, $2) g returning id`,
      [tag, RESELLERS],
    );
    await c.query(`update resellers set path = '/' || id || '/' where path = ''`);
    const { rows: [plan] } = await c.query<{ id: number }>(
      `insert into services (name, price, currency, duration_days) values ('bench-' || $1, 3000, 'USD', 30) returning id`,
      [tag],
    );
    const resellerIds = resellers.map((r) => r.id);
    const { rows: subs } = await c.query<{ id: number }>(
      `insert into subscribers (username, password_enc, full_name, service_id, reseller_id, expiry_date)
       select 'bench' || g || '-' || $1 || '@isp', 'x', 'Bench User ' || g, $2, ($3::int[])[1 + g % cardinality($3::int[])], current_date + 30
       from generate_series(1, $4) g returning id`,
      [tag, plan.id, resellerIds, SUBSCRIBERS],
    );
    const subscriberIds = subs.map((s) => s.id);
    // One third paid (with their payment and ledger rows), the rest pending; amounts 10.00 to 59.00.
    await c.query(
      `insert into invoices (invoice_number, subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount, total,
         paid_amount, status, currency, issue_date, due_date, paid_at, commission_rate, commission_amount, public_token_nonce)
       select 'INV-2025-' || lpad(g::text, 6, '0'), s.id, s.reseller_id, 'manual', a.v, 0, 0, a.v,
         case when g % 3 = 0 then a.v else 0 end, case when g % 3 = 0 then 'paid' else 'pending' end, 'USD',
         date '2025-01-01' + (g % 365), date '2025-01-01' + (g % 365) + 3650,
         case when g % 3 = 0 then now() end, 10, a.v / 10, md5(g::text || random()::text)
       from generate_series(1, $1) g
       cross join lateral (select 1000 + (g % 50) * 100 as v) a
       join subscribers s on s.id = ($2::int[])[1 + g % cardinality($2::int[])]`,
      [INVOICES, subscriberIds],
    );
    await c.query(
      `insert into invoice_items (invoice_id, position, description, qty, unit_price, amount)
       select id, 0, 'Monthly plan', 1, amount, amount from invoices`,
    );
    await c.query(
      `insert into transactions (type, amount, currency, subscriber_id, reseller_id, invoice_id, method)
       select 'invoice_payment', total, currency, subscriber_id, reseller_id, id, 'cash' from invoices where status = 'paid'`,
    );
    await c.query(
      `insert into invoice_payments (invoice_id, transaction_id, amount, method, paid_at)
       select invoice_id, id, amount, method, created_at from transactions where type = 'invoice_payment'`,
    );
    await c.query(
      `insert into invoice_sequences (prefix, year, last_value) values ('INV', 2025, $1)
       on conflict (prefix, year) do update set last_value = excluded.last_value`,
      [INVOICES],
    );
    await c.query('commit');
    // Steady state as autovacuum would leave it: statistics, and the visibility map that lets the
    // exact list counts run as index-only scans.
    await c.query('vacuum (analyze) invoices, invoice_items, invoice_payments, transactions, subscribers, resellers');
    const { rows: [r] } = await c.query<{ min: number; max: number }>('select min(id)::int as min, max(id)::int as max from invoices');
    console.log(`seeded ${INVOICES} invoices for ${SUBSCRIBERS} subscribers of ${RESELLERS} resellers in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    return { minId: r.min, maxId: r.max, subscriberIds, resellerIds };
  } catch (err) {
    await c.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

const pick = <T>(list: T[]): T => list[Math.floor(Math.random() * list.length)];
const randInt = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function httpPhase(name: string, server: Server, token: string, nextPath: () => string, duration = DURATION): Promise<void> {
  const latencies: number[] = [];
  const cpuBefore = await serverCpu(server);
  const instance = autocannon({
    url: server.baseUrl,
    connections: CONNECTIONS,
    duration,
    headers: { authorization: `Bearer ${token}` },
    requests: [{ setupRequest: (req) => ({ ...req, method: 'GET', path: nextPath() }) }],
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status === 200) latencies.push(ms);
  });
  const result = await instance;
  const cpu = (await serverCpu(server)) - cpuBefore;
  if (!name) return; // warm-up: nothing to report
  latencies.sort((a, b) => a - b);
  const perSecond = latencies.length / duration;
  console.log(
    `${name.padEnd(34)} ${perSecond.toFixed(0).padStart(7)} req/s   p50 ${percentile(latencies, 50).toFixed(1)} ms   ` +
      `p95 ${percentile(latencies, 95).toFixed(1)} ms   server CPU ${(cpu / Math.max(1, result.requests.total)).toFixed(0)} µs/req   ` +
      `non-2xx ${result.non2xx}   errors ${result.errors}`,
  );
}

/**
 * PAYERS connections each pay 1.00 on a random invoice of a pool of pending ones for DURATION
 * seconds, through the same load generator as the reads (autocannon): a `fetch` loop per payer cost
 * more CPU than the server it was measuring on this 2-core machine. A payment refused because the
 * invoice was paid off meanwhile (400) is not counted; any other non-200 is a failure.
 */
async function paymentPhase(server: Server, token: string, pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ id: number }>(
    `select id from invoices where status = 'pending' order by random() limit $1`,
    [PAYERS * 200],
  );
  const ids = rows.map((r) => r.id);
  const latencies: number[] = [];
  let failed = 0;
  const cpuBefore = await serverCpu(server);
  const instance = autocannon({
    url: server.baseUrl,
    connections: PAYERS,
    duration: DURATION,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [{
      setupRequest: (req) => ({ ...req, method: 'POST', path: `/api/invoices/${pick(ids)}/payment`, body: JSON.stringify({ amount: 1, method: 'cash' }) }),
    }],
  });
  instance.on('response', (_client, status, _bytes, ms) => {
    if (status === 200) latencies.push(ms);
    else if (status !== 400) failed++;
  });
  const result = await instance;
  const cpu = (await serverCpu(server)) - cpuBefore;
  latencies.sort((a, b) => a - b);
  console.log(
    `${'POST /api/invoices/:id/payment'.padEnd(34)} ${(latencies.length / DURATION).toFixed(0).padStart(7)} pay/s   ` +
      `p50 ${percentile(latencies, 50).toFixed(1)} ms   p95 ${percentile(latencies, 95).toFixed(1)} ms   ` +
      `server CPU ${(cpu / Math.max(1, result.requests.total)).toFixed(0)} µs/req   ` +
      `(${PAYERS} payers, ${latencies.length} payments, ${failed} failures)`,
  );
}

async function invariantViolations(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`
    select count(*)::int as n from invoices i
    left join (select invoice_id, sum(amount) as paid, count(*) as n from invoice_payments group by invoice_id) p on p.invoice_id = i.id
    left join (select invoice_id, count(*) as n from transactions where type = 'invoice_payment' group by invoice_id) x on x.invoice_id = i.id
    where i.paid_amount <> coalesce(p.paid, 0) or i.paid_amount > i.total or coalesce(p.n, 0) <> coalesce(x.n, 0)
       or (i.status = 'paid') <> (i.paid_amount = i.total and i.status <> 'void')`);
  return rows[0].n;
}

async function main(): Promise<void> {
  const server = await startServer();
  const pool = new Pool({ connectionString: server.databaseUrl, max: 4 });
  try {
    const { minId, maxId, subscriberIds, resellerIds } = await seed(pool);
    const cfg = loadConfig(benchEnv());
    const token = signToken({ managerId: 1, role: 'admin', resellerId: null, permissions: [] }, cfg.jwtSecret, 3600).token;
    const subscriberPages = Math.max(1, Math.floor(INVOICES / SUBSCRIBERS / 50));
    const resellerPages = Math.max(1, Math.floor(INVOICES / RESELLERS / 50));
    // Warm-up (JIT, prepared statements on every pooled connection), not reported.
    await httpPhase('', server, token, () => (Math.random() < 0.5 ? `/api/invoices/${randInt(minId, maxId)}` : `/api/invoices?subscriber_id=${pick(subscriberIds)}`), 3);
    console.log(`HTTP: ${CONNECTIONS} connections, ${DURATION} s per phase, admin token`);
    await httpPhase('GET /api/invoices/:id', server, token, () => `/api/invoices/${randInt(minId, maxId)}`);
    await httpPhase('GET /api/invoices?subscriber_id=', server, token, () => `/api/invoices?subscriber_id=${pick(subscriberIds)}&page=${randInt(1, subscriberPages)}`);
    await httpPhase('GET /api/invoices?reseller_id=&page=', server, token, () => `/api/invoices?reseller_id=${pick(resellerIds)}&page=${randInt(1, Math.min(resellerPages, 20))}`);
    await httpPhase('GET /api/invoices?page=', server, token, () => `/api/invoices?page=${randInt(1, 20)}`);
    await paymentPhase(server, token, pool);
    console.log(`invariant violations (paid_amount vs payments, ledger rows, status): ${await invariantViolations(pool)}`);
  } finally {
    await pool.end();
    server.child.send('stop');
  }
}

runBench(main, serve);
