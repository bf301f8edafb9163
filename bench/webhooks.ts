/**
 * `npm run bench:webhooks` (issue 28): what the outgoing webhooks' triggers (migration 0026) cost
 * the writes they watch. One scratch database (DATABASE_URL's server, required), three variants
 * in alternating order each round, on the same tables:
 *
 * - `off`: the webhook triggers disabled (the code before webhooks);
 * - `idle`: the triggers as shipped, no endpoint (what every installation without webhooks pays);
 * - `hooked`: one enabled endpoint for every event, so each write also writes its delivery rows
 *   (the worker does not run: sending is not the write's cost).
 *
 * Measured: payments/s through the payment's one-statement fast path (`recordPaymentUnlocked`,
 * read then compare-and-set, BENCH_WEBHOOKS_CONCURRENCY callers, default 20) over BENCH_WEBHOOKS_PAYMENTS
 * (default 2,000) payments; one INSERT of BENCH_WEBHOOKS_BATCH invoices (default 10,000, a billing
 * batch); BENCH_WEBHOOKS_BATCH subscribers blocked then restored (the sweep's set-based update).
 * Printed: each round, the medians and the ratios idle/off and hooked/off (throughput; time inverted).
 */
import { eq } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import { recordPaymentUnlocked } from '../shared/billing/record-payment';
import { intVar } from '../shared/config';
import { runMigrations } from '../shared/db/database-setup';
import { invoices } from '../shared/db/schema';
import { median, scratchStore } from './load';

const PAYMENTS = intVar(process.env, 'BENCH_WEBHOOKS_PAYMENTS', 2_000, 1);
const CONCURRENCY = intVar(process.env, 'BENCH_WEBHOOKS_CONCURRENCY', 20, 1);
const BATCH = intVar(process.env, 'BENCH_WEBHOOKS_BATCH', 10_000, 1);
const ROUNDS = intVar(process.env, 'BENCH_WEBHOOKS_ROUNDS', 3, 1);
const INVOICES = 200;

const VARIANTS = ['off', 'idle', 'hooked'] as const;
type Variant = (typeof VARIANTS)[number];

const TRIGGERS: [string, string][] = [
  ['invoices', 'webhooks_invoices_inserted'],
  ['invoices', 'webhooks_invoice_status'],
  ['invoice_payments', 'webhooks_payments_inserted'],
  ['subscribers', 'webhooks_subscribers_inserted'],
  ['subscribers', 'webhooks_subscriber_access'],
  ['subscribers', 'webhooks_subscriber_renewed'],
  ['coa_outcomes', 'webhooks_disconnects_recorded'],
];

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

async function use(pool: Pool, variant: Variant): Promise<void> {
  for (const [table, trigger] of TRIGGERS) {
    await pool.query(`alter table ${table} ${variant === 'off' ? 'disable' : 'enable'} trigger ${trigger}`);
  }
  await pool.query(`delete from webhooks`);
  if (variant === 'hooked') {
    await pool.query(
      `insert into webhooks (url, events, secret_enc)
       values ('https://hooks.example.com/', array['invoice.created','invoice.paid','invoice.overdue','payment.created',
         'subscriber.created','subscriber.expired','subscriber.renewed','subscriber.blocked','subscriber.restored',
         'subscriber.disconnected'], 'v1:x:x:x')`,
    );
  }
}

async function seed(pool: Pool): Promise<{ invoiceIds: number[]; subscriberIds: number[] }> {
  await pool.query(`insert into resellers (name, path, balance, currency) values ('bench', '', 0, 'USD')`);
  await pool.query(`update resellers set path = '/' || id || '/'`);
  await pool.query(`insert into services (name, price, currency, duration_days) values ('wh', 1000, 'USD', 30)`);
  const subs = await pool.query<{ id: number }>(
    `insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date)
     select 'wh' || g || '@bench', 'x', (select min(id) from services), (select min(id) from resellers), current_date + 30
       from generate_series(1, $1::int) g returning id`,
    [Math.max(BATCH, INVOICES)],
  );
  const subscriberIds = subs.rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  const inv = await pool.query<{ id: number }>(
    `insert into invoices (invoice_number, subscriber_id, reseller_id, amount, tax_rate, tax_amount, total, currency, issue_date, due_date)
     select 'WHB-' || s, s, (select min(id) from resellers), 100000000, 0, 0, 100000000, 'USD', current_date, current_date + 30
       from unnest($1::int[]) s returning id`,
    [subscriberIds.slice(0, INVOICES)],
  );
  return { invoiceIds: inv.rows.map((r) => Number(r.id)), subscriberIds };
}

