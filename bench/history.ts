/**
 * `npm run bench:history` (issue 26): do live queries slow down as accounting history grows?
 * Seeds subscribers and open sessions (a tenth of the subscribers online) into a fresh database
 * with set-based SQL, adds closed sessions spread over the retained months (the current one and
 * the `accounting_retention_months` = 13 before it), and times, over HTTP or in process:
 *   - GET /api/subscribers?status=online       (the online filter)
 *   - GET /api/subscribers/:id                 (subscriber detail, a different subscriber each time)
 *   - GET /api/subscribers/:id/bandwidth       (the one view that reads a subscriber's history)
 *   - the CoA/disconnect session lookup        (liveSessions, in process)
 *   - the usage run                            (counters, FUP, stale sessions, retention: runUsage)
 * first with BENCH_HISTORY_SMALL closed rows, then, in the same run, after growing history to
 * BENCH_HISTORY_LARGE rows, and prints both with the ratio large/small. Last, it adds
 * BENCH_EXPIRED closed rows (and a few open ones) older than the retention and times the purge.
 *
 * Environment (all optional):
 *   DATABASE_URL          server to use; a fresh database is created on it and dropped after
 *                         (unset: an embedded PostgreSQL in a temporary folder)
 *   BENCH_SUBSCRIBERS     1000000    BENCH_HISTORY_SMALL  1000000    BENCH_HISTORY_LARGE  20000000
 *   BENCH_EXPIRED         1000000    BENCH_CHUNK          2000000 (rows per INSERT while growing)
 *   BENCH_SAMPLES         200 (timed requests per query, after 20 warm-up ones; 20 for the usage run)
 *   BENCH_KEEP=1          keep the bench database
 */
import { sql } from 'drizzle-orm';
import { Client, Pool } from 'pg';
import { benchAdminToken, IN_PROCESS_SECRETS, percentile, runStatement, scratchStore, startInProcessApp } from './load';
import { seedSubscriberBase } from './seed-subscribers';
import { encrypt } from '../shared/auth/secrets';
import { intVar, parseEncryptionKey } from '../shared/config';
import { db } from '../shared/db/client';
import { saveSettings } from '../shared/settings';
import { liveSessions } from '../services/network-access/sessions';
import { runUsage } from '../services/network-access/usage/usage.service';
import { retentionCutoff } from '../shared/access/retention-cutoff';
import { purgeAccountingHistory } from '../services/network-access/usage/retention';

const env = (name: string, fallback: number) => intVar(process.env, name, fallback, 1);
const SUBSCRIBERS = env('BENCH_SUBSCRIBERS', 1_000_000);
const SMALL = env('BENCH_HISTORY_SMALL', 1_000_000);
const LARGE = Math.max(env('BENCH_HISTORY_LARGE', 20_000_000), SMALL);
const EXPIRED = env('BENCH_EXPIRED', 1_000_000);
const CHUNK = env('BENCH_CHUNK', 2_000_000);
const SAMPLES = env('BENCH_SAMPLES', 200);
const WARMUP = 20;
const RETENTION_MONTHS = 13;
/** Open sessions older than the retention, which the purge must leave. */
const OLD_OPEN = 100;
const { JWT_SECRET, ENCRYPTION_KEY } = IN_PROCESS_SECRETS;

const seconds = (startNs: bigint) => Number(process.hrtime.bigint() - startNs) / 1e9;
const ONLINE = Math.floor(SUBSCRIBERS / 10);
/** Subscriber ids (= the n of user<n>@bench) of the online tenth: 10k + 5. */
const onlineId = (k: number) => 10 * (k % ONLINE) + 5;

