/**
 * `npm run bench:ledger`: GET /api/transactions and GET /api/sessions at an ISP's size
 * (docs/ledger-and-sessions.md). Seeds in SQL a fresh database: 50 resellers (reseller 1 and its
 * four children hold a tenth of the subscribers and of the ledger), subscribers, ledger rows spread
 * over a year (payments, renewals, wallet and reseller credits) and open sessions; starts the app in
 * a process of its own (units gateway, billing, network-access); then, for an admin and for reseller
 * 1's tree, times the ledger's first and 100th page (limit 50, with its totals) and the sessions'
 * first page, each beside the same statements run as raw SQL on a pool in the same run (p50/p95 over
 * BENCH_SAMPLES after 5 warm-up ones). Last, a CSV of about BENCH_CSV_ROWS ledger rows (a date range
 * of the newest) through the HTTP API in rows/s, beside the same COPY read by the driver (no HTTP),
 * with the server process's resident memory sampled every 100 ms while it streams.
 *
 * Environment (optional):
 *   DATABASE_URL         server to use; a fresh database is created on it and dropped after
 *                        (unset: an embedded PostgreSQL in a temporary folder)
 *   BENCH_SCALE          1 (multiplies the four sizes below; 0.1 is a tenth of each)
 *   BENCH_SUBSCRIBERS    1000000   BENCH_LEDGER_ROWS 10000000   BENCH_SESSIONS 100000
 *   BENCH_CSV_ROWS       1000000   BENCH_SAMPLES     40         BENCH_KEEP=1 keeps the database
 *   BENCH_LEDGER_REUSE   a kept database on DATABASE_URL's server to time without seeding (bench:reports'
 *                        BENCH_KEEP seed: 200 resellers, reseller 1's tree a tenth); its sizes are read
 *                        from it, never dropped
 */
import fs from 'node:fs';
import { Client, Pool } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Scope } from '../shared/auth/policy';
import { signToken } from '../shared/auth/jwt';
import { intVar } from '../shared/config';
import { copyStatement } from '../shared/http/csv';
import { exportStatement, pageStatement, totalsStatement, type Statement } from '../services/billing/ledger-query';
import { liveCountStatement, livePageStatement } from '../services/network-access/session-list';
import { benchAdminToken, benchEnv, forkApp, percentile, reusedStore, runBench, scratchStore, serveApp } from './load';
import { ROLLUP_OF_LEDGER } from './ledger-rollup-seed';

const SCALE = Number(process.env.BENCH_SCALE ?? '1');
const REUSE = process.env.BENCH_LEDGER_REUSE;
const sized = (name: string, full: number) => Math.max(100, Math.round(intVar(process.env, name, full, 1) * SCALE));
let SUBSCRIBERS = sized('BENCH_SUBSCRIBERS', 1_000_000);
let LEDGER_ROWS = sized('BENCH_LEDGER_ROWS', 10_000_000);
let SESSIONS = Math.min(SUBSCRIBERS, sized('BENCH_SESSIONS', 100_000));
const CSV_ROWS = Math.min(LEDGER_ROWS, sized('BENCH_CSV_ROWS', 1_000_000));
/** The reseller's manager on a reused database (bench:reports' seed has none with subscribers.view); removed at the end. */
const REUSE_MANAGER = 22;
const SAMPLES = intVar(process.env, 'BENCH_SAMPLES', 40, 1);
const RESELLERS = 50;
const ENV: NodeJS.ProcessEnv = {
  ...benchEnv(),
  SERVICES: 'gateway,billing,network-access',
  USAGE_INTERVAL_SECONDS: '0',
  USAGE_ROLLUP_SECONDS: '0',
};

const ms = (startNs: bigint) => Number(process.hrtime.bigint() - startNs) / 1e6;

