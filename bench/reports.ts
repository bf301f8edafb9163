/**
 * `npm run bench:reports` (issue 38): the dashboard and every report against a seeded base, each
 * timed through the API beside the same statements run as raw SQL on a pool of their own in the same
 * run (the ratio is what the service adds: auth, scope, JSON, HTTP).
 *
 * Seeded in SQL on a scratch database (scratchStore) by seedBillingBase (bench/seed-billing-base.ts):
 * BENCH_REPORTS_SUBSCRIBERS subscribers (default 1,000,000) and BENCH_REPORTS_LEDGER ledger rows
 * (default 10,000,000), with invoices, open sessions, usage and card batches.
 *
 * Timed, BENCH_REPORTS_SAMPLES times each (default 20, after 3 warm-up calls), for an admin (the
 * whole base) and for a top reseller (a tenth): the dashboard, and each report over the last month
 * and over the last year. Printed: p50 and p95 in ms, API beside raw SQL. Targets: dashboard
 * p95 < 100 ms, a report over a year p95 < 500 ms.
 *
 * Seeding the full scale takes tens of minutes: BENCH_KEEP=1 (with DATABASE_URL) keeps the scratch
 * database, and BENCH_REPORTS_REUSE=<its name> times against it again without seeding (the app's
 * migrations still run on it, so a new one is measured on the same rows). Its sizes are read from it.
 * BENCH_REPORTS_SEED_ONLY=1 seeds (and, with BENCH_KEEP=1, keeps) without timing; BENCH_REPORTS_ONLY=<text>
 * times only the cases whose label holds it (`usage`).
 */
import { Pool } from 'pg';
import { signToken } from '../shared/auth/jwt';
import { addDays, todayUtc } from '../shared/billing/dates';
import { intVar } from '../shared/config';
import { foldLedgerRollup } from '../shared/db/ledger-rollup';
import { foldNasOnline } from '../shared/db/nas-online';
import { foldSessionHours } from '../shared/db/session-hours';
import { foldSubscriberCounts } from '../shared/db/subscriber-counts';
import { addMonths } from '../services/reports/periods';
import * as q from '../services/reports/queries';
import type { ReportScope } from '../services/reports/scope';
import { benchAdminToken, IN_PROCESS_SECRETS, percentile, reusedStore, scratchStore, startInProcessApp } from './load';
import { seedBillingBase } from './seed-billing-base';

let SUBSCRIBERS = intVar(process.env, 'BENCH_REPORTS_SUBSCRIBERS', 1_000_000, 1000);
let LEDGER = intVar(process.env, 'BENCH_REPORTS_LEDGER', 10_000_000, 1000);
const SAMPLES = intVar(process.env, 'BENCH_REPORTS_SAMPLES', 20, 1);
/** Times only the cases whose label holds this text (`usage`, `dashboard`); all when unset. */
const ONLY = process.env.BENCH_REPORTS_ONLY ?? '';
const WARMUP = 3;

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

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

async function main(): Promise<void> {
  const reuse = process.env.BENCH_REPORTS_REUSE;
  const store = reuse ? reusedStore('BENCH_REPORTS_REUSE', reuse) : await scratchStore('reports');
  if (!reuse && process.env.BENCH_KEEP === '1') console.log(`keeping ${store.env.DATABASE_URL}`);
  process.env.LIFECYCLE_INTERVAL_SECONDS = '0';
  process.env.USAGE_INTERVAL_SECONDS = '0';
  const app = await startInProcessApp(store);
  // JIT off as in the app's own sessions (PG_JIT, shared/db/client.ts), so the two sides plan alike.
  const pool = new Pool({ connectionString: app.databaseUrl, max: 8, options: '-c jit=off' });
  try {
    if (reuse) {
      const sizes = await pool.query<{ s: number; l: number }>(
        `select (select count(*) from subscribers)::int as s, (select count(*) from transactions)::int as l`,
      );
      [SUBSCRIBERS, LEDGER] = [sizes.rows[0].s, sizes.rows[0].l];
      console.log(
        `reusing ${reuse}: ${SUBSCRIBERS.toLocaleString('en')} subscribers, ${LEDGER.toLocaleString('en')} ledger rows`,
      );
    } else await seedBillingBase(pool, SUBSCRIBERS, LEDGER);
    const t0 = process.hrtime.bigint();
    await Promise.all([foldLedgerRollup(), foldSubscriberCounts(), foldSessionHours(), foldNasOnline()]);
    console.log(`  fold: ${seconds(t0).toFixed(1)} s`);
    await pool.query('vacuum analyze ledger_rollup, subscriber_counts, session_hours, nas_last_packet, nas_online');
    if (process.env.BENCH_REPORTS_SEED_ONLY === '1') return;
    for (const table of ['ledger_rollup', 'subscriber_counts', 'session_hours', 'nas_online']) {
      const { n } = (await pool.query<{ n: number }>(`select count(*)::int as n from ${table}`)).rows[0];
      console.log(`  ${table}: ${n.toLocaleString('en')} rows`);
    }

    const adminAuth = `Bearer ${await benchAdminToken(pool, IN_PROCESS_SECRETS.JWT_SECRET)}`;
    await pool.query(
      `insert into managers (id, username, password_hash, role, reseller_id) values (21, 'top', '!', 'reseller', 1)
       on conflict (id) do nothing`,
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
            q.nasFigures(scope, scope.pathPattern === null),
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
            raw: [q.expiringPage(scope, r, { currency: 'USD', taxRate: 0 }, 50, 0)],
          },
          {
            label: `usage, ${span}`,
            path: `/api/reports/usage?${range}`,
            raw: [q.usageSummary(scope, r, 50, 0)],
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
      for (const c of cases(scope).filter((x) => x.label.includes(ONLY))) {
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
