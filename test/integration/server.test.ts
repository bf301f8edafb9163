/**
 * `node dist/server.js` as an operator runs it (npm start builds first; `npm test` builds in
 * pretest): embedded PostgreSQL under DATA_DIR, a clean stop on SIGTERM, and every record found
 * again after a restart. Two instances with different DATA_DIR run side by side.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../shared/runtime/paths';

jest.setTimeout(180_000);

const entry = path.join(repoRoot(), 'dist', 'server.js');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

interface Running {
  child: ChildProcess;
  port: number;
  output: () => string;
}

/** An environment with nothing inherited that would point the server elsewhere. */
function serverEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL, TRANSPORTER, SERVICES, ...rest } = process.env;
  void DATABASE_URL, void TRANSPORTER, void SERVICES;
  return { ...rest, LOG_LEVEL: 'info', ...extra };
}

async function startServer(dataDir: string, pgPort?: number): Promise<Running> {
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, JWT_SECRET: 'server-test-secret',
    ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'first-admin-pw',
  };
  if (pgPort) env.EMBEDDED_PG_PORT = String(pgPort);
  const child = spawn(process.execPath, [entry], { env: serverEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited early (${child.exitCode}):\n${out}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.status === 200, () => false);
    if (ok) return { child, port, output: () => out };
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become healthy within 60 s:\n${out}`);
}

async function stop(server: Running): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
  server.child.kill('SIGTERM');
  return exited;
}

async function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function login(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'root', password: 'first-admin-pw' }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { token: string } }).data.token;
}

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'billing-server-'));
  fs.chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

it('is built (npm test runs the build first)', () => {
  expect(fs.existsSync(entry)).toBe(true);
});

it('runs embedded, stops cleanly on SIGTERM and finds every record after a restart', async () => {
  const dataDir = tempDir();
  const pgPort = await freePort();
  const first = await startServer(dataDir, pgPort);
  const token = await login(first.port);
  const created = await fetch(`http://127.0.0.1:${first.port}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Persisted plan', price: 15, duration_days: 30 }),
  });
  expect(created.status).toBe(201);
  expect(fs.existsSync(path.join(dataDir, 'encryption.key'))).toBe(true);
  expect(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);

  expect(await stop(first)).toBe(0);
  expect(await portOpen(pgPort)).toBe(false);

  const second = await startServer(dataDir, pgPort);
  try {
    const again = await login(second.port);
    const list = await fetch(`http://127.0.0.1:${second.port}/api/services`, { headers: { authorization: `Bearer ${again}` } });
    const body = (await list.json()) as { data: { name: string }[] };
    expect(body.data.map((p) => p.name)).toEqual(['Persisted plan']);
    // The first admin is created once, not again on restart.
    expect(second.output()).not.toMatch(/created the first admin/);
  } finally {
    expect(await stop(second)).toBe(0);
  }
});

it('runs two instances side by side with different DATA_DIR on ports chosen at start', async () => {
  const [a, b] = await Promise.all([startServer(tempDir()), startServer(tempDir())]);
  try {
    expect(a.port).not.toBe(b.port);
    expect((await fetch(`http://127.0.0.1:${a.port}/health`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${b.port}/health`)).status).toBe(200);
  } finally {
    await Promise.all([stop(a), stop(b)]);
  }
});

it('refuses to start without JWT_SECRET, with a message naming it', async () => {
  const child = spawn(process.execPath, [entry], {
    env: serverEnv({ DATA_DIR: tempDir(), JWT_SECRET: '' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).toBe(2);
  expect(err).toMatch(/JWT_SECRET is not set/);
});