/** Closed sessions number `from` to `to` (1-based), spread over [cutoff, now - 2 h) and over every subscriber. */
async function insertHistory(c: Client, from: number, to: number, cutoff: string): Promise<void> {
  await c.query(
    `
    with w as (select $3::timestamptz as lo, extract(epoch from now() - interval '2 hours' - $3::timestamptz)::bigint as span)
    insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime, acctstoptime,
                         acctsessiontime, acctinputoctets, acctoutputoctets, framedipaddress, acctterminatecause)
    select 'h' || g, 'h' || g, 'user' || (1 + g % $4::int) || '@bench',
           case when g % 2 = 0 then inet '192.0.2.1' else inet '192.0.2.2' end,
           w.lo + make_interval(secs => (g * 7919) % w.span),
           w.lo + make_interval(secs => (g * 7919) % w.span + 60 + g % 7200),
           w.lo + make_interval(secs => (g * 7919) % w.span + 60 + g % 7200),
           60 + g % 7200, g % 100000000, g % 900000000, inet '100.64.0.0' + (g % 4000000), 'User-Request'
      from w, generate_series($1::bigint, $2::bigint) g`,
    [from, to, `${cutoff}T00:00:00Z`, SUBSCRIBERS],
  );
}

async function seed(url: string, cutoff: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const t0 = process.hrtime.bigint();
  // Accounting is written in bulk: the per-row triggers are skipped and their outcome set below.
  await c.query(`set session_replication_role = replica`);
  await seedSubscriberBase(c, SUBSCRIBERS, encrypt('benchpass', parseEncryptionKey(ENCRYPTION_KEY)));
  await c.query(
    `
    insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime,
                         acctinputoctets, acctoutputoctets, framedipaddress)
    select 'o' || k, 'o' || k, 'user' || (10 * k + 5) || '@bench', case when k % 2 = 0 then inet '192.0.2.1' else inet '192.0.2.2' end,
           now() - make_interval(secs => 3600 + k % 80000), now() - make_interval(secs => k % 240),
           k % 100000000, k % 900000000, inet '100.127.0.0' - 1 - k
      from generate_series(0, $1::int - 1) k`,
    [ONLINE],
  );
  await insertHistory(c, 1, SMALL, cutoff);
  // Statistics first: on fresh tables the planner took the join below for a nested loop (minutes).
  await c.query(`analyze subscribers, radacct`);
  await c.query(`
    update subscribers s set is_online = true, ip_address = r.framedipaddress,
           last_nas_id = case when host(r.nasipaddress) = '192.0.2.1' then 1 else 2 end
      from radacct r where r.acctstoptime is null and r.username = s.username`);
  await c.query(`set session_replication_role = origin`);
  await c.query(`vacuum analyze`);
  await c.end();
  console.log(
    `seeded ${SUBSCRIBERS} subscribers, ${ONLINE} open sessions, ${SMALL} closed since ${cutoff} in ${seconds(t0).toFixed(1)} s`,
  );
}

/**
 * Grows history to LARGE rows the way a bulk load would: the table's plain indexes are dropped,
 * the rows inserted in chunks, the same indexes built again (as pg_get_indexdef wrote them).
 */
async function grow(url: string, cutoff: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const t0 = process.hrtime.bigint();
  await c.query(`set session_replication_role = replica`);
  await c.query(`set maintenance_work_mem = '512MB'`);
  const { rows: plain } = await c.query<{ name: string; def: string }>(`
    select i.relname as name, pg_get_indexdef(x.indexrelid) as def
      from pg_index x join pg_class i on i.oid = x.indexrelid
     where x.indrelid = 'radacct'::regclass and not x.indisprimary and x.indpred is null`);
  for (const index of plain) await c.query(`drop index ${index.name}`);
  for (let from = SMALL + 1; from <= LARGE; from += CHUNK) {
    const to = Math.min(LARGE, from + CHUNK - 1);
    await insertHistory(c, from, to, cutoff);
    console.log(`  history ${to} rows (${seconds(t0).toFixed(0)} s)`);
  }
  for (const index of plain) await c.query(index.def);
  await c.query(`set session_replication_role = origin`);
  await c.query(`vacuum analyze radacct`);
  const { rows } = await c.query<{ size: string }>(`select pg_size_pretty(pg_total_relation_size('radacct')) as size`);
  await c.end();
  console.log(
    `grew history to ${LARGE} closed rows in ${seconds(t0).toFixed(1)} s (radacct with indexes: ${rows[0].size})`,
  );
}

