/**
 * `npm run bench:audit` (issue 28): what the audit trail costs. Two copies of the app (gateway,
 * billing, subscribers) run in child processes on one scratch database (scratchStore): one as
 * shipped, one started with `disableAuditForBench()` (shared/audit.ts), the same code with no audit
 * row written. Rounds alternate between them (the first mover alternates too), so both meet the
 * same machine, the same database and the same growing tables:
 *
 * 1. payments/s: BENCH_AUDIT_PAYMENTS payments (default 2,000) of 0.01 through
 *    POST /api/invoices/:id/payment (the one-statement fast path) at BENCH_AUDIT_CONCURRENCY
 *    concurrent callers (default 20), spread over 200 invoices;
 * 2. bulk `set_service` of BENCH_AUDIT_BULK ids (default 10,000) through
 *    POST /api/subscribers/bulk-action, seconds from the request to the job done (each round moves
 *    every id to the other plan, so every round changes every row).
 *
 * Printed: each round, the medians, and the ratio with the trail / without (target >= 0.9x).
 * BENCH_AUDIT_ROUNDS (default 3) rounds of each.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Pool } from 'pg';
import { disableAuditForBench } from '../shared/audit';
import { encrypt } from '../shared/auth/secrets';
import { intVar, parseEncryptionKey } from '../shared/config';
import { benchAdminToken, benchEnv, median, runBench, scratchStore, serveApp } from './load';

const PAYMENTS = intVar(process.env, 'BENCH_AUDIT_PAYMENTS', 2_000, 1);
const CONCURRENCY = intVar(process.env, 'BENCH_AUDIT_CONCURRENCY', 20, 1);
const BULK = intVar(process.env, 'BENCH_AUDIT_BULK', 10_000, 1);
const ROUNDS = intVar(process.env, 'BENCH_AUDIT_ROUNDS', 3, 1);
const INVOICES = 200;

type Variant = 'with' | 'without';

interface Server {
  child: ChildProcess;
  baseUrl: string;
  databaseUrl: string;
}

/** This script forked as the app: `serve` (as shipped) or `serve off` (no audit rows). */
function start(variant: Variant, env: NodeJS.ProcessEnv): Promise<Server> {
  const child = fork(__filename, variant === 'with' ? ['serve'] : ['serve', 'off'], { env, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...(m as { baseUrl: string; databaseUrl: string }) }));
    child.once('exit', (code) => reject(new Error(`server (${variant}) exited with code ${code}`)));
  });
}

async function stop(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.send('stop');
  await exited;
}

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

async function seed(pool: Pool, encryptionKey: string): Promise<{ plans: [number, number]; ids: number[] }> {
  await pool.query(`insert into resellers (name, path, balance, currency) values ('bench', '', 100000000000, 'USD')`);
  await pool.query(`update resellers set path = '/' || id || '/'`);
  const plans = await pool.query<{
    id: number;
  }>(`insert into services (name, price, currency, duration_days, rate_limit)
    values ('audit-basic', 1000, 'USD', 30, '5M/10M'), ('audit-plus', 2000, 'USD', 30, '10M/20M') returning id`);
  const [a, b] = plans.rows.map((r) => Number(r.id));
  await pool.query(
    `insert into reseller_service_limits (reseller_id, service_id) select r.id, s.id from resellers r, services s`,
  );
  const passwordEnc = encrypt('benchpass', parseEncryptionKey(encryptionKey));
  const subs = await pool.query<{ id: number }>(
    `insert into subscribers (username, password_enc, full_name, service_id, reseller_id, expiry_date)
     select 'audit' || g || '@bench', $1, 'Subscriber ' || g, $2, (select min(id) from resellers), current_date + 30
       from generate_series(1, $3::int) g
     returning id`,
    [passwordEnc, a, Math.max(BULK, INVOICES)],
  );
  return { plans: [a, b], ids: subs.rows.map((r) => Number(r.id)).sort((x, y) => x - y) };
}

function caller(baseUrl: string, token: string) {
  return async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const out = (await res.json()) as T;
    if (res.status >= 300 && res.status !== 202)
      throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
    return { status: res.status, body: out };
  };
}

async function paymentsPerSecond(call: ReturnType<typeof caller>, invoices: number[]): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < PAYMENTS; i = next++) {
        await call('POST', `/api/invoices/${invoices[i % invoices.length]}/payment`, { amount: 0.01 });
      }
    }),
  );
  return PAYMENTS / seconds(t0);
}

