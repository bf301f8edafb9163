/**
 * `npm run bench:self-care` (issue 40, docs/self-care.md): subscribers seeded set-based
 * (BENCH_SUBSCRIBERS, default 1,000,000) with 3 invoices for each of the BENCH_SAMPLES sampled ones,
 * the app in this process, then:
 *
 * 1. Sign-ins per second through POST /api/my/login (the password decrypted and compared) at
 *    BENCH_CONCURRENCY concurrent callers (default 20) for BENCH_SIGN_IN_SECONDS (default 10).
 * 2. The subscriber's reads (GET /api/my/account, /usage, /invoices) at p50/p95, beside the manager's
 *    reads of the same records in the same run (GET /api/subscribers/:id, /api/invoices?subscriber_id=).
 *
 * Targets: >= 500 sign-ins/s on 2 cores; each read p95 < 50 ms.
 */
import { Client, Pool } from 'pg';
import { encrypt } from '../shared/auth/secrets';
import { intVar, parseEncryptionKey } from '../shared/config';
import { benchAdminToken, IN_PROCESS_SECRETS, percentile, scratchStore, startInProcessApp } from './load';
import { seedSubscriberBase } from './seed-subscribers';

const SUBSCRIBERS = intVar(process.env, 'BENCH_SUBSCRIBERS', 1_000_000, 1);
const SAMPLES = Math.min(intVar(process.env, 'BENCH_SAMPLES', 50, 1), SUBSCRIBERS);
const CONCURRENCY = intVar(process.env, 'BENCH_CONCURRENCY', 20, 1);
const SIGN_IN_SECONDS = intVar(process.env, 'BENCH_SIGN_IN_SECONDS', 10, 1);
const ROUNDS = 10;
const { JWT_SECRET, ENCRYPTION_KEY } = IN_PROCESS_SECRETS;
const PASSWORD = 'benchpass';

const seconds = (startNs: bigint) => Number(process.hrtime.bigint() - startNs) / 1e9;

async function seed(url: string): Promise<void> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const t0 = process.hrtime.bigint();
  await c.query(`set session_replication_role = replica`);
  await seedSubscriberBase(c, SUBSCRIBERS, encrypt(PASSWORD, parseEncryptionKey(ENCRYPTION_KEY)));
  await c.query(`set session_replication_role = origin`);
  await c.query(`vacuum analyze`);
  await c.end();
  console.log(`seeded ${SUBSCRIBERS} subscribers in ${seconds(t0).toFixed(1)} s`);
}

async function main(): Promise<void> {
  const store = await scratchStore('self_care');
  // Every sign-in comes from this one address: the per-address request limit is out of the way.
  process.env.PUBLIC_RATE_LIMIT_PER_MIN = '1000000000';
  const app = await startInProcessApp(store);
  try {
    await seed(app.databaseUrl);
    const admin = new Pool({ connectionString: app.databaseUrl, max: 1 });
    const managerAuth = `Bearer ${await benchAdminToken(admin, JWT_SECRET)}`;
    await admin.end();
    const call = async (path: string, init: { method?: string; auth?: string; body?: unknown } = {}) => {
      const res = await fetch(app.baseUrl + path, {
        method: init.method ?? 'GET',
        headers: { 'content-type': 'application/json', ...(init.auth ? { authorization: init.auth } : {}) },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
      const json = (await res.json()) as { data: { token?: string; id?: number } };
      if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const ids = Array.from({ length: SAMPLES }, (_, i) => 1 + Math.floor((i * SUBSCRIBERS) / SAMPLES));
    for (const id of ids) {
      for (let k = 0; k < 3; k++) {
        await call('/api/invoices', {
          method: 'POST',
          auth: managerAuth,
          body: { subscriber_id: id, items: [{ description: 'bench', qty: 1, unit_price: 10 + k }] },
        });
      }
    }

    // 1. Sign-ins per second.
    let done = 0;
    const end = Date.now() + SIGN_IN_SECONDS * 1000;
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let i = worker; Date.now() < end; i += CONCURRENCY) {
          await call('/api/my/login', {
            method: 'POST',
            body: { username: `user${ids[i % ids.length]}@bench`, password: PASSWORD },
          });
          done += 1;
        }
      }),
    );
    const rate = done / seconds(t0);
    console.log(
      `\nsign-ins: ${done} in ${seconds(t0).toFixed(1)} s = ${rate.toFixed(0)}/s (concurrency ${CONCURRENCY})`,
    );

    // 2. Reads, subscriber and manager, interleaved in the same run.
    const tokens = new Map<number, string>();
    for (const id of ids) {
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
    console.log(`\nreads, ${SAMPLES} subscribers x ${ROUNDS} rounds, ms`);
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
    await app.stop();
    await store.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
