/**
 * The failover drill of `npm run test:failover` and `npm run bench:failover` (docs/operations.md,
 * "A database that fails over"): the compose profile `ha` — etcd, PostgreSQL pg-a and pg-b under
 * Patroni (synchronous replication), NATS — and the units on deploy/docker-compose.ha.yml's
 * multi-host DATABASE_URL, all on the host's loopback on free ports. Optionally a base is loaded
 * into the primary first (`seed`) and the replica left to catch up. 50 clients pay into their own
 * invoices without pause; the primary's container is killed (SIGKILL). Checks: Patroni promotes the
 * replica, the units find it by themselves (no restart), payments are acknowledged again, every
 * acknowledged payment is in the new primary's ledger, every invoice's paid amount equals its
 * payments, and the killed node comes back as a replica. Returns the time from the kill to the first
 * served write and the seconds of each step; rejects on any failure, the containers removed either way.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { freePort } from '../../runtime/cluster';
import { HostPicker, parseHostList, pickingClient } from '../../shared/db/hosts';
import { repoRoot } from '../../shared/paths';
import { buildImages, composeCommand, run, stackEnv, waitForHealth } from '../../scripts/containers';
import { check, stepper, waitUntil, type Step } from './steps';

const CLIENTS = 50;
const ADMIN = { username: 'ha-admin', password: 'ha-admin-pw' };
const UNITS = ['gateway', 'billing', 'subscribers', 'network-access', 'notifier'];

export interface Seed {
  label: string;
  /** Before the units start (a restored dump carries its migrations), or once they have migrated. */
  beforeUnits: boolean;
  /** Given a superuser URL of the primary's billing database. */
  load: (primaryUrl: string) => Promise<void>;
}

export interface DrillOptions {
  /** Prefix of the progress lines, e.g. `[test:failover]`. */
  tag: string;
  /** Builds the images first (deploy/images.sh). */
  build: boolean;
  /** Loads a base into the primary before the clients pay (bench/failover-seed.ts). */
  seed?: Seed;
  /** Each finished step, as it finishes. */
  steps: Step[];
}

export interface FailoverFigures {
  /** Seconds from the kill to the first acknowledged payment sent after it. */
  seconds: number;
  firstSent: number;
  promoted: number;
  outOfRecovery: number;
  writable: number;
  before: number;
  after: number;
  failed: number;
  acknowledged: number;
  lost: number;
  timeline: string;
  newLeader: string;
  /** The replica's lag behind the primary just before the kill, as the primary saw it. */
  lagBytes: number;
  lagUnflushedBytes: number;
  lagSeconds: number;
  subscribers: number;
  ledgerRows: number;
  /** Seconds of the seed's load, and of the replica's catching up after it (0 without a seed). */
  seedSeconds: number;
  catchUpSeconds: number;
  /** os.loadavg() at the kill. */
  loadAtKill: number[];
}

interface Member {
  name: string;
  role: string;
  state: string;
}

/** Patroni's view of the cluster (GET /cluster on either node's REST port). */
async function cluster(restPorts: number[]): Promise<Member[]> {
  for (const port of restPorts) {
    const r = await fetch(`http://127.0.0.1:${port}/cluster`, { signal: AbortSignal.timeout(2000) }).catch(
      () => undefined,
    );
    if (r?.ok) return ((await r.json()) as { members: Member[] }).members;
  }
  return [];
}

/**
 * Watches the surviving node from outside the units, from the kill on: when it leaves recovery
 * (promoted), and when it first commits a transaction that has an id (`pg_current_xact_id()`:
 * a commit record, which waits for a synchronous standby while one is named). Set against the
 * units' first served write, these say which seconds are the database's and which the units'.
 */