async function bulkSeconds(call: ReturnType<typeof caller>, ids: number[], serviceId: number): Promise<number> {
  const t0 = process.hrtime.bigint();
  const res = await call<{ job_id?: number; data: { job_id?: number; failed?: unknown[] } }>(
    'POST',
    '/api/subscribers/bulk-action',
    { ids, action: 'set_service', payload: { service_id: serviceId } },
  );
  const jobId = res.body.data.job_id ?? res.body.job_id;
  if (res.status === 202) {
    for (;;) {
      const job = await call<{ data: { status: string; failed: unknown[] } }>(
        'GET',
        `/api/subscribers/bulk-jobs/${jobId}`,
      );
      if (job.body.data.status !== 'running') {
        if (job.body.data.failed.length) throw new Error(`bulk job ${jobId}: ${job.body.data.failed.length} failed`);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } else if (res.body.data.failed?.length) throw new Error(`bulk: ${res.body.data.failed.length} failed`);
  return seconds(t0);
}

async function main(): Promise<void> {
  const store = await scratchStore('audit');
  const env: NodeJS.ProcessEnv = {
    ...benchEnv(),
    ...store.env,
    SERVICES: 'gateway,billing,subscribers',
    // No sweep of its own during the rounds: both copies would run one against the same rows.
    LIFECYCLE_INTERVAL_SECONDS: '0',
  };
  const withTrail = await start('with', env);
  const without = await start('without', { ...env, DATABASE_URL: withTrail.databaseUrl });
  const pool = new Pool({ connectionString: withTrail.databaseUrl, max: 2 });
  try {
    const token = await benchAdminToken(pool, env.JWT_SECRET!);
    const calls: Record<Variant, ReturnType<typeof caller>> = {
      with: caller(withTrail.baseUrl, token),
      without: caller(without.baseUrl, token),
    };
    const { plans, ids } = await seed(pool, env.ENCRYPTION_KEY!);
    const invoices: number[] = [];
    for (const id of ids.slice(0, INVOICES)) {
      const items = [{ description: 'bench', qty: 1, unit_price: 1_000_000 }];
      const res = await calls.with<{ data: { id: number } }>('POST', '/api/invoices', {
        subscriber_id: id,
        items,
        due_date: '2099-01-01',
      });
      invoices.push(res.body.data.id);
    }
    console.log(
      `audit trail cost: ${ROUNDS} alternating rounds; ${PAYMENTS} payments at ${CONCURRENCY} concurrent over ${INVOICES} invoices; bulk set_service of ${BULK} ids`,
    );
    const rates: Record<Variant, number[]> = { with: [], without: [] };
    const bulk: Record<Variant, number[]> = { with: [], without: [] };
    const order = (r: number): Variant[] => (r % 2 === 0 ? ['with', 'without'] : ['without', 'with']);
    // One warm-up payment round each: prepared statements, pools, JIT.
    for (const v of order(0)) await paymentsPerSecond(calls[v], invoices);
    for (let r = 0; r < ROUNDS; r++) {
      for (const v of order(r)) {
        const rate = await paymentsPerSecond(calls[v], invoices);
        rates[v].push(rate);
        console.log(`  payments round ${r + 1} ${v.padEnd(7)} the trail: ${rate.toFixed(0)} payments/s`);
      }
    }
    let target = 1;
    for (let r = 0; r < ROUNDS; r++) {
      for (const v of order(r)) {
        const s = await bulkSeconds(calls[v], ids.slice(0, BULK), plans[target]);
        target = 1 - target;
        bulk[v].push(s);
        console.log(
          `  bulk round ${r + 1} ${v.padEnd(7)} the trail: ${s.toFixed(2)} s (${(BULK / s).toFixed(0)} ids/s)`,
        );
      }
    }
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from audit_log where action = 'subscriber.set_service'`,
    );
    const payWith = median(rates.with);
    const payWithout = median(rates.without);
    const bulkWith = median(bulk.with);
    const bulkWithout = median(bulk.without);
    console.log(
      `payments/s (median): with the trail ${payWith.toFixed(0)}, without ${payWithout.toFixed(0)}; ratio ${(payWith / payWithout).toFixed(2)}x (target >= 0.9x)`,
    );
    console.log(
      `bulk set_service ${BULK} ids (median): with the trail ${bulkWith.toFixed(2)} s, without ${bulkWithout.toFixed(2)} s; ratio ${(bulkWithout / bulkWith).toFixed(2)}x (throughput with / without; target >= 0.9x)`,
    );
    console.log(`audit rows written by the bulk rounds with the trail: ${rows[0].n} (one per id per round)`);
  } finally {
    await pool.end();
    await stop(without);
    await stop(withTrail);
    await store.dispose();
  }
}

runBench(main, async (args) => {
  if (args[0] === 'off') disableAuditForBench();
  await serveApp();
});
