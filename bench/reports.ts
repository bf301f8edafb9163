/**
 * `npm run bench:reports` (issue 38): the dashboard and every report against a seeded base, each
 * timed through the API beside the same statements run as raw SQL on a pool of their own in the same
 * run (the ratio is what the service adds: auth, scope, JSON, HTTP).
 *
 * Seeded in SQL on a scratch database (scratchStore): BENCH_REPORTS_SUBSCRIBERS subscribers (default
 * 1,000,000) under 200 resellers (10 top ones, each with 19 below it: a top reseller's tree holds a
 * tenth of the base), BENCH_REPORTS_LEDGER ledger rows (default 10,000,000) over the last 400 days
 * (payments by five methods, wallet top-ups, renewals, reseller top-ups), an invoice per 5
 * subscribers (a fifth open), open sessions for a tenth of them, 30 days of usage for a tenth, and
 * 100 card batches. The ledger goes in without its triggers and ledger_rollup is filled from it once
 * (the triggers' exactness is the property test's); subscribers go in through subscriber_counts' triggers.
 *
 * Timed, BENCH_REPORTS_SAMPLES times each (default 20, after 3 warm-up calls), for an admin (the
 * whole base) and for a top reseller (a tenth): the dashboard, and each report over the last month
 * and over the last year. Printed: p50 and p95 in ms, API beside raw SQL. Targets: dashboard
 * p95 < 100 ms, a report over a year p95 < 500 ms.
 *
 * Seeding the full scale takes tens of minutes: BENCH_KEEP=1 (with DATABASE_URL) keeps the scratch
 * database, and BENCH_REPORTS_REUSE=<its name> times against it again without seeding (the app's
 * migrations still run on it, so a new one is measured on the same rows). Its sizes are read from it.
 * BENCH_REPORTS_SEED_ONLY=1 seeds (and, with BENCH_KEEP=1, keeps) without timing.
 */
import { Pool, type PoolClient } from 'pg';
import { signToken } from '../shared/auth/jwt';
import { addDays, todayUtc } from '../shared/billing/dates';
import { intVar } from '../shared/config';
import { foldLedgerRollup } from '../shared/db/ledger-rollup';
import { foldSubscriberCounts } from '../shared/db/subscriber-counts';
import { addMonths } from '../services/reports/periods';
import * as q from '../services/reports/queries';
import type { ReportScope } from '../services/reports/scope';
import { benchAdminToken, IN_PROCESS_SECRETS, percentile, scratchStore, startInProcessApp } from './load';
import { ROLLUP_OF_LEDGER } from './ledger-rollup-seed';

let SUBSCRIBERS = intVar(process.env, 'BENCH_REPORTS_SUBSCRIBERS', 1_000_000, 1000);
let LEDGER = intVar(process.env, 'BENCH_REPORTS_LEDGER', 10_000_000, 1000);
const SAMPLES = intVar(process.env, 'BENCH_REPORTS_SAMPLES', 20, 1);
const WARMUP = 3;
const RESELLERS = 200;
const CHUNK = 1_000_000;

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