async function seed(url: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const t0 = process.hrtime.bigint();
  // Bulk rows without the per-statement ledger trigger: ledger_rollup is filled once, set-based, below.
  await c.query(`set session_replication_role = replica`);
  await c.query(
    `insert into resellers (id, name, parent_id, path, balance, currency)
     select g, 'reseller-' || g, case when g between 2 and 5 then 1 end,
            case when g between 2 and 5 then '/1/' || g || '/' else '/' || g || '/' end, 0, 'USD'
       from generate_series(1, $1::int) g`,
    [RESELLERS],
  );
  await c.query(`select setval(pg_get_serial_sequence('resellers', 'id'), $1::int)`, [RESELLERS]);
  await c.query(
    `insert into managers (id, username, password_hash, role, reseller_id, permissions)
     select 100 + g, 'cashier-' || g, '!', 'reseller', g, '["subscribers.view"]' from generate_series(1, $1::int) g`,
    [RESELLERS],
  );
  await c.query(
    `insert into services (id, name, price, currency, duration_days) values (1, 'basic', 1000, 'USD', 30), (2, 'plus', 2000, 'USD', 30)`,
  );
  await c.query(`select setval(pg_get_serial_sequence('services', 'id'), 2)`);
  await c.query(
    `insert into nas (id, nasname, shortname, secret) select g, '192.0.2.' || g, 'edge-' || g, 's' from generate_series(1, 4) g`,
  );
  // Subscriber s belongs to reseller 1 + s % 50 when s % 10 > 0, and to one of 1..5 otherwise: a tenth in reseller 1's tree.
  const resellerOf = (s: string) =>
    `(case when ${s} % 10 = 0 then 1 + (${s} / 10) % 5 else 6 + ${s} % ${RESELLERS - 5} end)`;
  await c.query(
    `insert into subscribers (id, username, password_enc, service_id, reseller_id, expiry_date, created_at)
     select g, 'user' || g || '@bench', 'x', 1 + g % 2, ${resellerOf('g')}, current_date + (g % 400) - 100, now() - make_interval(secs => g)
       from generate_series(1, $1::int) g`,
    [SUBSCRIBERS],
  );
  await c.query(`select setval(pg_get_serial_sequence('subscribers', 'id'), $1::int)`, [SUBSCRIBERS]);
  // Ledger row g: subscriber 1 + g % S, newest first in g, spread evenly over a year.
  await c.query(
    `insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, method, created_by, notes,
                               service_id, created_at)
     select case when k < 6 then 'invoice_payment' when k < 8 then 'renewal' when k = 8 then 'wallet_credit' else 'reseller_credit' end,
            case when k between 6 and 7 then -1000 - g % 1000 else 1000 + g % 1000 end, 'USD',
            case when k < 9 then s end, case when k < 9 then 'user' || s || '@bench' end, ${resellerOf('s')},
            case when k < 6 then (array['cash', 'card', 'bank'])[1 + g % 3] when k = 8 then 'cash' end,
            case when k < 6 or k = 8 then 100 + ${resellerOf('s')} end,
            case when g % 97 = 0 then '=note ' || g end, case when k < 9 then 1 + s % 2 end,
            now() - make_interval(secs => (g::float8 * 31536000 / $2::int))
       from (select g, (g / 3) % 10 as k, 1 + g % $1::int as s from generate_series(1, $2::int) g) x`,
    [SUBSCRIBERS, LEDGER_ROWS],
  );
  await c.query(ROLLUP_OF_LEDGER);
  // Open sessions of one subscriber in every S / N (any of them, so a tenth is in reseller 1's tree): started up to a day ago, last interim within 4 minutes.
  await c.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, callingstationid,
                          acctstarttime, acctupdatetime, acctinputoctets, acctoutputoctets)
     select 's' || g, 'u' || g, 'user' || s || '@bench', ('192.0.2.' || (1 + g % 4))::inet, inet '100.64.0.0' + g,
            upper(substr(md5(g::text), 1, 12)), now() - make_interval(secs => g % 86400), now() - make_interval(secs => g % 240),
            g::bigint * 1000, g::bigint * 20000
       from (select g, (g - 1) * step + 1 + g % step as s
             from (select $1::int / $2::int as step) k, generate_series(1, $2::int) g) x`,
    [SUBSCRIBERS, SESSIONS],
  );
  await c.query(`set session_replication_role = origin`);
  await c.query(`vacuum analyze`);
  await c.end();
  console.log(
    `seeded ${SUBSCRIBERS} subscribers, ${LEDGER_ROWS} ledger rows, ${SESSIONS} open sessions in ${(ms(t0) / 1000).toFixed(0)} s`,
  );
}

interface Line {
  label: string;
  path: string;
  raw: Statement[];
}

async function time(samples: number, run: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < samples + 5; i++) {
    const t0 = process.hrtime.bigint();
    await run();
    if (i >= 5) times.push(ms(t0));
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

/** Resident memory of a process in MiB, from /proc. */
function rssMib(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

async function main(): Promise<void> {
  const store = REUSE ? reusedStore('BENCH_LEDGER_REUSE', REUSE) : await scratchStore('ledger');
  const server = await forkApp(__filename, { ...ENV, ...store.env });
  const pool = new Pool({ connectionString: server.databaseUrl, max: 4 });
  try {
    let resellerManager = 101;
    if (REUSE) {
      const sizes = await pool.query<{ s: number; l: number; o: number }>(
        `select (select count(*) from subscribers)::int as s, (select count(*) from transactions)::int as l,
                (select count(*) from radacct where acctstoptime is null)::int as o`,
      );
      [SUBSCRIBERS, LEDGER_ROWS, SESSIONS] = [sizes.rows[0].s, sizes.rows[0].l, sizes.rows[0].o];
      resellerManager = REUSE_MANAGER;
      await pool.query(
        `insert into managers (id, username, password_hash, role, reseller_id, permissions)
         values ($1, 'bench-ledger-reseller', '!', 'reseller', 1, '["subscribers.view"]') on conflict (id) do nothing`,
        [REUSE_MANAGER],
      );
    } else await seed(server.databaseUrl);
    console.log(
      `${REUSE ? `reusing ${REUSE}` : `scale ${SCALE}`}: ${SUBSCRIBERS} subscribers, ${LEDGER_ROWS} ledger rows, ${SESSIONS} open sessions`,
    );
    const secret = ENV.JWT_SECRET ?? '';
    const tokens = {
      admin: await benchAdminToken(pool, secret),
      reseller: signToken(
        { managerId: resellerManager, role: 'reseller', resellerId: 1, permissions: ['subscribers.view'] },
        secret,
        3600,
      ).token,
    };
    const scopes: Record<keyof typeof tokens, Scope> = {
      admin: { kind: 'all' },
      reseller: { kind: 'tree', rootId: 1, rootPath: '/1/', treeGeneration: 0 },
    };
    const staleAfterSeconds = 11 * 60;
    const get = async (token: string, path: string, accept = 'application/json') => {
      const res = await fetch(server.baseUrl + path, { headers: { authorization: `Bearer ${token}`, accept } });
      if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
      return res;
    };

    console.log(`\nlist pages (limit 50), ${SAMPLES} samples each, ms: HTTP API beside the same statements as raw SQL`);
    console.log(
      'caller   page'.padEnd(34),
      'api p50'.padStart(8),
      'api p95'.padStart(8),
      'sql p50'.padStart(8),
      'sql p95'.padStart(8),
      'ratio'.padStart(6),
      'total'.padStart(10),
    );
    for (const who of ['admin', 'reseller'] as const) {
      const scope = scopes[who];
      const lines: Line[] = [
        {
          label: 'ledger page 1',
          path: '/api/transactions?limit=50',
          raw: [pageStatement(scope, {}, 'desc', 50, 0), totalsStatement(scope, {})],
        },
        {
          label: 'ledger page 100',
          path: '/api/transactions?limit=50&page=100',
          raw: [pageStatement(scope, {}, 'desc', 50, 4950), totalsStatement(scope, {})],
        },
        {
          label: 'ledger page 1, method=cash',
          path: '/api/transactions?limit=50&method=cash',
          raw: [pageStatement(scope, { method: 'cash' }, 'desc', 50, 0), totalsStatement(scope, { method: 'cash' })],
        },
        {
          label: 'sessions page 1',
          path: '/api/sessions?limit=50',
          raw: [
            livePageStatement(scope, { staleAfterSeconds }, 'started_at', 'desc', 50, 0),
            liveCountStatement(scope, { staleAfterSeconds }),
          ],
        },
        {
          label: 'sessions page 1, sort bytes_out',
          path: '/api/sessions?limit=50&sort=bytes_out',
          raw: [
            livePageStatement(scope, { staleAfterSeconds }, 'bytes_out', 'desc', 50, 0),
            liveCountStatement(scope, { staleAfterSeconds }),
          ],
        },
      ];
      for (const line of lines) {
        let total = 0;
        const api = await time(SAMPLES, async () => {
          const body = (await (await get(tokens[who], line.path)).json()) as { pagination: { total: number } };
          total = body.pagination.total;
        });
        const raw = await time(SAMPLES, () => Promise.all(line.raw.map((s) => pool.query(s.text, s.values))));
        console.log(
          `${who.padEnd(8)} ${line.label}`.padEnd(34),
          api.p50.toFixed(1).padStart(8),
          api.p95.toFixed(1).padStart(8),
          raw.p50.toFixed(1).padStart(8),
          raw.p95.toFixed(1).padStart(8),
          (api.p95 / raw.p95).toFixed(2).padStart(6),
          String(total).padStart(10),
        );
      }
    }

    // The newest rows of about CSV_ROWS: the day of the CSV_ROWS-th newest row.
    const from = (
      await pool.query<{ day: string }>(
        `select (created_at at time zone 'UTC')::date::text as day from transactions order by created_at desc offset $1 limit 1`,
        [CSV_ROWS - 1],
      )
    ).rows[0].day;
    console.log(`\nCSV of the ledger from ${from} (admin) through the HTTP API`);
    const rss: number[] = [rssMib(server.child.pid!)];
    const sampler = setInterval(() => rss.push(rssMib(server.child.pid!)), 100);
    const t0 = process.hrtime.bigint();
    const res = await get(tokens.admin, `/api/transactions?format=csv&from=${from}`, 'text/csv');
    let lines = 0;
    let bytes = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      for (const b of chunk) if (b === 10) lines++;
    }
    const apiMs = ms(t0);
    clearInterval(sampler);
    rss.push(rssMib(server.child.pid!));
    const rows = lines - 1;
    // The same COPY read by this process (bytes counted, then dropped): what PostgreSQL and the driver
    // take, without Node's HTTP.
    const statement = exportStatement(scopes.admin, { from }, 'desc');
    const client = await pool.connect();
    const t1 = process.hrtime.bigint();
    let rawRows = -1;
    for await (const chunk of client.query(
      copyTo(copyStatement(statement.text, statement.values)),
    ) as AsyncIterable<Buffer>)
      for (const b of chunk) if (b === 10) rawRows++;
    const rawMs = ms(t1);
    client.release();
    const tenth = Math.max(1, Math.floor(rss.length / 10));
    console.log(
      `api    ${rows} rows, ${(bytes / 1048576).toFixed(0)} MiB in ${(apiMs / 1000).toFixed(1)} s: ${Math.round(rows / (apiMs / 1000))} rows/s`,
    );
    console.log(
      `sql    ${rawRows} rows in ${(rawMs / 1000).toFixed(1)} s: ${Math.round(rawRows / (rawMs / 1000))} rows/s (the same COPY read by the driver, no HTTP); ratio ${(rows / (apiMs / 1000) / (rawRows / (rawMs / 1000))).toFixed(2)}`,
    );
    console.log(
      `server RSS MiB over ${rss.length} samples: start ${rss[0].toFixed(0)}, max ${Math.max(...rss).toFixed(0)}, ` +
        `first tenth max ${Math.max(...rss.slice(0, tenth)).toFixed(0)}, last tenth max ${Math.max(...rss.slice(-tenth)).toFixed(0)}, end ${rss[rss.length - 1].toFixed(0)}`,
    );
  } finally {
    if (REUSE) await pool.query('delete from managers where id = $1', [REUSE_MANAGER]);
    await pool.end();
    server.child.send('stop');
    await new Promise((resolve) => server.child.once('exit', resolve));
    await store.dispose();
  }
}

runBench(main, serveApp);