async function watchSurvivor(port: number, until: () => boolean): Promise<{ promoted: number; writable: number }> {
  const out = { promoted: 0, writable: 0 };
  while (!out.writable && !until()) {
    const c = new Client({
      connectionString: `postgres://billing:billing@127.0.0.1:${port}/billing`,
      connectionTimeoutMillis: 1000,
    });
    c.on('error', () => undefined);
    try {
      await c.connect();
      const { rows } = await c.query<{ r: boolean }>('select pg_is_in_recovery() as r');
      if (!rows[0].r) {
        out.promoted ||= Date.now();
        // A commit left waiting for a synchronous standby does not answer: given 1 s, then asked again.
        const wrote = await Promise.race([
          c.query('select pg_current_xact_id()').then(() => true),
          new Promise<false>((r) => setTimeout(() => r(false), 1000)),
        ]);
        if (wrote) out.writable = Date.now();
      }
    } catch {
      // not up, or refused: asked again
    } finally {
      void c.end().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return out;
}

/** Failed attempts after the kill per 5 s, by what the client saw (status or error name). */
function failureTimeline(failures: { at: number; what: string }[], from: number): string {
  const buckets = new Map<number, Map<string, number>>();
  for (const f of failures) {
    if (f.at < from) continue;
    const b = Math.floor((f.at - from) / 5000) * 5;
    const m = buckets.get(b) ?? new Map<string, number>();
    m.set(f.what, (m.get(f.what) ?? 0) + 1);
    buckets.set(b, m);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([b, m]) => `${b}-${b + 5} s: ${[...m.entries()].map(([w, n]) => `${n} × ${w}`).join(', ')}`)
    .join('; ');
}

async function post(base: string, token: string | undefined, p: string, body: unknown) {
  const res = await fetch(`${base}${p}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: { data?: Record<string, unknown> } & Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: kept as the status only
  }
  return { status: res.status, body: parsed };
}

/**
 * The replica's lag as the primary sees it (pg_stat_replication; its LSN columns need a superuser):
 * bytes of WAL not yet replayed, of them not yet flushed (what a promotion could lose, were the
 * replication asynchronous), and replay_lag (seconds; 0 when idle and caught up).
 */
async function replicaLag(superuserUrl: string): Promise<{ bytes: number; unflushed: number; seconds: number }> {
  const { rows } = await admin(superuserUrl, (c) =>
    c.query<{ bytes: string; unflushed: string; seconds: number }>(
      `select pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn) as bytes,
              pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn) as unflushed,
              coalesce(extract(epoch from replay_lag), 0)::float8 as seconds
         from pg_stat_replication where state = 'streaming'`,
    ),
  );
  check(rows.length === 1, `one streaming replica (${rows.length})`);
  return { bytes: Number(rows[0].bytes), unflushed: Number(rows[0].unflushed), seconds: rows[0].seconds };
}

async function admin<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

async function counts(superuserUrl: string): Promise<{ subscribers: number; ledger: number }> {
  const { rows } = await admin(superuserUrl, (c) =>
    c.query<{ s: string; l: string }>(
      'select (select count(*) from subscribers) as s, (select count(*) from transactions) as l',
    ),
  );
  return { subscribers: Number(rows[0].s), ledger: Number(rows[0].l) };
}

/** Runs the drill once on a stack of its own (see the header); rejects on the first failed check. */
export async function failoverDrill(options: DrillOptions): Promise<FailoverFigures> {
  const { tag } = options;
  const step = stepper(tag, options.steps);
  const log: string[] = [];
  const project = `isp-billing-ha-${crypto.randomBytes(3).toString('hex')}`;
  const [port, natsPort, pgA, pgB, restA, restB, dcs, dcsPeer] = await Promise.all(
    Array.from({ length: 8 }, () => freePort()),
  );
  const env = stackEnv({
    ...process.env,
    COMPOSE_PROJECT_NAME: project,
    NAMESPACE: project,
    PORT: String(port),
    NATS_PORT: String(natsPort),
    PG_A_PORT: String(pgA),
    PG_B_PORT: String(pgB),
    PG_A_REST_PORT: String(restA),
    PG_B_REST_PORT: String(restB),
    DCS_PORT: String(dcs),
    DCS_PEER_PORT: String(dcsPeer),
    JWT_SECRET: crypto.randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    EXPECTED_UNITS: UNITS.join(','),
    LOG_LEVEL: 'warn',
    // The gateway limits requests per client address (300 a minute by default), and all 50 clients come
    // from loopback: their retries during the outage spent the minute's budget, and the first write
    // after the failover waited for the next one-minute window (429s), not for the database.
    RATE_LIMIT_PER_MIN: '1000000',
    IMAGES: 'service postgres-ha nats',
  });
  const deploy = path.join(repoRoot(), 'deploy');
  const files = ['docker-compose.yml', 'docker-compose.local.yml', 'docker-compose.ha.yml'].flatMap((f) => [
    '-f',
    path.join(deploy, f),
  ]);
  const [bin, ...pre] = composeCommand();
  const compose = (args: string[]) => run(bin, [...pre, ...files, '--profile', 'ha', ...args], env, (l) => log.push(l));
  const containerOf = (service: string) =>
    execFileSync(
      'docker',
      [
        'ps',
        '-aq',
        '--filter',
        `label=com.docker.compose.project=${project}`,
        '--filter',
        `label=com.docker.compose.service=${service}`,
      ],
      { encoding: 'utf8' },
    ).trim();
  const restOf: Record<string, number> = { 'pg-a': restA, 'pg-b': restB };

  if (options.build) await step('build images', () => buildImages(env, (l) => log.push(l)));
  let db: Pool | undefined;
  let figures: FailoverFigures;
  let removed = true;
  try {
    const members = await step(
      'etcd, pg-a and pg-b under Patroni: a leader and a streaming synchronous replica',
      async () => {
        await compose(['up', '-d', '--no-build', 'etcd', 'pg-a', 'pg-b', 'nats']);
        return waitUntil(
          'a leader and a streaming sync_standby',
          async () => {
            const m = await cluster([restA, restB]);
            const leader = m.find((x) => x.role === 'leader' && x.state === 'running');
            const sync = m.find((x) => x.role === 'sync_standby' && x.state === 'streaming');
            return leader && sync && m;
          },
          300_000,
        ); // initdb, then the replica's pg_basebackup: minutes on a loaded machine
      },
      (m) => m.map((x) => `${x.name} ${x.role}`).join(', '),
    );
    const leader = members.find((m) => m.role === 'leader')!.name;
    // Patroni's superuser (deploy/docker-compose.yml: its password is POSTGRES_PASSWORD's).
    const leaderUrl = `postgres://postgres:billing@127.0.0.1:${leader === 'pg-a' ? pgA : pgB}/billing`;
    const seed = options.seed;
    let seedSeconds = 0;
    let catchUpSeconds = 0;
    const load = async (s: Seed) => {
      let t = Date.now();
      await step(`load ${s.label} into the primary (${leader})`, () => s.load(leaderUrl));
      seedSeconds = (Date.now() - t) / 1000;
      t = Date.now();
      // A checkpoint, so that the killed node's crash recovery on its restart does not replay the whole load;
      // then the replica has replayed up to it (the units keep writing a little: the lag is rarely zero).
      await step('the replica catches up', async () => {
        const lsn = await admin(leaderUrl, async (c) => {
          await c.query('checkpoint');
          return (await c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0].lsn;
        });
        await waitUntil(
          'the replica replayed the load',
          () =>
            admin(leaderUrl, async (c) => {
              const { rows } = await c.query<{ done: boolean }>(
                `select replay_lsn >= $1::pg_lsn as done from pg_stat_replication where state = 'streaming'`,
                [lsn],
              );
              return rows[0]?.done;
            }),
          1_800_000,
        );
      });
      catchUpSeconds = (Date.now() - t) / 1000;
    };
    if (seed?.beforeUnits) await load(seed);
    await step('the units on the multi-host DATABASE_URL, until /health is 200', async () => {
      await compose(['up', '-d', '--no-build', '--no-deps', ...UNITS]);
      await waitForHealth(`http://127.0.0.1:${port}`, 300_000);
    });
    if (seed && !seed.beforeUnits) await load(seed);
    const size = await counts(leaderUrl);
    const base = `http://127.0.0.1:${port}`;
    const login = await post(base, undefined, '/api/auth/login', ADMIN);
    check(login.status === 200, `login ${login.status}`);
    const token = (login.body.data as { token: string }).token;

    const invoices = await step('a plan and 50 subscribers with an invoice each', async () => {
      const plan = await post(base, token, '/api/services', { name: 'HA 10M', price: 10, duration_days: 30 });
      check(plan.status === 201, `plan ${plan.status}`);
      const ids: number[] = [];
      for (let i = 0; i < CLIENTS; i++) {
        const sub = await post(base, token, '/api/subscribers', {
          username: `ha${i}@isp`,
          password: 'pppoe-pw',
          service_id: (plan.body.data as { id: number }).id,
        });
        check(sub.status === 201, `subscriber ${sub.status} ${JSON.stringify(sub.body)}`);
        const inv = await post(base, token, '/api/invoices', {
          subscriber_id: (sub.body.data as { id: number }).id,
          items: [{ description: 'Prepaid', qty: 1, unit_price: 100000 }],
          tax_rate: 0,
        });
        check(inv.status === 201, `invoice ${inv.status}`);
        ids.push((inv.body.data as { id: number }).id);
      }
      return ids;
    });

    // ---------------------------------------------------------------- 50 clients pay; the primary is killed
    const acknowledged: { invoice: number; transaction: number }[] = [];
    const failures: { at: number; what: string }[] = [];
    let killedAt = 0;
    let firstWriteAfterKill = 0;
    let firstWriteSentAt = 0;
    let stopAt = Infinity;
    const pay = async (invoice: number) => {
      while (Date.now() < stopAt) {
        const sent = Date.now();
        try {
          const r = await post(base, token, `/api/invoices/${invoice}/payment`, { amount: 1, method: 'cash' });
          if (r.status === 200) {
            acknowledged.push({ invoice, transaction: (r.body.data as { transaction_id: number }).transaction_id });
            if (killedAt && sent > killedAt && !firstWriteAfterKill) {
              firstWriteAfterKill = Date.now();
              firstWriteSentAt = sent;
              stopAt = Date.now() + 10_000; // ten more seconds of payments on the new primary
            }
            continue;
          }
          failures.push({ at: Date.now(), what: String(r.status) });
        } catch (err) {
          failures.push({ at: Date.now(), what: (err as Error).name });
        }
        await new Promise((r) => setTimeout(r, 200)); // a client retries after a failed payment
      }
    };
    const killed = await step(
      `kill the primary (${leader}, SIGKILL) while ${CLIENTS} clients pay`,
      async () => {
        stopAt = Date.now() + 180_000; // the failover has 3 minutes to serve a write again
        const clients = invoices.map(pay);
        await waitUntil('payments before the kill', async () => acknowledged.length >= 100, 60_000);
        const lag = await replicaLag(leaderUrl);
        const before = acknowledged.length;
        const loadAtKill = os.loadavg();
        killedAt = Date.now();
        execFileSync('docker', ['kill', '-s', 'KILL', containerOf(leader)]);
        const survivor = watchSurvivor(leader === 'pg-a' ? pgB : pgA, () => Date.now() >= stopAt);
        // When Patroni's new leader runs, apart from when the units serve again.
        const promoted = waitUntil(
          'a new leader running',
          async () => {
            const m = await cluster([restA, restB]);
            return m.some((x) => x.role === 'leader' && x.name !== leader && x.state === 'running') && Date.now();
          },
          180_000,
        ).catch(() => 0);
        await Promise.all(clients);
        const promotedAt = await promoted;
        const direct = await survivor;
        check(firstWriteAfterKill > 0, `no payment acknowledged within 180 s of the kill (${failures.length} failed)`);
        const m = await cluster([restA, restB]);
        const newLeader = m.find((x) => x.role === 'leader');
        check(newLeader && newLeader.name !== leader, `a new leader: ${JSON.stringify(m)}`);
        return {
          before,
          after: acknowledged.length - before,
          failed: failures.length,
          seconds: (firstWriteAfterKill - killedAt) / 1000,
          promoted: promotedAt ? (promotedAt - killedAt) / 1000 : NaN,
          outOfRecovery: direct.promoted ? (direct.promoted - killedAt) / 1000 : NaN,
          writable: direct.writable ? (direct.writable - killedAt) / 1000 : NaN,
          firstSent: (firstWriteSentAt - killedAt) / 1000,
          timeline: failureTimeline(failures, killedAt),
          newLeader: newLeader.name,
          lag,
          loadAtKill,
        };
      },
      (f) =>
        `first served write ${f.seconds.toFixed(1)} s after the kill (sent at ${f.firstSent.toFixed(1)} s; new leader running after ${f.promoted.toFixed(1)} s, ` +
        `out of recovery after ${f.outOfRecovery.toFixed(1)} s, a direct commit after ${f.writable.toFixed(1)} s); ` +
        `${f.before} payments before, ${f.after} after, ${f.failed} failed attempts (${f.timeline}); ${f.newLeader} promoted`,
    );

    const acknowledgedCount = await step(
      'every acknowledged payment is in the new primary',
      async () => {
        const list = parseHostList(
          `postgres://billing:billing@127.0.0.1:${pgA},127.0.0.1:${pgB}/billing?target_session_attrs=read-write`,
        )!;
        db = new Pool({ connectionString: list.base, max: 2, Client: pickingClient(new HostPicker(list)) });
        const ids = acknowledged.map((a) => a.transaction);
        const { rows } = await db.query<{ id: number }>('select id from transactions where id = any($1::bigint[])', [
          ids,
        ]);
        const found = new Set(rows.map((r) => Number(r.id)));
        const lost = ids.filter((id) => !found.has(id));
        check(lost.length === 0, `${lost.length} acknowledged payments lost: ${lost.slice(0, 10).join(', ')}`);
        const { rows: off } = await db.query(
          `select i.id from invoices i
          where i.id = any($1::int[])
            and i.paid_amount <> coalesce((select sum(p.amount) from invoice_payments p where p.invoice_id = i.id), 0)`,
          [invoices],
        );
        check(off.length === 0, `invoices whose paid amount differs from their payments: ${JSON.stringify(off)}`);
        return ids.length;
      },
      (n) => `${n} acknowledged, 0 lost`,
    );

    await step(
      `${leader} started again rejoins as a replica`,
      async () => {
        execFileSync('docker', ['start', containerOf(leader)]);
        await waitUntil(
          `${leader} streaming`,
          async () => {
            const r = await fetch(`http://127.0.0.1:${restOf[leader]}/replica`, { signal: AbortSignal.timeout(2000) });
            return r.status === 200;
          },
          // A loaded node's crash recovery and pg_rewind take longer than an empty one's.
          options.seed ? 900_000 : 180_000,
        );
      },
      () => 'streaming from the new primary',
    );
    const { lag, ...rest } = killed;
    figures = {
      ...rest,
      acknowledged: acknowledgedCount,
      lost: 0,
      lagBytes: lag.bytes,
      lagUnflushedBytes: lag.unflushed,
      lagSeconds: lag.seconds,
      subscribers: size.subscribers,
      ledgerRows: size.ledger,
      seedSeconds,
      catchUpSeconds,
    };
  } catch (err) {
    console.error(`${tag} FAILED: ${(err as Error).stack ?? err}`);
    console.error(`${tag} last lines of docker-compose:\n${log.slice(-60).join('\n')}`);
    for (const s of ['pg-a', 'pg-b']) {
      const id = containerOf(s);
      const out = id ? spawnSync('docker', ['logs', '--tail', '30', id], { encoding: 'utf8' }) : undefined;
      if (out) console.error(`${tag} ${s}:\n${out.stdout}${out.stderr}`);
    }
    throw err;
  } finally {
    await db?.end().catch(() => undefined);
    await step('stop and remove the containers and volumes', () =>
      compose(['down', '--volumes', '--timeout', '30']),
    ).catch((err) => {
      console.error(err);
      removed = false;
    });
  }
  check(removed, 'the containers and volumes removed');
  return figures;
}
