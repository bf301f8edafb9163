/**
 * deploy/nginx/nginx.conf run by a real nginx (Debian's nginx-light, installed by .ci/run) in
 * front of a stand-in gateway: the file passes `nginx -t`, public invoice routes stop at 30
 * requests per minute per address with 429, other routes are not limited, and the gateway sees
 * the client's address, not one the client claims in X-Forwarded-For.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../runtime/cluster';
import { waitFor } from '../helpers/wait';

const NGINX = '/usr/sbin/nginx';
let dir: string;
let upstream: http.Server;
let nginx: ChildProcess;
let base: string;
const seen: { url: string; forwardedFor: string | undefined }[] = [];

beforeAll(async () => {
  if (!fs.existsSync(NGINX)) throw new Error(`${NGINX} is missing: apt-get install nginx-light (.ci/run does)`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nginx-test-'));
  fs.mkdirSync(path.join(dir, 'logs'));
  upstream = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', forwardedFor: req.headers['x-forwarded-for'] as string | undefined });
    res.setHeader('content-type', 'application/json');
    res.end('{"success":true}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamPort = (upstream.address() as import('node:net').AddressInfo).port;
  const port = await freePort();
  const conf = fs
    .readFileSync(path.resolve(__dirname, '../../deploy/nginx/nginx.conf'), 'utf8')
    .replace('server gateway:3000;', `server 127.0.0.1:${upstreamPort};`)
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace('access_log /dev/stdout;', `access_log ${dir}/logs/access.log;`);
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const args = [
    '-p',
    dir,
    '-c',
    path.join(dir, 'nginx.conf'),
    '-g',
    `daemon off; pid ${dir}/nginx.pid; error_log ${dir}/logs/error.log;`,
  ];
  const check = spawnSync(NGINX, ['-t', ...args], { encoding: 'utf8' });
  expect(check.stderr).toMatch(/syntax is ok/);
  expect(check.status).toBe(0);
  nginx = spawn(NGINX, args, { stdio: 'ignore' });
  base = `http://127.0.0.1:${port}`;
  await waitFor('nginx accepting connections', () => fetch(`${base}/health`).then(() => true), 10_000, 100);
  seen.length = 0;
});

afterAll(async () => {
  nginx?.kill('SIGQUIT');
  await new Promise((r) => upstream?.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

it('lets 30 public invoice requests per minute through, then answers 429', async () => {
  // All at once: one slot comes back every 2 s, which 35 requests one after another can take on a loaded machine.
  const statuses = await Promise.all(
    Array.from({ length: 35 }, (_, i) => fetch(`${base}/api/invoices/public/7?token=t${i}`).then((r) => r.status)),
  );
  expect(statuses.filter((s) => s === 200)).toHaveLength(30);
  expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  expect(seen.filter((s) => s.url.startsWith('/api/invoices/public/'))).toHaveLength(30);
});

it('does not limit the other routes', async () => {
  const statuses = await Promise.all(
    Array.from({ length: 40 }, () => fetch(`${base}/api/invoices/3`).then((r) => r.status)),
  );
  expect(statuses).toEqual(Array(40).fill(200));
});

it('tells the gateway the real client address, not the one the client claims', async () => {
  seen.length = 0;
  await fetch(`${base}/api/invoices`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
  expect(seen[0].forwardedFor).toBe('127.0.0.1');
});
