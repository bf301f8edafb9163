/** `node dist/server.js` run as an operator runs it, for the tests of the whole process. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../shared/paths';
import { freePort } from '../../runtime/cluster';

export { freePort };

export const serverEntry = path.join(repoRoot(), 'dist', 'server.js');

export async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** An environment with nothing inherited that would point the server elsewhere. */
export function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL, TRANSPORTER, SERVICES, DATA_DIR, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: 'info', ...extra };
}

export interface Running {
  child: ChildProcess;
  port: number;
  base: string;
  output: () => string;
}

export interface StartOptions {
  /** Omitted: the server's default (./data under cwd). */
  dataDir?: string;
  pgPort?: number;
  cwd?: string;
  entry?: string;
  env?: Record<string, string>;
}

export const ADMIN = { username: 'root', password: 'first-admin-pw' };

/** Starts the server and waits for GET /health to answer 200 (60 s at most). */
export async function startServer(opts: StartOptions = {}): Promise<Running> {
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    JWT_SECRET: 'server-test-secret',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
    ...opts.env,
  };
  if (opts.dataDir) env.DATA_DIR = opts.dataDir;
  if (opts.pgPort) env.EMBEDDED_PG_PORT = String(opts.pgPort);
  const child = spawn(process.execPath, [opts.entry ?? serverEntry], {
    cwd: opts.cwd,
    env: serverEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${out}`);
    const ok = await fetch(`${base}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, port, base, output: () => out };
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become healthy within 60 s:\n${out}`);
}

/** SIGTERM (or another signal) and the exit code. */
export async function stopServer(server: Running, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return server.child.exitCode;
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  server.child.kill(signal);
  return exited;
}

/** Runs the server expecting it to fail at start: its exit code, stdout and stderr. */
export async function failedStart(
  opts: StartOptions,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: Record<string, string> = {
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    JWT_SECRET: 'server-test-secret',
    ...opts.env,
  };
  if (opts.dataDir) env.DATA_DIR = opts.dataDir;
  if (opts.pgPort) env.EMBEDDED_PG_PORT = String(opts.pgPort);
  const child = spawn(process.execPath, [opts.entry ?? serverEntry], {
    cwd: opts.cwd,
    env: serverEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export async function login(base: string): Promise<string> {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  if (res.status !== 200) throw new Error(`login answered ${res.status}`);
  return ((await res.json()) as { data: { token: string } }).data.token;
}

/** `count` invoices of one 500 line for `subscriberId`, through the API of the server at `base`; their ids. */
export async function openInvoices(
  base: string,
  token: string,
  subscriberId: number,
  count: number,
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${base}/api/invoices`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        subscriber_id: subscriberId,
        items: [{ description: 'monthly', qty: 1, unit_price: 500 }],
      }),
    });
    if (res.status !== 201) throw new Error(`invoice creation answered ${res.status}`);
    ids.push(((await res.json()) as { data: { id: number } }).data.id);
  }
  return ids;
}

/** A cash payment through the API; the payment's id (anything but 200 throws). */
export async function payInvoice(base: string, token: string, invoiceId: number, amount: number): Promise<number> {
  const res = await fetch(`${base}/api/invoices/${invoiceId}/payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ amount, method: 'cash' }),
  });
  if (res.status !== 200) throw new Error(`payment answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: { payment: { id: number } } }).data.payment.id;
}

/** Temporary directories (mode 0755, so a root run's postgres user can enter them), removed by cleanup(). */
export function tempDirs() {
  const dirs: string[] = [];
  return {
    make(prefix = 'billing-server-'): string {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
      fs.chmodSync(dir, 0o755);
      dirs.push(dir);
      return dir;
    },
    cleanup(): void {
      for (const d of dirs.splice(0)) {
        fs.chmodSync(d, 0o755);
        fs.rmSync(d, { recursive: true, force: true });
      }
    },
  };
}
