/**
 * `npm run bench:self-care` (issue 40, docs/self-care.md): the app in a child process (gateway,
 * subscribers, billing, network-access) on a scratch database; subscribers seeded set-based
 * (BENCH_SUBSCRIBERS, default 1,000,000), and the BENCH_SAMPLES sampled ones given 3 invoices, 60
 * days of daily usage and 300 sessions (the newest one open). Then:
 *
 * 1. Sign-ins per second through POST /api/my/login (the password decrypted and compared, a token
 *    signed) at BENCH_CONCURRENCY connections (default 20) for BENCH_SIGN_IN_SECONDS (default 10):
 *    first right after the seeding, before any other request reached the app (the headline), then
 *    again warm. Beside them, in the same run and at the same concurrency: GET /health (an HTTP
 *    request through the gateway and one database round trip: the floor of any route that reads
 *    the database) and the sign-in's own look-up statement sent straight to PostgreSQL from here
 *    (the database's floor). The server's CPU per request is printed beside each rate: it moves far
 *    less than the rate on a shared host.
 * 2. The subscriber's reads (GET /api/my/account, /usage, /invoices) at p50/p95, interleaved with
 *    the manager's reads of the same records (GET /api/subscribers/:id, /:id/sessions,
 *    /api/invoices?subscriber_id=).
 *
 * Targets: >= 500 sign-ins/s on 2 cores; each read p95 < 50 ms.
 */
import { Client, Pool } from 'pg';
import { encrypt } from '../shared/auth/secrets';
import { intVar, parseEncryptionKey } from '../shared/config';
import {
  autocannon,
  benchAdminToken,
  benchEnv,
  forkApp,
  median,
  percentile,
  runBench,
  scratchStore,
  serveApp,
  serverCpu,
  type AppServer,
  type AutocannonRequest,
} from './load';
import { seedSubscriberBase } from './seed-subscribers';

const SUBSCRIBERS = intVar(process.env, 'BENCH_SUBSCRIBERS', 1_000_000, 1);
const SAMPLES = Math.min(intVar(process.env, 'BENCH_SAMPLES', 50, 1), SUBSCRIBERS);
const CONCURRENCY = intVar(process.env, 'BENCH_CONCURRENCY', 20, 1);
const SIGN_IN_SECONDS = intVar(process.env, 'BENCH_SIGN_IN_SECONDS', 10, 1);
const ROUNDS = 10;
const RATE_ROUNDS = 3;
const PASSWORD = 'benchpass';
const LOOKUP = `select id, password_enc from subscribers where username = $1 and deleted_at is null`;

const seconds = (startNs: bigint) => Number(process.hrtime.bigint() - startNs) / 1e9;

