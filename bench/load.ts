/**
 * What the HTTP benchmarks share: the typed autocannon entry point, the server's environment, and
 * the app run in a child process (so the load generator does not share the server's event loop).
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { withClientAt } from '../shared/db/client-at';
import { signToken } from '../shared/auth/jwt';
import { loadConfig } from '../shared/config';
import { startApp } from '../runtime/app';
import { scratchDataDir } from './scratch';

/** What the benches read of an autocannon run (the package ships no types). */
export interface AutocannonResult {
  /** Completed requests: in all, and per second (the average, the slowest and the fastest second). */
  requests: { average: number; total: number; min: number; max: number };
  non2xx: number;
  errors: number;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
export interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  /** Stop after this many requests (before `duration` ends). */
  amount?: number;
  headers: Record<string, string>;
  requests: { setupRequest: (req: AutocannonRequest) => AutocannonRequest }[];
}) => AutocannonInstance;

// eslint-disable-next-line @typescript-eslint/no-require-imports -- autocannon has no type declarations; the shape used is typed above.
export const autocannon: Autocannon = require('autocannon');

/** The app as the benches run it: listening on a free loopback port, rate limits out of the way. */
export function benchEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    JWT_SECRET: process.env.JWT_SECRET || 'bench-jwt-secret-not-for-production',
    ENCRYPTION_KEY: process.env.ENCRYPTION_KEY || 'b'.repeat(64),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    RATE_LIMIT_PER_MIN: '1000000000',
    SERVICES: process.env.BENCH_SERVICES || 'gateway,billing',
  };
}

/**
 * A bench script is both the driver and, forked with `serve` as its first argument, the server it
 * measures: runs the one the arguments ask for. A server that fails exits; a driver sets the code.
 */
export function runBench(main: () => Promise<void>, serve: (args: string[]) => Promise<void>): void {
  const fail = (exit: boolean) => (err: unknown) => {
    console.error(err);
    if (exit) process.exit(1);
    process.exitCode = 1;
    // The driver's finally blocks have run; a simulator, pool or timer a failed start left open must
    // not keep it alive (bench:coa hung so), yet a clean exit is not cut short by this unref'd timer.
    setTimeout(() => process.exit(1), 2000).unref();
  };
  if (process.argv[2] === 'serve') serve(process.argv.slice(3)).catch(fail(true));
  else main().catch(fail(false));
}

/**
 * A token of manager 1, an admin, created in the bench database if missing: the gateway checks
 * every token against its manager's row.
 */
export async function benchAdminToken(db: { query(text: string): Promise<unknown> }, secret: string): Promise<string> {
  await db.query(
    `insert into managers (id, username, password_hash, role) values (1, 'bench-admin', '!', 'admin') on conflict (id) do nothing`,
  );
  await db.query(
    `select setval(pg_get_serial_sequence('managers', 'id'), greatest(1, (select max(id) from managers)))`,
  );
  return signToken({ managerId: 1, role: 'admin', resellerId: null, permissions: [] }, secret, 3600).token;
}

/** Child side: run the app, report where it listens, answer 'cpu' with its CPU time (µs), stop on 'stop'. */
export async function serveApp(): Promise<void> {
  const app = await startApp(loadConfig(process.env));
  process.send?.({ baseUrl: app.baseUrl, databaseUrl: app.databaseUrl });
  // A driver that died without asking leaves no server (and its embedded PostgreSQL) running.
  process.once('disconnect', () => void app.stop().then(() => process.exit(1)));
  process.on('message', (m) => {
    if (m === 'stop') void app.stop().then(() => process.exit(0));
    if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpu: user + system });
    }
  });
}

export interface AppServer {
  child: ChildProcess;
  baseUrl: string;
  databaseUrl: string;
}

/**
 * Driver side: forks `script` with `serve` (see runBench) and waits until the app listens.
 * BENCH_SERVER_ARGS are node flags for that process only (a CPU profile of the server: node refuses
 * `--cpu-prof` in NODE_OPTIONS, and the driver's own profile would be mixed in).
 */
