/**
 * `node dist/server.js` as an operator runs it (npm start builds first; `npm test` builds in
 * pretest): embedded PostgreSQL under DATA_DIR, a clean stop on SIGTERM, and every record found
 * again after a restart. Two instances with different DATA_DIR run side by side.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  freePort,
  login,
  portOpen,
  serverEntry,
  serverEnv,
  startServer,
  stopServer,
  tempDirs,
} from '../helpers/server-process';

jest.setTimeout(180_000);

const temp = tempDirs();
afterAll(() => temp.cleanup());

it('is built (npm test runs the build first)', () => {
  expect(fs.existsSync(serverEntry)).toBe(true);
});

it('runs embedded, stops cleanly on SIGTERM and finds every record after a restart', async () => {
  const dataDir = temp.make();
  const pgPort = await freePort();
  const first = await startServer({ dataDir, pgPort });
  const token = await login(first.base);
  const created = await fetch(`${first.base}/api/services`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Persisted plan', price: 15, duration_days: 30 }),
  });
  expect(created.status).toBe(201);
  expect(fs.existsSync(path.join(dataDir, 'encryption.key'))).toBe(true);
  expect(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);

  expect(await stopServer(first)).toBe(0);
  expect(await portOpen(pgPort)).toBe(false);

  const second = await startServer({ dataDir, pgPort });
  try {
    const again = await login(second.base);
    const list = await fetch(`${second.base}/api/services`, { headers: { authorization: `Bearer ${again}` } });
    const body = (await list.json()) as { data: { name: string }[] };
    expect(body.data.map((p) => p.name)).toEqual(['Persisted plan']);
    // The first admin is created once, not again on restart.
    expect(second.output()).not.toMatch(/created the first admin/);
  } finally {
    expect(await stopServer(second)).toBe(0);
  }
});

it('runs two instances side by side with different DATA_DIR on ports chosen at start', async () => {
  const [a, b] = await Promise.all([startServer({ dataDir: temp.make() }), startServer({ dataDir: temp.make() })]);
  try {
    expect(a.port).not.toBe(b.port);
    expect((await fetch(`${a.base}/health`)).status).toBe(200);
    expect((await fetch(`${b.base}/health`)).status).toBe(200);
  } finally {
    await Promise.all([stopServer(a), stopServer(b)]);
  }
});

it('refuses to start without JWT_SECRET, with a message naming it', async () => {
  const child = spawn(process.execPath, [serverEntry], {
    env: serverEnv({ DATA_DIR: temp.make(), JWT_SECRET: '' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).toBe(2);
  expect(err).toMatch(/JWT_SECRET is not set/);
});
