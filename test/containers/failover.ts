/**
 * `npm run test:failover` (docs/operations.md, "A database that fails over"; not part of
 * `test:containers`): the compose profile `ha` — etcd, PostgreSQL pg-a and pg-b under Patroni
 * (synchronous replication), NATS — and the units on deploy/docker-compose.ha.yml's multi-host
 * DATABASE_URL, all on the host's loopback on free ports. 50 clients pay into their own invoices
 * without pause; the primary's container is killed (SIGKILL). Checks: Patroni promotes the replica,
 * the units find it by themselves (no restart), payments are acknowledged again, every acknowledged
 * payment is in the new primary's ledger, every invoice's paid amount equals its payments, and
 * the killed node comes back as a replica. Prints the time from the kill to the first served
 * write, and the seconds of each step; exits non-zero on any failure.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { freePort } from '../../runtime/cluster';
import { HostPicker, parseHostList, pickingClient } from '../../shared/db/hosts';
import { repoRoot } from '../../shared/paths';
import { buildImages, composeCommand, run, stackEnv, waitForHealth } from '../../scripts/containers';

const CLIENTS = 50;
const ADMIN = { username: 'ha-admin', password: 'ha-admin-pw' };
const UNITS = ['gateway', 'billing', 'subscribers', 'network-access', 'notifier'];
const steps: { step: string; seconds: number; outcome: string }[] = [];
const log: string[] = [];

function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new Error(`check failed: ${what}`);
}

async function step<T>(name: string, fn: () => Promise<T>, outcome?: (v: T) => string): Promise<T> {
  const t = Date.now();
  process.stdout.write(`[test:failover] ${name} ...\n`);
  const value = await fn();
  const seconds = (Date.now() - t) / 1000;
  const out = outcome ? outcome(value) : 'ok';
  steps.push({ step: name, seconds, outcome: out });
  process.stdout.write(`[test:failover] ${name}: ${seconds.toFixed(1)} s, ${out}\n`);
  return value;
}

async function waitUntil<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
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

async function main(): Promise<void> {
  const total = Date.now();
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

  if (process.env.CONTAINERS_BUILD !== '0') await step('build images', () => buildImages(env, (l) => log.push(l)));
  let db: Pool | undefined;
  let started = false;
  try {
    started = true;
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
    await step('the units on the multi-host DATABASE_URL, until /health is 200', async () => {
      await compose(['up', '-d', '--no-build', '--no-deps', ...UNITS]);
      await waitForHealth(`http://127.0.0.1:${port}`, 300_000);
    });
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
    const leader = members.find((m) => m.role === 'leader')!.name;
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
    const figures = await step(
      `kill the primary (${leader}, SIGKILL) while ${CLIENTS} clients pay`,
      async () => {
        stopAt = Date.now() + 180_000; // the failover has 3 minutes to serve a write again
        const clients = invoices.map(pay);
        await waitUntil('payments before the kill', async () => acknowledged.length >= 100, 60_000);
        const before = acknowledged.length;
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
        };
      },
      (f) =>
        `first served write ${f.seconds.toFixed(1)} s after the kill (sent at ${f.firstSent.toFixed(1)} s; new leader running after ${f.promoted.toFixed(1)} s, ` +
        `out of recovery after ${f.outOfRecovery.toFixed(1)} s, a direct commit after ${f.writable.toFixed(1)} s); ` +
        `${f.before} payments before, ${f.after} after, ${f.failed} failed attempts (${f.timeline}); ${f.newLeader} promoted`,
    );

    await step(
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
          180_000,
        );
      },
      () => 'streaming from the new primary',
    );
    console.log(
      `\n[test:failover] failover: first served write ${figures.seconds.toFixed(1)} s after the primary was killed ` +
        `(Patroni's new leader running after ${figures.promoted.toFixed(1)} s, out of recovery after ${figures.outOfRecovery.toFixed(1)} s, ` +
        `its first direct commit after ${figures.writable.toFixed(1)} s; ${figures.failed} failed attempts by ${CLIENTS} clients)`,
    );
  } catch (err) {
    console.error(`[test:failover] FAILED: ${(err as Error).stack ?? err}`);
    console.error(`[test:failover] last lines of docker-compose:\n${log.slice(-60).join('\n')}`);
    process.exitCode = 1;
  } finally {
    await db?.end().catch(() => undefined);
    if (started) {
      if (process.exitCode) {
        for (const s of ['pg-a', 'pg-b']) {
          const id = containerOf(s);
          const out = id ? spawnSync('docker', ['logs', '--tail', '30', id], { encoding: 'utf8' }) : undefined;
          if (out) console.error(`[test:failover] ${s}:\n${out.stdout}${out.stderr}`);
        }
      }
      await step('stop and remove the containers and volumes', () =>
        compose(['down', '--volumes', '--timeout', '30']),
      ).catch((err) => {
        console.error(err);
        process.exitCode = 1;
      });
    }
  }
  console.log('[test:failover] steps');
  for (const s of steps) console.log(`  ${s.seconds.toFixed(1).padStart(7)} s  ${s.step}: ${s.outcome}`);
  console.log(
    `[test:failover] ${process.exitCode ? 'FAILED' : 'passed'} in ${((Date.now() - total) / 1000).toFixed(0)} s`,
  );
}

void main();