export function forkApp(script: string, env: NodeJS.ProcessEnv = benchEnv()): Promise<AppServer> {
  const execArgv = process.env.BENCH_SERVER_ARGS?.split(' ').filter(Boolean);
  const child = fork(script, ['serve'], { env, stdio: 'inherit', execArgv });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ child, ...(m as { baseUrl: string; databaseUrl: string }) }));
    child.once('exit', (code) => reject(new Error(`server exited with code ${code}`)));
  });
}

/**
 * The server process's CPU time so far in µs. CPU per request is printed beside the rates because
 * it moves far less than req/s on a host whose steal and neighbours vary from run to run.
 */
export function serverCpu(server: AppServer): Promise<number> {
  return new Promise((resolve) => {
    server.child.once('message', (m) => resolve((m as { cpu: number }).cpu));
    server.child.send('cpu');
  });
}

/** The secrets of the benches that run the app in their own process (they sign tokens and seed with them). */
export const IN_PROCESS_SECRETS = { JWT_SECRET: 'bench-jwt-secret-not-for-production', ENCRYPTION_KEY: 'c'.repeat(64) };

/** The app in the bench's own process on its scratch store: a free loopback port, rate limits out of the way. */
export function startInProcessApp(
  store: { env: { DATABASE_URL: string; DATA_DIR?: string } },
  options?: Parameters<typeof startApp>[1],
): ReturnType<typeof startApp> {
  return startApp(
    loadConfig({
      ...process.env,
      ...IN_PROCESS_SECRETS,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MIN: '100000000',
      DATA_DIR: './data',
      ...store.env,
    }),
    options,
  );
}

/** One statement on its own connection, closed after (a server-wide command, a database created). */
export async function runStatement(url: string, statement: string): Promise<void> {
  await withClientAt(url, (client) => client.query(statement));
}

/**
 * Where a bench keeps its data: a fresh database beside DATABASE_URL's (dropped afterwards unless
 * BENCH_KEEP=1), or, without DATABASE_URL, an embedded PostgreSQL in a temporary DATA_DIR (scratch.ts).
 */
export async function scratchStore(
  prefix: string,
): Promise<{ env: { DATABASE_URL: string; DATA_DIR?: string }; dispose(): Promise<void> }> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const scratch = scratchDataDir(prefix);
    return { env: { DATABASE_URL: '', DATA_DIR: scratch.dir }, dispose: async () => scratch.dispose() };
  }
  const name = `bench_${prefix}_${Date.now().toString(36)}`;
  const admin = (statement: string) => runStatement(adminUrl, statement);
  await admin(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    dispose: async () => {
      if (process.env.BENCH_KEEP !== '1') await admin(`drop database if exists "${name}" with (force)`);
    },
  };
}

/**
 * A kept database named by `variable` (BENCH_REPORTS_REUSE, BENCH_LEDGER_REUSE...), on DATABASE_URL's server: a base
 * seeded once at the scale serves several benches and runs; never dropped.
 */
export function reusedStore(
  variable: string,
  name: string,
): { env: { DATABASE_URL: string }; dispose(): Promise<void> } {
  if (!process.env.DATABASE_URL) throw new Error(`${variable} needs DATABASE_URL (the server holding it)`);
  const url = new URL(process.env.DATABASE_URL);
  url.pathname = `/${name}`;
  return { env: { DATABASE_URL: url.toString() }, dispose: async () => undefined };
}

/** The middle of a list in any order (the upper middle of an even one); 0 for an empty one. */
export function median(xs: number[]): number {
  return xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}

/** The p-th percentile of an ascending list (nearest rank); 0 for an empty one. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Runs one step of a long bench and prints its label, seconds and the load average as it ends (the
 * machine is shared: a figure means little without the load it was taken under).
 */
export async function timedStep<T>(label: string, run: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const t0 = process.hrtime.bigint();
  const value = await run();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const load = os.loadavg().map((l) => l.toFixed(1));
  console.log(`  ${label}: ${seconds.toFixed(1)} s (load average ${load.join(' ')})`);
  return { value, seconds };
}