async function seed(pool: Pool): Promise<void> {
  const timed = async (on: Pool | PoolClient, label: string, text: string, values: unknown[] = []) => {
    const t0 = process.hrtime.bigint();
    await on.query(text, values);
    console.log(`  ${label}: ${seconds(t0).toFixed(1)} s`);
  };
  const step = (label: string, text: string, values: unknown[] = []) => timed(pool, label, text, values);
  console.log(`seeding ${SUBSCRIBERS.toLocaleString('en')} subscribers, ${LEDGER.toLocaleString('en')} ledger rows`);
  // Resellers 1..10 are top ones; 11..200 hang under them, 19 each.
  await step(
    'resellers',
    `insert into resellers (id, name, parent_id, path, balance, currency)
     select g, 'reseller ' || g, case when g <= 10 then null else 1 + (g - 11) / 19 end,
            case when g <= 10 then '/' || g || '/' else '/' || (1 + (g - 11) / 19) || '/' || g || '/' end,
            100000000, 'USD'
       from generate_series(1, ${RESELLERS}) g`,
  );
  await pool.query(`select setval(pg_get_serial_sequence('resellers', 'id'), ${RESELLERS})`);
  await step(
    'plans, managers, access servers',
    `with p as (insert into services (id, name, price, currency, duration_days)
                select g, 'plan ' || g, 1000 * g, 'USD', 30 from generate_series(1, 10) g returning id),
          m as (insert into managers (id, username, password_hash, role, reseller_id)
                select g, 'manager' || g, '!', 'reseller', 1 + (g % ${RESELLERS}) from generate_series(2, 20) g returning id)
     insert into nas (id, nasname, shortname, secret)
     select g, '192.0.2.' || g, 'edge-' || g, 's' from generate_series(1, 4) g`,
  );
  await pool.query(`select setval(pg_get_serial_sequence('services', 'id'), 10)`);
  await pool.query(`select setval(pg_get_serial_sequence('managers', 'id'), 20)`);
  await pool.query(`select setval(pg_get_serial_sequence('nas', 'id'), 4)`);
  // Reseller of subscriber g: 1 + g % 200, so a top reseller's tree (itself and its 19) holds a tenth.
  await step(
    'subscribers',
    `insert into subscribers (id, username, password_enc, service_id, reseller_id, status, expiry_date, created_at,
                              wallet_balance, auto_renew, is_online, last_nas_id, blocked_reason)
     select g, 'user' || g || '@bench', 'x', 1 + g % 10, 1 + g % ${RESELLERS},
            case when g % 10 = 0 then 'inactive' else 'active' end,
            current_date + (g % 400) - 200, now() - make_interval(days => g % 500), (g % 7) * 500, g % 3 = 0,
            g % 10 = 1, 1 + g % 4, case when g % 400 < 200 and g % 5 = 0 then 'expired' end
       from generate_series(1, $1::int) g`,
    [SUBSCRIBERS],
  );
  await pool.query(`select setval(pg_get_serial_sequence('subscribers', 'id'), $1::int)`, [SUBSCRIBERS]);
  // The ledger in bulk without its triggers (session_replication_role), then ledger_rollup filled once,
  // set-based, as migration 0050 fills it: the triggers' own exactness is the tests' (reports-property).
  const bulk = await pool.connect();
  // The ledger's secondary indexes are built once after the rows (sorted builds) instead of taking
  // ten million random inserts each: the same indexes at the end, in a fraction of the time.
  const { rows: ledgerIndexes } = await pool.query<{ name: string; def: string }>(
    `select indexname as name, indexdef as def from pg_indexes i
      where tablename = 'transactions' and schemaname = current_schema()
        and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
  );
  try {
    for (const i of ledgerIndexes) await bulk.query(`drop index "${i.name}"`);
    await bulk.query('set session_replication_role = replica');
    for (let from = 0; from < LEDGER; from += CHUNK) {
      const to = Math.min(LEDGER, from + CHUNK);
      // Mostly payments (five methods), then wallet top-ups, renewals and reseller top-ups; 400 days back.
      await timed(
        bulk,
        `ledger ${from.toLocaleString('en')}-${to.toLocaleString('en')}`,
        `insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, method, created_by,
                                   service_id, created_at)
         select case when k < 70 then 'invoice_payment' when k < 80 then 'wallet_credit' when k < 95 then 'renewal' else 'reseller_credit' end,
                case when k >= 80 and k < 95 then -(1000 + s % 10 * 1000) else 100 + (g::bigint * 7919) % 50000 end,
                'USD', s, 'user' || s || '@bench', 1 + s % ${RESELLERS},
                case when k < 70 then (array['cash', 'card', 'bank', 'wallet', 'prepaid_card'])[1 + g % 5] end,
                case when g % 4 = 0 then null else 2 + (s % ${RESELLERS}) % 19 end, 1 + s % 10,
                now() - make_interval(secs => ((g::bigint * 2654435761) % (400 * 86400))::int)
           from (select g, g % 100 as k, (1 + (g::bigint * 104729) % $3::int)::int as s from generate_series($1::int, $2::int) g) x`,
        [from + 1, to, SUBSCRIBERS],
      );
    }
    await timed(bulk, 'ledger_rollup', ROLLUP_OF_LEDGER);
  } finally {
    await bulk.query('reset session_replication_role');
    for (const i of ledgerIndexes) await timed(bulk, `index ${i.name}`, i.def);
    bulk.release();
  }
  await step(
    'invoices',
    `insert into invoices (invoice_number, subscriber_id, reseller_id, amount, tax_rate, tax_amount, total, paid_amount, status,
                           currency, issue_date, due_date)
     select 'INV-2026-' || lpad(g::text, 8, '0'), s, 1 + s % ${RESELLERS}, 3000, 0, 0, 3000,
            case when g % 5 = 0 then (g % 3) * 1000 else 3000 end,
            case when g % 5 <> 0 then 'paid' when g % 3 = 0 then 'pending' when g % 15 = 5 then 'overdue' else 'partial' end,
            'USD', current_date - g % 200, current_date - g % 200 + 14
       from (select g, 1 + (g * 5) % $1::int as s from generate_series(1, $1::int / 5) g) x`,
    [SUBSCRIBERS],
  );
  await step(
    'open sessions',
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime, acctinputoctets, acctoutputoctets)
     select 's' || g, 'u' || g, 'user' || g || '@bench', ('192.0.2.' || (1 + g % 4))::inet,
            now() - make_interval(mins => g % 3000), now() - make_interval(secs => g % 600), g::bigint * 1000, g::bigint * 9000
       from generate_series(1, $1::int, 10) g`,
    [SUBSCRIBERS],
  );
  await step(
    'usage',
    `insert into daily_usage (subscriber_id, date, download_bytes, upload_bytes)
     select s, current_date - d, (s::bigint * 7919 + d) % 5000000000, (s::bigint * 104729 + d) % 500000000
       from generate_series(1, $1::int, 10) s, generate_series(0, 29) d
     on conflict (subscriber_id, date) do nothing`,
    [SUBSCRIBERS],
  );
  await step(
    'cards',
    `with b as (insert into card_batches (id, reseller_id, value, currency, count, created_at)
                select g, case when g % 5 = 0 then null else 1 + g % ${RESELLERS} end, 500, 'USD', 1000, now() - make_interval(days => g * 3)
                  from generate_series(1, 100) g returning id, created_at)
     insert into cards (batch_id, serial, pin_hash, status, used_at)
     select b.id, b.id || '-' || n, md5(b.id || '-' || n), case when n % 3 = 0 then 'used' else 'active' end,
            case when n % 3 = 0 then b.created_at + make_interval(hours => n) end
       from b, generate_series(1, 1000) n`,
  );
  await step('vacuum analyze', 'vacuum analyze');
}

