/**
 * `npm run bench:subscribers`: seeds subscribers and accounting rows with set-based SQL into a
 * fresh database, starts the app, and prints list-page latency (p50/p95 over HTTP) for every filter
 * the targets name, then a bulk set_service and a bulk renew (seconds, ids/s).
 *
 * Environment (all optional):
 *   DATABASE_URL       server to use; a fresh database is created on it and dropped after
 *                      (unset: an embedded PostgreSQL in a temporary folder)
 *   BENCH_SUBSCRIBERS  1000000    BENCH_RADACCT  5000000    BENCH_BULK  10000
 *   BENCH_SAMPLES      40 (timed requests per list query, after 5 warm-up ones)
 *   BENCH_KEEP=1       keep the bench database
 */
import { Client, Pool } from 'pg';
import { benchAdminToken, IN_PROCESS_SECRETS, scratchStore, startInProcessApp } from './load';
import { encrypt } from '../shared/auth/secrets';
import { intVar, parseEncryptionKey } from '../shared/config';
import { seedSubscriberBase } from './seed-subscribers';

const env = (name: string, fallback: number) => intVar(process.env, name, fallback, 1);
const SUBSCRIBERS = env('BENCH_SUBSCRIBERS', 1_000_000);
const RADACCT = env('BENCH_RADACCT', 5_000_000);
const BULK = Math.min(env('BENCH_BULK', 10_000), SUBSCRIBERS);
const SAMPLES = env('BENCH_SAMPLES', 40);
const { JWT_SECRET, ENCRYPTION_KEY } = IN_PROCESS_SECRETS;

const seconds = (startNs: bigint) => Number(process.hrtime.bigint() - startNs) / 1e9;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function seed(url: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const t0 = process.hrtime.bigint();
  const passwordEnc = encrypt('benchpass', parseEncryptionKey(ENCRYPTION_KEY));
  // Seeding writes accounting history in bulk: the per-row session trigger is skipped here and its
  // outcome is set once, set-based, below.
  await c.query(`set session_replication_role = replica`);
  await seedSubscriberBase(c, SUBSCRIBERS, passwordEnc);
  // Sessions spread over every subscriber; the newest tenth of the subscribers' sessions are open.
  await c.query(
    `
    insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime, framedipaddress,
                         acctinputoctets, acctoutputoctets, acctsessiontime)
    select 's' || g, 'u' || g, 'user' || (1 + (g % $1::int)) || '@bench', case when g % 2 = 0 then inet '192.0.2.1' else inet '192.0.2.2' end,
           now() - make_interval(hours => (g / $1::int) * 24 + 1),
           case when g > $2::int - $1::int / 10 then null else now() - make_interval(hours => (g / $1::int) * 24) end,
           inet '100.64.0.0' + (g % 4000000), g % 100000000, g % 900000000, 3600
      from generate_series(1, $2::int) g`,
    [SUBSCRIBERS, RADACCT],
  );
  await c.query(`
    update subscribers s set is_online = true, ip_address = r.framedipaddress, last_nas_id = case when host(r.nasipaddress) = '192.0.2.1' then 1 else 2 end
      from radacct r where r.acctstoptime is null and r.username = s.username`);
  await c.query(`set session_replication_role = origin`);
  await c.query(`vacuum analyze`);
  await c.end();
  console.log(`seeded ${SUBSCRIBERS} subscribers and ${RADACCT} radacct rows in ${seconds(t0).toFixed(1)} s`);
}

async function main(): Promise<void> {
  const store = await scratchStore('subscribers');
  process.env.BULK_SYNC_SECONDS = '3600';
  const app = await startInProcessApp(store);
  try {
    await seed(app.databaseUrl);
    const admin = new Pool({ connectionString: app.databaseUrl, max: 1 });
    const auth = `Bearer ${await benchAdminToken(admin, JWT_SECRET)}`;
    await admin.end();
    const call = async (method: string, url: string, body?: unknown) => {
      const res = await fetch(app.baseUrl + url, {
        method,
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await res.json()) as { data?: { succeeded?: number[]; failed?: unknown[] }; message?: string };
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${json.message}`);
      return json;
    };

    const mid = Math.floor(SUBSCRIBERS / 2);
    const queries: [string, string][] = [
      ['no filter', ''],
      ...['active', 'inactive', 'expired', 'expiring', 'online', 'offline'].map((s): [string, string] => [
        `status=${s}`,
        `status=${s}`,
      ]),
      ['search username', `search=ser${mid}@`],
      ['search phone', `search=${String(2000000000n + ((BigInt(mid) * 2654435761n) % 8000000000n)).slice(3, 9)}`],
      ['sort expiry_date', 'sort=expiry_date&order=asc'],
    ];
    console.log(`\nlist page (limit 50), ${SAMPLES} samples each, ms`);
    console.log('query'.padEnd(22), 'p50'.padStart(8), 'p95'.padStart(8), 'total'.padStart(10));
    for (const [label, qs] of queries) {
      const times: number[] = [];
      let total = 0;
      for (let i = 0; i < SAMPLES + 5; i++) {
        const t0 = process.hrtime.bigint();
        const res = (await call('GET', `/api/subscribers?${qs}`)) as { pagination?: { total: number } };
        if (i >= 5) times.push(seconds(t0) * 1000);
        total = res.pagination?.total ?? 0;
      }
      times.sort((a, b) => a - b);
      console.log(
        label.padEnd(22),
        percentile(times, 50).toFixed(1).padStart(8),
        percentile(times, 95).toFixed(1).padStart(8),
        String(total).padStart(10),
      );
    }

    const ids = Array.from({ length: BULK }, (_, i) => 1 + Math.floor((i * SUBSCRIBERS) / BULK));
    console.log(`\nbulk actions over ${BULK} ids`);
    for (const [action, payload] of [
      ['set_service', { service_id: 2 }],
      ['renew', {}],
    ] as const) {
      const t0 = process.hrtime.bigint();
      const res = await call('POST', '/api/subscribers/bulk-action', { ids, action, payload });
      const s = seconds(t0);
      console.log(
        `${action.padEnd(12)} ${s.toFixed(2)} s  ${(BULK / s).toFixed(0)} ids/s  succeeded ${res.data?.succeeded?.length} failed ${res.data?.failed?.length}`,
      );
    }
  } finally {
    await app.stop();
    await store.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