async function seed(url: string, encryptionKey: string, ids: number[]): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const t0 = process.hrtime.bigint();
  await c.query(`set session_replication_role = replica`);
  await seedSubscriberBase(c, SUBSCRIBERS, encrypt(PASSWORD, parseEncryptionKey(encryptionKey)));
  // The sampled subscribers' history: what /api/my/usage shows (30 of these 60 days, the last sessions).
  await c.query(
    `insert into daily_usage (subscriber_id, date, download_bytes, upload_bytes)
     select id, current_date - d, d * 1048576, d * 65536 from unnest($1::int[]) id, generate_series(0, 59) d`,
    [ids],
  );
  await c.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime,
                          framedipaddress, callingstationid, acctinputoctets, acctoutputoctets, acctsessiontime)
     select 's' || id || '-' || k, 'u' || id || '-' || k, 'user' || id || '@bench', inet '192.0.2.1',
            now() - make_interval(days => k, hours => 1), case when k = 0 then null else now() - make_interval(days => k) end,
            inet '100.64.0.0' + id, 'AA:BB:CC:00:00:01', k * 1000, k * 9000, 3600
       from unnest($1::int[]) id, generate_series(0, 299) k`,
    [ids],
  );
  await c.query(`set session_replication_role = origin`);
  await c.query(`vacuum analyze`);
  await c.end();
  console.log(`seeded ${SUBSCRIBERS} subscribers in ${seconds(t0).toFixed(1)} s`);
}

interface Rate {
  perSecond: number;
  /** The slowest and the fastest second of the run. */
  seconds: [number, number];
  cpuMsEach: number;
  failed: number;
}

/** `connections` callers for `duration` s against one route: completed answers per second, server CPU each. */
async function load(
  server: AppServer,
  duration: number,
  next: (req: AutocannonRequest, i: number) => AutocannonRequest,
): Promise<Rate> {
  let i = 0;
  const cpu0 = await serverCpu(server);
  const t0 = process.hrtime.bigint();
  const r = await autocannon({
    url: server.baseUrl,
    connections: CONCURRENCY,
    duration,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (req) => next(req, i++) }],
  });
  const elapsed = seconds(t0);
  const cpu = (await serverCpu(server)) - cpu0;
  const ok = r.requests.total - r.non2xx;
  return {
    perSecond: ok / elapsed,
    seconds: [r.requests.min, r.requests.max],
    cpuMsEach: cpu / 1000 / Math.max(1, ok),
    failed: r.non2xx + r.errors,
  };
}

/** The sign-in's look-up sent straight to PostgreSQL at the same concurrency: statements per second. */
async function databaseFloor(url: string, usernames: string[], duration: number): Promise<number> {
  const pool = new Pool({ connectionString: url, max: CONCURRENCY });
  try {
    let done = 0;
    const end = Date.now() + duration * 1000;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let i = worker; Date.now() < end; i += CONCURRENCY) {
          await pool.query({ name: 'lookup', text: LOOKUP, values: [usernames[i % usernames.length]] });
          done += 1;
        }
      }),
    );
    return done / seconds(t0);
  } finally {
    await pool.end();
  }
}

async function main(): Promise<void> {
  const store = await scratchStore('self_care');
  const env: NodeJS.ProcessEnv = {
    ...benchEnv(),
    ...store.env,
    SERVICES: 'gateway,subscribers,billing,network-access',
    LIFECYCLE_INTERVAL_SECONDS: process.env.LIFECYCLE_INTERVAL_SECONDS ?? '0',
    // Every sign-in comes from this one address: the per-address request limit is out of the way.
    PUBLIC_RATE_LIMIT_PER_MIN: '1000000000',
  };
  const server = await forkApp(__filename, env);
  try {
    const ids = Array.from({ length: SAMPLES }, (_, i) => 1 + Math.floor((i * SUBSCRIBERS) / SAMPLES));
    const usernames = ids.map((id) => `user${id}@bench`);
    await seed(server.databaseUrl, env.ENCRYPTION_KEY!, ids);

    // 1. Sign-ins per second: first after start, the references, then warm.
    const signIn = (req: AutocannonRequest, i: number): AutocannonRequest => ({
      ...req,
      method: 'POST',
      path: '/api/my/login',
      body: JSON.stringify({ username: usernames[i % usernames.length], password: PASSWORD }),
    });
    const first = await load(server, SIGN_IN_SECONDS, signIn);
    // Then warm, alternating with the references so the neighbours' load weighs on each alike: medians.
    const warms: Rate[] = [];
    const healths: Rate[] = [];
    const floors: number[] = [];
    for (let round = 0; round < RATE_ROUNDS; round++) {
      healths.push(await load(server, SIGN_IN_SECONDS, (req) => ({ ...req, method: 'GET', path: '/health' })));
      floors.push(await databaseFloor(server.databaseUrl, usernames, SIGN_IN_SECONDS));
      warms.push(await load(server, SIGN_IN_SECONDS, signIn));
    }
    const mid = (rs: Rate[]): Rate => ({
      perSecond: median(rs.map((r) => r.perSecond)),
      seconds: [Math.min(...rs.map((r) => r.seconds[0])), Math.max(...rs.map((r) => r.seconds[1]))],
      cpuMsEach: median(rs.map((r) => r.cpuMsEach)),
      failed: rs.reduce((n, r) => n + r.failed, 0),
    });
    const [warm, health, floor] = [mid(warms), mid(healths), median(floors)];
    const line = (label: string, r: Rate) =>
      `${label.padEnd(34)} ${r.perSecond.toFixed(0).padStart(7)}/s  ${r.cpuMsEach.toFixed(2).padStart(6)} ms CPU each` +
      `  (seconds: slowest ${r.seconds[0]}, fastest ${r.seconds[1]})` +
      (r.failed ? `  (${r.failed} failed)` : '');
    console.log(
      `\nsign-ins, ${CONCURRENCY} connections, ${SIGN_IN_SECONDS} s a run (target >= 500/s); ` +
        `warm and references: medians of ${RATE_ROUNDS} alternating runs`,
    );
    console.log(line('POST /api/my/login, first', first));
    console.log(line('POST /api/my/login, warm', warm));
    console.log(line('GET /health (HTTP + 1 round trip)', health));
    console.log(`${'look-up statement, straight to pg'.padEnd(34)} ${floor.toFixed(0).padStart(7)}/s`);
    const ratios = warms.map((w, i) => (w.perSecond / healths[i].perSecond).toFixed(2)).join(', ');
    console.log(
      `sign-in / health: first ${(first.perSecond / health.perSecond).toFixed(2)}, warm runs ${ratios}; ` +
        `CPU-bound ceiling of one server process: first ${(1000 / first.cpuMsEach).toFixed(0)}/s, ` +
        `warm ${(1000 / warm.cpuMsEach).toFixed(0)}/s`,
    );

    // 2. Reads, subscriber and manager, interleaved in the same run.
    const admin = new Pool({ connectionString: server.databaseUrl, max: 1 });
    const managerAuth = `Bearer ${await benchAdminToken(admin, env.JWT_SECRET!)}`;
    await admin.end();
    const call = async (path: string, init: { method?: string; auth?: string; body?: unknown } = {}) => {
      const res = await fetch(server.baseUrl + path, {
        method: init.method ?? 'GET',
        headers: { 'content-type': 'application/json', ...(init.auth ? { authorization: init.auth } : {}) },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const json = (await res.json()) as { data: { token?: string } };
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const tokens = new Map<number, string>();
    for (const id of ids) {
      for (let k = 0; k < 3; k++) {
        await call('/api/invoices', {
          method: 'POST',
          auth: managerAuth,
          body: { subscriber_id: id, items: [{ description: 'bench', qty: 1, unit_price: 10 + k }] },
        });
      }
      const r = await call('/api/my/login', {
        method: 'POST',
        body: { username: `user${id}@bench`, password: PASSWORD },
      });
      tokens.set(id, `Bearer ${r.data.token}`);
    }
    const reads: [string, (id: number) => [string, string]][] = [
      ['my account', (id) => ['/api/my/account', tokens.get(id)!]],
      ['manager subscriber', (id) => [`/api/subscribers/${id}`, managerAuth]],
      ['my usage', (id) => ['/api/my/usage', tokens.get(id)!]],
      ['manager sessions', (id) => [`/api/subscribers/${id}/sessions`, managerAuth]],
      ['my invoices', (id) => ['/api/my/invoices', tokens.get(id)!]],
      ['manager invoices', (id) => [`/api/invoices?subscriber_id=${id}`, managerAuth]],
    ];
    const times = new Map<string, number[]>(reads.map(([label]) => [label, []]));
    for (let round = 0; round < ROUNDS + 1; round++) {
      for (const id of ids) {
        for (const [label, route] of reads) {
          const [path, auth] = route(id);
          const s = process.hrtime.bigint();
          await call(path, { auth });
          if (round > 0) times.get(label)!.push(seconds(s) * 1000);
        }
      }
    }
    console.log(`\nreads, ${SAMPLES} subscribers x ${ROUNDS} rounds, ms (target p95 < 50)`);
    console.log('read'.padEnd(22), 'p50'.padStart(8), 'p95'.padStart(8));
    for (const [label, xs] of times) {
      xs.sort((a, b) => a - b);
      console.log(
        label.padEnd(22),
        percentile(xs, 50).toFixed(1).padStart(8),
        percentile(xs, 95).toFixed(1).padStart(8),
      );
    }
  } finally {
    server.child.send('stop');
    await new Promise((resolve) => server.child.once('exit', resolve));
    await store.dispose();
  }
}

runBench(main, serveApp);
