/**
 * What the distributed tests share: a cluster of `dist/server.js` processes (runtime/cluster.ts),
 * a seeded subscriber with an invoice, and dependencies a test may stop and start again (a
 * private nats-server and a private PostgreSQL: never the machine's own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { freePort, startCluster, type Cluster } from '../../runtime/cluster';
import { repoRoot } from '../../shared/paths';
import { client, testEnv } from '../helpers/app';
import { waitFor } from '../helpers/wait';

export const ADMIN = { username: 'cluster-admin', password: 'cluster-admin-pw' };

/** Starts the cluster on `databaseUrl`; children's log lines are kept for a failure message. */
export async function startTestCluster(
  databaseUrl: string,
  extra: Record<string, string>,
): Promise<Cluster & { log: string[] }> {
  const log: string[] = [];
  const env = {
    ...process.env,
    ...testEnv(databaseUrl, {
      LOG_LEVEL: 'warn',
      NAMESPACE: `cluster-${crypto.randomBytes(4).toString('hex')}`,
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      ...extra,
    }),
  };
  try {
    const cluster = await startCluster({
      env,
      migrate: false,
      output: (units, line) => log.push(`[${units}] ${line}`),
      readyTimeoutMs: 120_000,
    });
    return Object.assign(cluster, { log });
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${log.slice(-40).join('\n')}`, { cause: err });
  }
}

export async function login(baseUrl: string): Promise<string> {
  const res = await client(baseUrl).post('/api/auth/login', ADMIN);
  if (res.status !== 200) throw new Error(`login: ${res.status} ${res.text}`);
  return res.body.data.token;
}

export interface Seeded {
  planId: number;
  resellerId: number;
  subscriberId: number;
  invoiceId: number;
}

/** A plan, a reseller with balance, a subscriber and a 100.00 invoice, all through the HTTP API. */
export async function seed(baseUrl: string, token: string, tag = 'c'): Promise<Seeded> {
  const api = client(baseUrl);
  const ok = <T>(res: { status: number; text: string; body: T }, status: number, what: string): T => {
    if (res.status !== status) throw new Error(`${what}: ${res.status} ${res.text}`);
    return res.body;
  };
  const plan = ok(
    await api.post('/api/services', { name: `Plan ${tag}`, price: 20, duration_days: 30 }, { token }),
    201,
    'plan',
  );
  const reseller = ok(
    await api.post('/api/resellers', { name: `Reseller ${tag}`, balance: 1000 }, { token }),
    201,
    'reseller',
  );
  ok(
    await api.post(
      `/api/resellers/${reseller.data.id}/service-limits`,
      { service_id: plan.data.id, max_subscribers: 100 },
      { token },
    ),
    200,
    'service limit',
  );
  const subscriber = ok(
    await api.post(
      '/api/subscribers',
      { username: `${tag}@isp`, password: 'pppoe-pw', service_id: plan.data.id, reseller_id: reseller.data.id },
      { token },
    ),
    201,
    'subscriber',
  );
  const invoice = ok(
    await api.post(
      '/api/invoices',
      { subscriber_id: subscriber.data.id, items: [{ description: 'Router', qty: 1, unit_price: 100 }] },
      { token },
    ),
    201,
    'invoice',
  );
  return {
    planId: plan.data.id,
    resellerId: reseller.data.id,
    subscriberId: subscriber.data.id,
    invoiceId: invoice.data.id,
  };
}

/** The body of a failed request is the API's envelope, with a 5xx status. */
export function isCleanFailure(res: { status: number; body: unknown }): boolean {
  const body = res.body as { success?: unknown; message?: unknown } | undefined;
  return res.status >= 500 && res.status <= 504 && body?.success === false && typeof body.message === 'string';
}

// ------------------------------------------------------------------ private dependencies

export interface Restartable {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

const NATS_SERVER = '/usr/sbin/nats-server';

/** A nats-server of this test alone, on a free port, that the test may stop and start. */
export async function privateNats(): Promise<Restartable> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const nats: Restartable = {
    url: `nats://127.0.0.1:${port}`,
    port,
    async start() {
      if (!fs.existsSync(NATS_SERVER))
        throw new Error(`${NATS_SERVER} is missing: apt-get install nats-server (npm test installs it as root)`);
      child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      await waitFor(
        'nats-server listening',
        async () => {
          const net = await import('node:net');
          return new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1');
            s.once('connect', () => (s.destroy(), resolve(true)));
            s.once('error', () => resolve(false));
          });
        },
        10_000,
      );
    },
    async stop() {
      const c = child;
      child = undefined;
      c?.kill('SIGTERM');
      if (c) await exited(c);
    },
    close: () => nats.stop(),
  };
  await nats.start();
  return nats;
}

/**
 * An embedded PostgreSQL (the app's own bootstrap) in a helper process: stopping the helper stops
 * the server (fast shutdown), starting it again reopens the same data on the same port.
 */
export async function privatePostgres(): Promise<Restartable> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cluster-pg-'));
  fs.chmodSync(dataDir, 0o755);
  const port = await freePort();
  const bootstrap = pathToFileURL(path.join(repoRoot(), 'shared', 'db', 'bootstrap.mjs')).href;
  const script = `
    import { startEmbeddedPostgres, runMigrations } from ${JSON.stringify(bootstrap)};
    const pg = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port} });
    await runMigrations(pg.url);
    process.stdout.write(JSON.stringify({ url: pg.url }) + '\\n');
    process.on('SIGTERM', () => pg.stop().then(() => process.exit(0), () => process.exit(1)));
    setInterval(() => {}, 1 << 30);`;
  let child: ChildProcess | undefined;
  let url = '';
  const pg: Restartable = {
    get url() {
      return url;
    },
    port,
    async start() {
      const c = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      let out = '';
      c.stderr!.on('data', (d) => (out += d));
      url = await new Promise<string>((resolve, reject) => {
        c.stdout!.on('data', (d) => {
          out += d;
          const line = out.split('\n').find((l) => l.startsWith('{"url"'));
          if (line) resolve(JSON.parse(line).url);
        });
        c.once('exit', (code) => reject(new Error(`private PostgreSQL exited (${code}): ${out}`)));
      });
    },
    async stop() {
      const c = child;
      child = undefined;
      // The helper stops its server (pg_ctl stop) on SIGTERM, then exits.
      c?.kill('SIGTERM');
      if (c) await exited(c);
    },
    async close() {
      await pg.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await pg.start();
  return pg;
}
