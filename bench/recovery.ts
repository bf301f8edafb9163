/**
 * `npm run bench:recovery`: how long the distributed mode takes to serve again after its NATS
 * restarts (test/integration/cluster-faults.test.ts checks that it does, and loses nothing; the
 * time is measured here, beside its reference, not asserted on a shared machine). Gateway, billing
 * and subscribers run as separate processes on a nats-server of this script's own, stopped for
 * BENCH_OUTAGE_SECONDS each round, then started again; the figure is from the restart to the first
 * request served across processes (probes every 50 ms).
 *
 * Environment (all optional):
 *   NATS_SERVER          /usr/sbin/nats-server
 *   DATABASE_URL         a scratch database (unset: an embedded PostgreSQL under BENCH_DATA_DIR)
 *   BENCH_ROUNDS 3       BENCH_OUTAGE_SECONDS 2
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { intVar } from '../shared/config';
import { freePort, startCluster } from '../runtime/cluster';
import { benchEnv } from './load';
import { scratchDataDir } from './scratch';

const ROUNDS = intVar(process.env, 'BENCH_ROUNDS', 3, 1);
const OUTAGE_MS = intVar(process.env, 'BENCH_OUTAGE_SECONDS', 2, 0) * 1000;
const NATS_SERVER = process.env.NATS_SERVER || '/usr/sbin/nats-server';
const ADMIN = { username: 'bench-admin', password: 'bench-admin-pw' };
/** docs/distributed.md: nats.js reconnects every 250 ms; the cluster serves again within 10 s. */
const REFERENCE_MS = 10_000;
/** A probe sent before every process reconnected is lost (NATS keeps nothing for an absent subscriber). */
const PROBE_TIMEOUT_MS = 2_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

async function startNats(port: number): Promise<ChildProcess> {
  const child = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  while (!(await listening(port))) {
    if (child.exitCode !== null) throw new Error(`${NATS_SERVER} exited (${child.exitCode})`);
    await sleep(20);
  }
  return child;
}

function stopNats(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

async function served(baseUrl: string, token: string): Promise<boolean> {
  const res = await fetch(`${baseUrl}/api/services`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  }).catch(() => undefined);
  return res?.status === 200;
}

/**
 * From now to the first answer of a probe sent every 50 ms: one probe at a time would wait out the
 * timeout of a lost one, and the figure would be that timeout, not the reconnection.
 */
async function timeToServe(baseUrl: string, token: string): Promise<number> {
  const started = performance.now();
  let servedAt: number | undefined;
  const probes: Promise<void>[] = [];
  while (servedAt === undefined) {
    probes.push(
      served(baseUrl, token).then((ok) => {
        if (ok) servedAt ??= performance.now();
      }),
    );
    await sleep(50);
  }
  await Promise.all(probes);
  return servedAt - started;
}

async function main(): Promise<void> {
  const port = await freePort();
  const transporter = `nats://127.0.0.1:${port}`;
  const scratch = process.env.BENCH_DATA_DIR ? undefined : scratchDataDir('recovery');
  const dataDir = process.env.BENCH_DATA_DIR || scratch!.dir;
  console.log(`bench:recovery  ${ROUNDS} NATS restarts, ${OUTAGE_MS / 1000} s down each, ${os.cpus().length} cores`);
  let nats = await startNats(port);
  const cluster = await startCluster({
    env: {
      ...benchEnv(),
      SERVICES: 'gateway,billing,subscribers',
      TRANSPORTER: transporter,
      DATABASE_URL: process.env.DATABASE_URL || '',
      DATA_DIR: dataDir,
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
    },
    output: () => undefined,
  });
  try {
    const login = await fetch(`${cluster.baseUrl}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
    const { token } = ((await login.json()) as { data: { token: string } }).data;
    if (!(await served(cluster.baseUrl, token))) throw new Error('the cluster does not serve before the first restart');
    const figures: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      await stopNats(nats);
      await sleep(OUTAGE_MS);
      nats = await startNats(port);
      figures.push(await timeToServe(cluster.baseUrl, token));
      console.log(`NATS restart ${round}: served again after ${figures.at(-1)!.toFixed(0).padStart(5)} ms`);
    }
    const worst = Math.max(...figures);
    console.log(`worst ${worst.toFixed(0)} ms   reference: within ${REFERENCE_MS / 1000} s (docs/distributed.md)`);
  } finally {
    await cluster.stop();
    await stopNats(nats);
    scratch?.dispose();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
