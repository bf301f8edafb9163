/**
 * `npm run bench:floor`: what this machine can do for GET /api/invoices/:id without our stack, so
 * that bench:billing's read figure can be judged. The same autocannon load (BENCH_CONNECTIONS, random
 * ids) hits, in turn, a bare `http.createServer` that runs
 *   select1  `select 1`,
 *   row      `select * from invoices where id = $1`,
 *   detail   this project's detail statement (invoiceJson: the invoice, items, payments as JSON),
 * and then the app itself (gateway and billing, as bench:billing runs it). For each it prints
 * req/s and the CPU per request of the server process, of PostgreSQL (its processes in /proc, when
 * the database runs on this machine) and of the load generator.
 *
 * Run it after bench:billing, against the same DATABASE_URL (it needs the seeded invoices).
 * Environment: DATABASE_URL (required), BENCH_CONNECTIONS 50, BENCH_DURATION 10.
 */
import { execSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { intVar, loadConfig, setConfig } from '../shared/config';
import { initDatabase, pgPool } from '../shared/db/client';
import { startApp } from '../runtime/app';
import { invoiceJson } from '../services/billing/queries';
import { autocannon, benchAdminToken, benchEnv, runBench, type AutocannonRequest } from './load';

const CONNECTIONS = intVar(process.env, 'BENCH_CONNECTIONS', 50, 1);
const DURATION = intVar(process.env, 'BENCH_DURATION', 10, 1);
const VARIANTS = ['select1', 'row', 'detail', 'app'] as const;
type Variant = (typeof VARIANTS)[number];

/** Child mode: one server variant; reports its URL, answers 'cpu' with its CPU time in µs. */
async function serve(variant: Variant): Promise<void> {
  let baseUrl: string | undefined;
  if (variant === 'app') {
    baseUrl = (await startApp(loadConfig(process.env))).baseUrl;
  } else {
    setConfig(loadConfig(process.env));
    initDatabase(process.env.DATABASE_URL!);
    const pool = pgPool();
    const handlers: Record<Exclude<Variant, 'app'>, (id: number) => Promise<string>> = {
      select1: async () => JSON.stringify((await pool.query({ name: 'floor_select1', text: 'select 1 as one' })).rows),
      row: async (id) => JSON.stringify((await pool.query({ name: 'floor_row', text: 'select * from invoices where id = $1', values: [id] })).rows),
      detail: async (id) => `{"success":true,"data":${(await invoiceJson(id))!.json}}`,
    };
    const handle = handlers[variant];
    const server = http.createServer((req, res) => {
      handle(Number(req.url!.split('/').pop())).then(
        (text) => {
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
          res.end(text);
        },
        () => {
          res.statusCode = 500;
          res.end();
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  process.send?.({ baseUrl });
  process.on('message', (m) => {
    if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpu: user + system });
    }
  });
}

function ask<T>(child: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as T));
    child.send(message);
  });
}

const clockTicks = (() => {
  try {
    return Number(execSync('getconf CLK_TCK').toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU µs used so far by every process named postgres on this machine, or undefined without /proc. */
function postgresCpu(): number | undefined {
  if (!fs.existsSync('/proc/self/stat')) return undefined;
  let ticks = 0;
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (!stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).startsWith('postgres')) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended while we looked
    }
  }
  return (ticks * 1e6) / clockTicks;
}

async function measure(variant: Variant, ids: { min: number; max: number }, token: string): Promise<number> {
  const child = fork(__filename, ['serve', variant], { env: benchEnv(), stdio: 'inherit' });
  try {
    const { baseUrl } = await new Promise<{ baseUrl: string }>((resolve, reject) => {
      child.once('message', (m) => resolve(m as { baseUrl: string }));
      child.once('exit', (code) => reject(new Error(`${variant} server exited with code ${code}`)));
    });
    const run = (duration: number) =>
      autocannon({
        url: baseUrl,
        connections: CONNECTIONS,
        duration,
        headers: { authorization: `Bearer ${token}` },
        requests: [{ setupRequest: (req: AutocannonRequest) => ({ ...req, method: 'GET', path: `/api/invoices/${ids.min + Math.floor(Math.random() * (ids.max - ids.min + 1))}` }) }],
      });
    await run(3); // warm-up: JIT and prepared statements
    const server0 = (await ask<{ cpu: number }>(child, 'cpu')).cpu;
    const pg0 = postgresCpu();
    const self0 = process.cpuUsage();
    const result = await run(DURATION);
    const self = process.cpuUsage(self0);
    const server = (await ask<{ cpu: number }>(child, 'cpu')).cpu - server0;
    const pg1 = postgresCpu();
    const n = Math.max(1, result.requests.total);
    const per = (us: number | undefined) => (us === undefined ? 'n/a' : `${(us / n).toFixed(0)} µs`);
    console.log(
      `${variant.padEnd(8)} ${(result.requests.total / DURATION).toFixed(0).padStart(6)} req/s   CPU per request: server ${per(server)}, ` +
        `PostgreSQL ${per(pg0 === undefined || pg1 === undefined ? undefined : pg1 - pg0)}, load generator ${per(self.user + self.system)}   non-2xx ${result.non2xx}`,
    );
    return result.requests.total / DURATION;
  } finally {
    child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('set DATABASE_URL to the database bench:billing seeded');
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  const { rows: [ids] } = await pool.query<{ min: number; max: number }>('select min(id)::int as min, max(id)::int as max from invoices');
  const token = await benchAdminToken(pool, loadConfig(benchEnv()).jwtSecret);
  await pool.end();
  if (ids.min === null) throw new Error('no invoices: run npm run bench:billing against this DATABASE_URL first');
  console.log(`GET /api/invoices/:id, ${CONNECTIONS} connections, ${DURATION} s per server, random ids ${ids.min}-${ids.max}`);
  const rates = new Map<Variant, number>();
  for (const variant of VARIANTS) rates.set(variant, await measure(variant, ids, token));
  // The figure to judge: the app against a framework-free server running the same statement.
  const share = (100 * rates.get('app')!) / Math.max(1e-9, rates.get('detail')!);
  console.log(`app / detail (framework-free, same statement): ${share.toFixed(0)}%   target >= 85%: ${share >= 85 ? 'met' : 'NOT met'}`);
}

runBench(main, ([variant]) => serve(variant as Variant));
