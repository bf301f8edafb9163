/**
 * The gateway's drain (services/gateway/readiness.ts) on a plain HTTP server: readiness turns 503
 * first while requests are still served, then the listener closes, and the request already running
 * finishes before `drain` resolves. The readiness grace runs on a fake clock and the running request
 * ends when the test lets it, so each step is checked while it holds, however loaded the machine.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpDrain } from '../../services/gateway/readiness';
import { settle } from '../helpers/wait';

let server: http.Server;
let base: string;
const drain = new HttpDrain();
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
let releaseSlow!: () => void;
const slowReleased = new Promise<void>((resolve) => (releaseSlow = resolve));

beforeAll(async () => {
  server = http.createServer((req, res) =>
    drain.middleware(req, res, () => {
      const answer = () => res.end(JSON.stringify({ success: true, url: req.url }));
      if (req.url === '/slow') void slowReleased.then(answer);
      else answer();
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  jest.useRealTimers();
  agent.destroy();
  server.close();
});

function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${path}`, { agent }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

function fresh(path: string): Promise<{ status: number; body: string }> {
  return fetch(`${base}${path}`).then(async (r) => ({ status: r.status, body: await r.text() }));
}

it('turns readiness to 503 first, then refuses new connections, and waits for the request in flight', async () => {
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
  const slow = get('/slow');
  await settle('the slow request at the server', () => drain.requestsInFlight === 1);

  let drained = false;
  const draining = drain.drain(server, 5_000, 200).then((left) => ((drained = true), left));
  // Step 1: readiness says no while everything else, liveness included, is still served.
  const ready = await fresh('/health');
  expect((await fresh('/health/live')).status).toBe(200);
  expect(ready.status).toBe(503);
  expect(JSON.parse(ready.body)).toEqual({ success: false, message: 'shutting down' });
  expect((await fresh('/api/anything')).status).toBe(200);

  // Step 2: after the readiness grace, no new connections; the running request holds the drain.
  await jest.advanceTimersByTimeAsync(200);
  expect(server.listening).toBe(false);
  await expect(fresh('/api/anything')).rejects.toThrow();
  expect(drained).toBe(false);

  // Step 3: the request in flight finished, then drain resolved with none left.
  releaseSlow();
  expect((await slow).status).toBe(200);
  expect(await draining).toBe(0);
  expect(server.listening).toBe(false);
});