async function paymentsPerSecond(pool: Pool, invoiceIds: number[]): Promise<number> {
  const db = drizzle(pool);
  let next = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < PAYMENTS; i = next++) {
        const id = invoiceIds[i % invoiceIds.length];
        for (;;) {
          const [invoice] = await db.select().from(invoices).where(eq(invoices.id, id));
          if (await recordPaymentUnlocked(pool, invoice, { amount: 1 })) break;
        }
      }
    }),
  );
  return PAYMENTS / seconds(t0);
}

let batchNo = 0;
async function batchSeconds(pool: Pool, subscriberIds: number[]): Promise<number> {
  batchNo += 1;
  const t0 = process.hrtime.bigint();
  await pool.query(
    `insert into invoices (invoice_number, subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount, total, currency, issue_date, due_date)
     select 'WHB' || $2::int || '-' || s, s, (select min(id) from resellers), 'renewal', 1000, 0, 0, 1000, 'USD', current_date, current_date + 7
       from unnest($1::int[]) s`,
    [subscriberIds.slice(0, BATCH), batchNo],
  );
  return seconds(t0);
}

async function blockSeconds(pool: Pool, subscriberIds: number[]): Promise<number> {
  const ids = subscriberIds.slice(0, BATCH);
  const t0 = process.hrtime.bigint();
  await pool.query(`update subscribers set blocked_reason = 'expired' where id = any($1::int[])`, [ids]);
  await pool.query(`update subscribers set blocked_reason = null where id = any($1::int[])`, [ids]);
  return seconds(t0);
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL)
    throw new Error('bench:webhooks needs DATABASE_URL (a PostgreSQL server to make a scratch database on)');
  const store = await scratchStore('webhooks');
  await runMigrations(store.env.DATABASE_URL);
  const pool = new Pool({ connectionString: store.env.DATABASE_URL, max: CONCURRENCY + 2 });
  try {
    const { invoiceIds, subscriberIds } = await seed(pool);
    const results: Record<Variant, { pay: number[]; batch: number[]; block: number[] }> = {
      off: { pay: [], batch: [], block: [] },
      idle: { pay: [], batch: [], block: [] },
      hooked: { pay: [], batch: [], block: [] },
    };
    // Counted before the next variant's `use` deletes the endpoint (and its deliveries with it).
    let hookedRows = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Each round starts with another variant, so none always meets the warmest (or fullest) tables.
      const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]);
      for (const v of order) {
        await use(pool, v);
        const pay = await paymentsPerSecond(pool, invoiceIds);
        const batch = await batchSeconds(pool, subscriberIds);
        const block = await blockSeconds(pool, subscriberIds);
        results[v].pay.push(pay);
        results[v].batch.push(batch);
        results[v].block.push(block);
        if (v === 'hooked') {
          const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from webhook_deliveries`);
          hookedRows += rows[0].n;
        }
        console.log(
          `round ${round + 1} ${v.padEnd(6)}: ${pay.toFixed(0)} payments/s; ${BATCH} invoices in ${batch.toFixed(3)} s; ` +
            `${BATCH} blocked+restored in ${block.toFixed(3)} s`,
        );
      }
    }
    const m = (v: Variant) => ({
      pay: median(results[v].pay),
      batch: median(results[v].batch),
      block: median(results[v].block),
    });
    const off = m('off');
    for (const v of VARIANTS) {
      const x = m(v);
      console.log(
        `median ${v.padEnd(6)}: ${x.pay.toFixed(0)} payments/s (${(x.pay / off.pay).toFixed(2)}x off); ` +
          `invoice batch ${x.batch.toFixed(3)} s (${(off.batch / x.batch).toFixed(2)}x); ` +
          `block+restore ${x.block.toFixed(3)} s (${(off.block / x.block).toFixed(2)}x)`,
      );
    }
    console.log(`delivery rows written by the hooked rounds: ${hookedRows}`);
  } finally {
    await pool.end();
    await store.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