interface Timed {
  p50: number;
  p95: number;
}

async function time(run: () => Promise<unknown>): Promise<Timed> {
  for (let i = 0; i < WARMUP; i++) await run();
  const ms: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t0 = process.hrtime.bigint();
    await run();
    ms.push(seconds(t0) * 1000);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

interface Case {
  label: string;
  path: string;
  raw: q.Sql[];
}

/** The kept database BENCH_REPORTS_REUSE names, on DATABASE_URL's server; never dropped. */
function reusedStore(name: string): { env: { DATABASE_URL: string }; dispose(): Promise<void> } {
  if (!process.env.DATABASE_URL) throw new Error('BENCH_REPORTS_REUSE needs DATABASE_URL (the server holding it)');
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  return { env: { DATABASE_URL: url.toString() }, dispose: async () => undefined };
}

async function main(): Promise<void> {
  const reuse = process.env.BENCH_REPORTS_REUSE;
  const store = reuse ? reusedStore(reuse) : await scratchStore('reports');
  if (!reuse && process.env.BENCH_KEEP === '1') console.log(`keeping ${store.env.DATABASE_URL}`);
  process.env.LIFECYCLE_INTERVAL_SECONDS = '0';
  process.env.USAGE_INTERVAL_SECONDS = '0';
  const app = await startInProcessApp(store);
  // JIT off as in the app's own sessions (PG_JIT, shared/db/client.ts), so the two sides plan alike.
  const pool = new Pool({ connectionString: app.databaseUrl, max: 8, options: '-c jit=off' });
  try {
    if (reuse) {
      await pool.query(`delete from managers where id = 21`);
      const sizes = await pool.query<{ s: number; l: number }>(
        `select (select count(*) from subscribers)::int as s, (select count(*) from transactions)::int as l`,
      );
      [SUBSCRIBERS, LEDGER] = [sizes.rows[0].s, sizes.rows[0].l];
      console.log(
        `reusing ${reuse}: ${SUBSCRIBERS.toLocaleString('en')} subscribers, ${LEDGER.toLocaleString('en')} ledger rows`,
      );
    } else await seed(pool);
    const t0 = process.hrtime.bigint();
    await Promise.all([foldLedgerRollup(), foldSubscriberCounts()]);
    console.log(`  fold: ${seconds(t0).toFixed(1)} s`);
    await pool.query('vacuum analyze ledger_rollup, subscriber_counts');
    if (process.env.BENCH_REPORTS_SEED_ONLY === '1') return;
    for (const table of ['ledger_rollup', 'subscriber_counts']) {
      const { n } = (await pool.query<{ n: number }>(`select count(*)::int as n from ${table}`)).rows[0];
      console.log(`  ${table}: ${n.toLocaleString('en')} rows`);
    }

    const adminAuth = `Bearer ${await benchAdminToken(pool, IN_PROCESS_SECRETS.JWT_SECRET)}`;
    await pool.query(
      `insert into managers (id, username, password_hash, role, reseller_id) values (21, 'top', '!', 'reseller', 1)`,
    );
    const resellerAuth = `Bearer ${signToken({ managerId: 21, role: 'reseller', resellerId: 1, permissions: [] }, IN_PROCESS_SECRETS.JWT_SECRET, 3600).token}`;
    const today = todayUtc();
    const month = { from: addDays(today, -30), to: today };
    const year = { from: addDays(today, -365), to: today };
    const callers: [string, string, ReportScope][] = [
      ['admin', adminAuth, { pathPattern: null, rootId: null }],
      ['reseller (1/10)', resellerAuth, { pathPattern: '/1/%', rootId: 1 }],
    ];
    // The service's page: 50 rows and the count of all, from one run (services/reports/output.ts).
    const page = (s: q.Sql): q.Sql => ({
      text: `select q.*, count(*) over () from (${s.text}) q limit 50`,
      values: s.values,
    });
    const cases = (scope: ReportScope): Case[] => {
      const out: Case[] = [
        {
          label: 'dashboard',
          path: '/api/dashboard',
          raw: [
            q.subscriberCounts(scope, today),
            q.ledgerFigures(scope, today, `${today.slice(0, 7)}-01`, addMonths(today, -1)),
            q.invoiceFigures(scope, today),
            q.cardFigures(scope, `${today.slice(0, 7)}-01`),
            q.nasFigures(scope),
            q.paymentsPerDay(scope, addDays(today, -29), today, 'USD'),
            q.onlinePerHour(scope),
            q.subscribersPerMonth(scope, addMonths(today, -11), today),
          ],
        },
        { label: 'aging', path: '/api/reports/aging', raw: [q.agingPage(scope, today, 'subscriber', 50, 0)] },
        { label: 'cards', path: '/api/reports/cards', raw: [page(q.cardBatchRows(scope, null))] },
      ];
      for (const [span, r] of [
        ['month', month],
        ['year', year],
      ] as const) {
        const range = `from=${r.from}&to=${r.to}`;
        for (const by of ['method', 'reseller', 'plan'])
          out.push({
            label: `revenue by ${by}, ${span}`,
            path: `/api/reports/revenue?${range}&by=${by}&group=month`,
            raw: [page(q.revenueRows(scope, r, 'month', by)), q.revenueTotals(scope, r)],
          });
        out.push(
          {
            label: `expiring, ${span}`,
            path: `/api/reports/expiring?${range}`,
            raw: [q.expiringPage(scope, r, 'USD', 50, 0)],
          },
          {
            label: `usage, ${span}`,
            path: `/api/reports/usage?${range}`,
            raw: [q.usagePage(scope, r, 50, 0), q.usagePerPlan(scope, r)],
          },
          {
            label: `reseller statement, ${span}`,
            path: `/api/reports/reseller-statement?${range}&reseller_id=1`,
            raw: [q.statementHead(1, r), page(q.statementRows(1, r, 0))],
          },
        );
      }
      return out;
    };

    const rows: string[] = [];
    for (const [who, auth, scope] of callers) {
      for (const c of cases(scope)) {
        const api = await time(async () => {
          const res = await fetch(app.baseUrl + c.path, { headers: { authorization: auth } });
          const text = await res.text();
          if (!res.ok) throw new Error(`GET ${c.path}: ${res.status} ${text}`);
        });
        const raw = await time(() => Promise.all(c.raw.map((s) => pool.query(s.text, s.values))));
        const line = `${who.padEnd(16)} ${c.label.padEnd(28)} ${api.p50.toFixed(1).padStart(8)} ${api.p95.toFixed(1).padStart(8)} ${raw.p50.toFixed(1).padStart(8)} ${raw.p95.toFixed(1).padStart(8)} ${(api.p95 / raw.p95).toFixed(2).padStart(6)}x`;
        console.log(line);
        rows.push(line);
      }
    }
    console.log(
      `\n${SUBSCRIBERS.toLocaleString('en')} subscribers, ${LEDGER.toLocaleString('en')} ledger rows, ${SAMPLES} samples after ${WARMUP} warm-up; ms`,
    );
    console.log(
      `${'caller'.padEnd(16)} ${'query'.padEnd(28)} ${'api p50'.padStart(8)} ${'api p95'.padStart(8)} ${'sql p50'.padStart(8)} ${'sql p95'.padStart(8)} ${'ratio'.padStart(7)}`,
    );
    for (const r of rows) console.log(r);
  } finally {
    await pool.end();
    await app.stop();
    await store.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
