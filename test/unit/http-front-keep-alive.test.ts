/**
 * The gateway keeps an idle keep-alive connection open longer than its clients do
 * (services/gateway/http-front.ts, KEEP_ALIVE_TIMEOUT_MS): a client reusing a connection after
 * Node's default 5 s finds it open, instead of one the gateway closed as the request went out.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpFront, KEEP_ALIVE_TIMEOUT_MS } from '../../services/gateway/http-front';

const front = new HttpFront(
  [],
  (_route, _req, res) => res.end('{}'),
  (_req, res) => {
    res.statusCode = 404;
    res.end('{}');
  },
);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let port: number;

beforeAll(async () => {
  await front.listen(0, '127.0.0.1');
  port = (front.server.address() as AddressInfo).port;
});

afterAll(async () => {
  agent.destroy();
  await front.close();
});

function get(): Promise<{ keepAlive: string | undefined; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/nowhere', agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ keepAlive: res.headers['keep-alive'] as string | undefined, reused: req.reusedSocket }),
      );
    });
    req.on('error', reject);
  });
}

it('tells clients and keeps idle connections open longer than Node’s 5 s default', async () => {
  expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
  const first = await get();
  expect(first).toEqual({ keepAlive: `timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`, reused: false });
  // Idle past Node's default: the same connection still serves the next request.
  await new Promise((r) => setTimeout(r, 5_500));
  expect(await get()).toEqual({ keepAlive: `timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`, reused: true });
});