/** Writes every dirty page out now; a role without the right (superuser or pg_checkpoint) is told so. */
async function checkpoint(url: string): Promise<void> {
  try {
    await runStatement(url, 'checkpoint');
  } catch (err) {
    if ((err as { code?: string }).code !== '42501') throw err;
    console.log("  CHECKPOINT refused to this role: the next phase runs with the growth's dirty pages unwritten");
  }
}

type Timed = { label: string; p50: number; p95: number };

async function timeIt(label: string, samples: number, run: (i: number) => Promise<void>): Promise<Timed> {
  const times: number[] = [];
  for (let i = 0; i < samples + WARMUP; i++) {
    const t0 = process.hrtime.bigint();
    await run(i);
    if (i >= WARMUP) times.push(seconds(t0) * 1000);
  }
  times.sort((a, b) => a - b);
  return { label, p50: percentile(times, 50), p95: percentile(times, 95) };
}

async function main(): Promise<void> {
  const store = await scratchStore('history');
  // The usage run is timed on call; its timer would also close the seeded sessions as they age. The
  // lifecycle sweep would block the seeded expired subscribers while the seed updates them (deadlock)
  // and while the queries are timed.
  process.env.USAGE_INTERVAL_SECONDS = '0';
  process.env.LIFECYCLE_INTERVAL_SECONDS = '0';
  process.env.BULK_SYNC_SECONDS = '3600';
  const app = await startInProcessApp(store);
  try {
    // The usage run's clock: the database's UTC date.
    const { rows } = await db().execute<{ today: string }>(sql`select (now() at time zone 'UTC')::date::text as today`);
    const today = rows[0].today;
    const cutoff = retentionCutoff(today, RETENTION_MONTHS) as string;
    // Seeded sessions stay fresh for the whole run (2 x 1440 + 1 minutes before one is stale).
    await saveSettings(db(), { accounting_interim_minutes: 1440, accounting_retention_months: RETENTION_MONTHS });
    await seed(app.databaseUrl, cutoff);
    const admin = new Pool({ connectionString: app.databaseUrl, max: 1 });
    const auth = `Bearer ${await benchAdminToken(admin, JWT_SECRET)}`;
    await admin.end();
    const get = async (url: string) => {
      const res = await fetch(app.baseUrl + url, { headers: { authorization: auth } });
      const body = (await res.json()) as { pagination?: { total: number }; message?: string };
      if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${body.message}`);
      return body;
    };
    // A different subscriber each sample, spread over the table (a multiplicative stride).
    const anyId = (i: number) => 1 + ((i * 7919 + 12345) % SUBSCRIBERS);
    const measure = async (): Promise<Timed[]> => {
      const online = await get('/api/subscribers?status=online');
      if ((online.pagination?.total ?? 0) === 0) throw new Error('no subscriber online: the seed did not take');
      return [
        await timeIt('list status=online', SAMPLES, async () => void (await get('/api/subscribers?status=online'))),
        await timeIt('subscriber detail', SAMPLES, async (i) => void (await get(`/api/subscribers/${anyId(i)}`))),
        await timeIt(
          'subscriber bandwidth',
          SAMPLES,
          async (i) => void (await get(`/api/subscribers/${anyId(i)}/bandwidth`)),
        ),
        await timeIt('CoA session lookup', SAMPLES, async (i) => {
          const id = onlineId(i * 7919);
          const found = await liveSessions([{ username: `user${id}@bench`, subscriberId: id }]);
          if (!found.get(`user${id}@bench`)?.length) throw new Error(`no open session of user${id}@bench`);
        }),
        await timeIt('usage run', Math.min(SAMPLES, 20), async () => {
          const res = await runUsage();
          if (res.stale_closed !== 0 || res.history_deleted !== 0)
            throw new Error(`usage run changed history: ${JSON.stringify(res)}`);
        }),
      ];
    };

    console.log(`\n${SAMPLES} samples each (20 for the usage run), after ${WARMUP} warm-up ones; ms`);
    // One discarded round before each phase: the process's JIT and the server's caches warm, not
    // the first figures. The growth's gigabytes evicted the caches the first round warmed, and its
    // dirty pages are written (CHECKPOINT) before timing, as months of history would have been:
    // measured straight after it, the 20M phase read 1.39-1.59x the 1M one's p95.
    await measure();
    const small = await measure();
    await grow(app.databaseUrl, cutoff);
    await checkpoint(app.databaseUrl);
    await measure();
    const large = await measure();
    console.log(
      `\n${'query'.padEnd(22)} ${`p50 ${SMALL / 1e6}M`.padStart(10)} ${`p95 ${SMALL / 1e6}M`.padStart(10)} ${`p50 ${LARGE / 1e6}M`.padStart(10)} ${`p95 ${LARGE / 1e6}M`.padStart(10)} ${'p95 ratio'.padStart(10)}`,
    );
    small.forEach((s, i) => {
      const l = large[i];
      console.log(
        `${s.label.padEnd(22)} ${s.p50.toFixed(1).padStart(10)} ${s.p95.toFixed(1).padStart(10)} ${l.p50.toFixed(1).padStart(10)} ${l.p95.toFixed(1).padStart(10)} ${(l.p95 / s.p95).toFixed(2).padStart(9)}x`,
      );
    });

    await retention(app.databaseUrl, today, cutoff);
  } finally {
    await app.stop();
    await store.dispose();
  }
}

/** Expired history beside the live one: the purge takes it all and leaves open and newer rows. */
async function retention(url: string, today: string, cutoff: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  await c.query(`set session_replication_role = replica`);
  await c.query(
    `
    insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime, acctstoptime,
                         acctsessiontime, acctinputoctets, acctoutputoctets)
    select 'x' || g, 'x' || g, 'user' || (1 + g % $2::int) || '@bench', inet '192.0.2.1',
           $3::timestamptz - make_interval(secs => 86400 + (g * 7919) % (86400 * 60)),
           case when g <= $4::int then null else $3::timestamptz - make_interval(secs => 3600 + (g * 7919) % (86400 * 60)) end,
           case when g <= $4::int then null else $3::timestamptz - make_interval(secs => 3600 + (g * 7919) % (86400 * 60)) end,
           3600, 1000, 1000
      from generate_series(1, $1::bigint) g`,
    [EXPIRED + OLD_OPEN, SUBSCRIBERS, `${cutoff}T00:00:00Z`, OLD_OPEN],
  );
  await c.query(`set session_replication_role = origin`);
  await c.query(`vacuum analyze radacct`);
  const count = async () =>
    (
      await c.query<{ total: string; expired: string; old_open: string }>(
        `select count(*) as total,
                count(*) filter (where acctstoptime < $1::timestamptz) as expired,
                count(*) filter (where acctstoptime is null and acctstarttime < $1::timestamptz) as old_open
           from radacct`,
        [`${cutoff}T00:00:00Z`],
      )
    ).rows[0];
  const before = await count();
  const t0 = process.hrtime.bigint();
  const res = await purgeAccountingHistory(db(), today, {
    months: RETENTION_MONTHS,
    maxBatches: Number.MAX_SAFE_INTEGER,
  });
  const s = seconds(t0);
  const after = await count();
  await c.end();
  console.log(
    `\nretention ${RETENTION_MONTHS} months (cutoff ${cutoff}): deleted ${res.deleted} of ${before.expired} expired closed rows in ${s.toFixed(1)} s (${(res.deleted / s).toFixed(0)} rows/s); rows ${before.total} -> ${after.total}; expired left ${after.expired}; open sessions older than the cutoff ${before.old_open} -> ${after.old_open}`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
