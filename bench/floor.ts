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
 * Environment: DATABASE_URL (required), BENCH_CONNECTIONS 50, BENCH_DURATION 10 (seconds per window),
 * BENCH_ROUNDS 3 (every server is measured once per round, rounds in alternating order).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { intVar, loadConfig, setConfig } from '../shared/config';
import { initDatabase, pgPool } from '../shared/db/client';
import { startApp } from '../runtime/app';
import { invoiceJson } from '../services/billing/queries';
import { autocannon, benchAdminToken, benchEnv, median, runBench, type AutocannonRequest } from './load';
import { cpuDelta, procCpu } from './pg-cpu';

const CONNECTIONS = intVar(process.env, 'BENCH_CONNECTIONS', 50, 1);
const DURATION = intVar(process.env, 'BENCH_DURATION', 10, 1);
const ROUNDS = intVar(process.env, 'BENCH_ROUNDS', 3, 1);
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
      row: async (id) =>
        JSON.stringify(
          (await pool.query({ name: 'floor_row', text: 'select * from invoices where id = $1', values: [id] })).rows,
        ),
      detail: async (id) => `{"success":true,"data":${(await invoiceJson(id))!.json}}`,
    };
    const handle = handlers[variant];
    const server = http.createServer((req, res) => {
      handle(Number(req.url!.split('/').pop())).then(
        (text) => {
          res.writeHead(200, {
            'content-type': 'application/json; charset=utf-8',
            'content-length': Buffer.byteLength(text),
          });
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

/** CPU µs used so far by each process named postgres on this machine, or undefined without /proc. */
function postgresCpu(): Map<number, number> | undefined {
  if (!fs.existsSync('/proc/self/stat')) return undefined;
  const cpu = new Map<number, number>();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const { name, seconds } = procCpu(pid);
      if (name.startsWith('postgres')) cpu.set(Number(pid), seconds * 1e6);
    } catch {
      // the process ended while we looked
    }
  }
  return cpu;
}

/**
 * PostgreSQL CPU between two readings. Per process: an idle server's pool closes its backends
 * while another server is measured, and a sum over all processes would lose their past CPU.
 */
function postgresCpuBetween(
  before: Map<number, number> | undefined,
  after: Map<number, number> | undefined,
): number | undefined {
  return before && after ? cpuDelta(before, after) : undefined;
}

interface Served {
  variant: Variant;
  child: ChildProcess;
  baseUrl: string;
}

async function startServer(variant: Variant): Promise<Served> {
  const child = fork(__filename, ['serve', variant], { env: benchEnv(), stdio: 'inherit' });
  const { baseUrl } = await new Promise<{ baseUrl: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { baseUrl: string }));
    child.once('exit', (code) => reject(new Error(`${variant} server exited with code ${code}`)));
  });
  return { variant, child, baseUrl };
}

interface Window {
  rate: number;
  line: string;
}

/** One measured window of load on one server: its rate and a line of CPU per request. */
async function measure(
  served: Served,
  ids: { min: number; max: number },
  token: string,
  duration: number,
): Promise<Window> {
  const run = (seconds: number) =>
    autocannon({
      url: served.baseUrl,
      connections: CONNECTIONS,
      duration: seconds,
      headers: { authorization: `Bearer ${token}` },
      requests: [
        {
          setupRequest: (req: AutocannonRequest) => ({
            ...req,
            method: 'GET',
            path: `/api/invoices/${ids.min + Math.floor(Math.random() * (ids.max - ids.min + 1))}`,
          }),
        },
      ],
    });
  const server0 = (await ask<{ cpu: number }>(served.child, 'cpu')).cpu;
  const pg0 = postgresCpu();
  const self0 = process.cpuUsage();
  const result = await run(duration);
  const self = process.cpuUsage(self0);
  const server = (await ask<{ cpu: number }>(served.child, 'cpu')).cpu - server0;
  const pg1 = postgresCpu();
  const n = Math.max(1, result.requests.total);
  const per = (us: number | undefined) => (us === undefined ? 'n/a' : `${(us / n).toFixed(0)} µs`);
  const rate = result.requests.total / duration;
  return {
    rate,
    line:
      `${served.variant.padEnd(8)} ${rate.toFixed(0).padStart(6)} req/s   CPU per request: server ${per(server)}, ` +
      `PostgreSQL ${per(postgresCpuBetween(pg0, pg1))}, load generator ${per(self.user + self.system)}   non-2xx ${result.non2xx}`,
  };
}

async function main(): Promise<void> {
  if (!process.env.DATABASE_URL) throw new Error('set DATABASE_URL to the database bench:billing seeded');
  const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 1 });
  const {
    rows: [ids],
  } = await pool.query<{ min: number; max: number }>('select min(id)::int as min, max(id)::int as max from invoices');
  const token = await benchAdminToken(pool, loadConfig(benchEnv()).jwtSecret);
  await pool.end();
  if (ids.min === null) throw new Error('no invoices: run npm run bench:billing against this DATABASE_URL first');
  console.log(
    `GET /api/invoices/:id, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per server, random ids ${ids.min}-${ids.max}`,
  );
  const servers = await Promise.all(VARIANTS.map(startServer));
  try {
    for (const served of servers) await measure(served, ids, token, 3); // warm-up: JIT and prepared statements
    // Rounds alternate their order, so a busier minute on this shared machine falls on every
    // server alike; the share to judge is the median of the rounds' own app/detail ratios.
    const windows = new Map<Variant, Window[]>(VARIANTS.map((v) => [v, []]));
    const shares: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      const rates = new Map<Variant, number>();
      for (const served of order) {
        const w = await measure(served, ids, token, DURATION);
        windows.get(served.variant)!.push(w);
        rates.set(served.variant, w.rate);
      }
      shares.push((100 * rates.get('app')!) / Math.max(1e-9, rates.get('detail')!));
    }
    for (const variant of VARIANTS) {
      // The window with the median rate stands for its server.
      const ws = windows.get(variant)!;
      const mid = median(ws.map((w) => w.rate));
      console.log(ws.find((w) => w.rate === mid)!.line);
    }
    const share = median(shares);
    console.log(`app / detail per round: ${shares.map((x) => `${x.toFixed(0)}%`).join(', ')}`);
    console.log(
      `app / detail (framework-free, same statement), median of rounds: ${share.toFixed(0)}%   target >= 85%: ${share >= 85 ? 'met' : 'NOT met'}`,
    );
  } finally {
    for (const served of servers) served.child.kill('SIGKILL');
  }
}

runBench(main, ([variant]) => serve(variant as Variant));
