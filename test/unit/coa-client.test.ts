import dgram from 'node:dgram';
import { Worker } from 'node:worker_threads';
import { CoaClient } from '../../services/network-access/coa/client';
import { decodeRequest, encodeReply } from '../../services/network-access/coa/codec';
import { settle, waitFor } from '../helpers/wait';
import { NasSimulator } from '../sim/nas-simulator';

const SECRET = 'coa-secret';
const session = (userName: string) => ({ userName, acctSessionId: `sess-${userName}`, framedIp: '10.20.0.5' });

let client: CoaClient;

let sim: NasSimulator | undefined;
afterEach(async () => {
  jest.useRealTimers();
  await client?.close();
  await sim?.stop();
  sim = undefined;
});

/** A NAS simulator (also left in `sim` for afterEach) and a client; returns the simulator and its target. */
async function setup(
  simOptions: Partial<ConstructorParameters<typeof NasSimulator>[0]> = {},
  clientOptions: ConstructorParameters<typeof CoaClient>[0] = {},
) {
  const nas = await new NasSimulator({ secret: SECRET, ...simOptions }).start();
  sim = nas;
  client = new CoaClient({ rto: { initialMs: 200, minMs: 20, maxMs: 2000 }, ...clientOptions });
  return { nas, target: { host: '127.0.0.1', port: nas.port, secret: SECRET } };
}

it('a Disconnect-Request carries User-Name, Acct-Session-Id and Framed-IP-Address; an ACK verifies', async () => {
  const { nas, target } = await setup();
  const reply = await client.disconnect(target, session('ali@north'));
  expect(reply).toMatchObject({ kind: 'ack', attempts: 1 });
  expect(nas.requests).toEqual([
    {
      code: 'Disconnect-Request',
      userName: 'ali@north',
      acctSessionId: 'sess-ali@north',
      framedIp: '10.20.0.5',
      rateLimit: undefined,
      attributes: [
        ['User-Name', 'ali@north'],
        ['Acct-Session-Id', 'sess-ali@north'],
        ['Framed-IP-Address', '10.20.0.5'],
      ],
      packet: expect.any(Buffer),
      seen: 1,
    },
  ]);
  expect(client.stats.dropped).toBe(0);
});

it('a NAK carries its Error-Cause', async () => {
  const { target } = await setup({ answer: () => ({ nak: 503 }) });
  expect(await client.disconnect(target, session('gone'))).toMatchObject({ kind: 'nak', errorCause: 503, attempts: 1 });
});

it('a CoA-Request carries Mikrotik-Rate-Limit (vendor 14988, attribute 8) and is answered with CoA-ACK', async () => {
  const { nas, target } = await setup();
  expect(await client.change(target, { userName: 'u1', acctSessionId: 's1', rateLimit: '2M/2M' })).toMatchObject({
    kind: 'ack',
  });
  expect(nas.requests[0]).toMatchObject({ code: 'CoA-Request', userName: 'u1', rateLimit: '2M/2M' });
});

it('an unanswered request is retransmitted (same identifier and authenticator) and then reported as a timeout', async () => {
  const { nas, target } = await setup({ answer: () => 'silent' }, { retransmits: 2 });
  const reply = await client.disconnect(target, session('quiet'));
  expect(reply).toEqual({ kind: 'timeout', attempts: 3 });
  expect(nas.stats).toMatchObject({ received: 1, duplicates: 2, silent: 1 });
});

it('a NAS with another secret drops the request (its authenticator does not verify): a timeout here', async () => {
  const { nas, target } = await setup(
    { secret: 'other-secret' },
    { retransmits: 0, rto: { initialMs: 100, minMs: 20, maxMs: 200 } },
  );
  expect(await client.disconnect(target, session('x'))).toEqual({ kind: 'timeout', attempts: 1 });
  expect(nas.stats).toMatchObject({ invalid: 1, received: 0 });
});

it('a reply whose Response Authenticator does not verify is dropped, and the real one is taken', async () => {
  // A responder that first answers with a forged ACK (wrong secret), then with the right one.
  const rogue = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => rogue.bind(0, '127.0.0.1', () => resolve()));
  rogue.on('message', (msg, from) => {
    const req = decodeRequest(msg, SECRET);
    // The real answer leaves once the forged one has been sent, so the client sees the forgery first.
    rogue.send(encodeReply(req, 'Disconnect-ACK', 'forged'), from.port, from.address, () =>
      rogue.send(encodeReply(req, 'Disconnect-NAK', SECRET, 504), from.port, from.address),
    );
  });
  client = new CoaClient({ rto: { initialMs: 500, minMs: 20, maxMs: 1000 } });
  const reply = await client.disconnect(
    { host: '127.0.0.1', port: rogue.address().port, secret: SECRET },
    session('y'),
  );
  expect(reply).toMatchObject({ kind: 'nak', errorCause: 504 });
  expect(client.stats.dropped).toBe(1);
  rogue.close();
});

it('a NAK with Error-Cause 506 (resources unavailable) backs off and asks again', async () => {
  const { nas, target } = await setup({ answer: (req) => (req.seen < 3 ? { nak: 506 } : 'ack'), latencyMs: 5 });
  const reply = await client.disconnect(target, session('busy'));
  expect(reply).toMatchObject({ kind: 'ack', attempts: 3 });
  expect(nas.stats.received).toBe(3);
  expect(client.stats.busyRetries).toBe(2);
});

it('506 retries are bounded: the last NAK is the answer', async () => {
  const { target } = await setup({ answer: () => ({ nak: 506 }) }, { busyRetries: 1 });
  expect(await client.disconnect(target, session('busy'))).toMatchObject({ kind: 'nak', errorCause: 506, attempts: 2 });
});

it('never more than maxInFlightPerNas requests outstanding towards one NAS', async () => {
  const { nas, target } = await setup({ latencyMs: 5 }, { maxInFlightPerNas: 8 });
  const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => client.disconnect(target, session(`u${i}`))));
  expect(replies.every((r) => r.kind === 'ack')).toBe(true);
  expect(nas.stats.peakInFlight).toBeLessThanOrEqual(8);
  expect(client.inFlightPeaks()[`127.0.0.1:${nas.port}`]).toBe(8);
});

it('requests queued behind the gate leave in the order they were made, thousands of them', async () => {
  const { nas, target } = await setup({ latencyMs: 0 }, { maxInFlightPerNas: 16 });
  const names = Array.from({ length: 3000 }, (_, i) => `q${i}`);
  const replies = await Promise.all(names.map((n) => client.disconnect(target, session(n))));
  expect(replies.every((r) => r.kind === 'ack')).toBe(true);
  expect(nas.requests.map((r) => r.userName)).toEqual(names);
  expect(nas.stats.peakInFlight).toBeLessThanOrEqual(16);
});

it('more than 256 requests in flight use more than one socket, each identifier matched to its own reply', async () => {
  // Three NASes, 200 in flight towards each: 600 outstanding on the client's sockets at once.
  const sims = await Promise.all([0, 1, 2].map(() => new NasSimulator({ secret: SECRET, latencyMs: 400 }).start()));
  client = new CoaClient({ maxInFlightPerNas: 200, rto: { initialMs: 2000, minMs: 20, maxMs: 4000 } });
  try {
    const replies = await Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        client.disconnect({ host: '127.0.0.1', port: sims[i % 3].port, secret: SECRET }, session(`user-${i}`)),
      ),
    );
    expect(replies.filter((r) => r.kind === 'ack')).toHaveLength(600);
    for (const s of sims) expect(s.stats.received).toBe(200);
    expect(sims.reduce((n, s) => n + s.stats.peakInFlight, 0)).toBeGreaterThan(256);
    expect(client.socketCount).toBeGreaterThanOrEqual(3);
    expect(new Set(sims.flatMap((s) => s.requests.map((r) => r.userName))).size).toBe(600);
    expect(client.stats).toMatchObject({ sent: 600, dropped: 0 });
  } finally {
    await Promise.all(sims.map((s) => s.stop()));
  }
});

/**
 * A fake clock over real sockets: the client's and the simulator's timers (and performance.now)
 * move only when the test moves them, while the UDP traffic and setImmediate run for real. Round
 * trips are then exactly the simulator's latency, however loaded the machine.
 */
function fakeClock(): void {
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
}

const turn = () => new Promise<void>((r) => setImmediate(r));

/** Moves the clock a millisecond at a time (I/O and the client's setImmediate in between) until `probe` holds. */
async function advanceUntil(what: string, probe: () => boolean, maxMs: number): Promise<void> {
  for (let ms = 0; ms < maxMs && !probe(); ms++) {
    await jest.advanceTimersByTimeAsync(1);
    for (let i = 0; i < 5; i++) await turn();
  }
  if (!probe()) throw new Error(`${what} did not happen within ${maxMs} ms of the fake clock`);
}

/** A request whose reply the test can look at before awaiting it. */
function tracked<T>(p: Promise<T>): { done: () => boolean; result: Promise<T> } {
  let settled = false;
  const result = p.finally(() => {
    settled = true;
  });
  return { done: () => settled, result };
}

it('the retransmission timeout follows the measured round trip', async () => {
  const { nas, target } = await setup({ latencyMs: 30 });
  fakeClock();
  expect(client.rtoMs(target)).toBe(200);
  for (let i = 0; i < 10; i++) {
    const reply = tracked(client.disconnect(target, session(`r${i}`)));
    await settle('the request at the NAS', () => nas.stats.received === i + 1);
    await jest.advanceTimersByTimeAsync(30);
    await settle('the reply at the client', reply.done);
    expect(await reply.result).toMatchObject({ kind: 'ack', attempts: 1, rttMs: 30 });
  }
  // Ten round trips of 30 ms: srtt 30, the variance decayed to 1.1, so the 1.5 x srtt floor: 45.
  expect(client.rtoMs(target)).toBe(45);
});

it('a request waiting on the initial timeout is re-armed once the first round trip is measured', async () => {
  // One user is silent; the others answer in 20 ms. Without re-arming, the silent one would wait the
  // initial 5 s twice; with it, it gives up after a few round trips.
  const { nas, target } = await setup(
    { latencyMs: 20, answer: (r) => (r.userName === 'silent' ? 'silent' : 'ack') },
    { rto: { initialMs: 5000, minMs: 20, maxMs: 10000 } },
  );
  fakeClock();
  const started = performance.now();
  const silent = tracked(client.disconnect(target, session('silent')));
  const other = tracked(client.disconnect(target, session('a')));
  await settle('both requests at the NAS', () => nas.stats.received === 2);
  await jest.advanceTimersByTimeAsync(20);
  await settle('the answer to the other request', other.done);
  expect(await other.result).toMatchObject({ kind: 'ack', rttMs: 20 });
  await advanceUntil('the silent request given up', silent.done, 5000);
  expect(await silent.result).toEqual({ kind: 'timeout', attempts: 2 });
  // Measured on the fake clock: the initial 5 s never ran out.
  expect(performance.now() - started).toBeLessThan(5000);
});

/**
 * A NAS in another thread, so that it answers while the test's event loop is blocked: Disconnect-ACK
 * to every request, counting the replies sent in `workerData.sent` (a shared Int32Array).
 */
const THREAD_NAS = `
const { parentPort, workerData } = require('node:worker_threads');
const dgram = require('node:dgram');
const crypto = require('node:crypto');
const socket = dgram.createSocket('udp4');
socket.on('message', (msg, from) => {
  const reply = Buffer.alloc(20);
  reply[0] = 41;
  reply[1] = msg[1];
  reply.writeUInt16BE(20, 2);
  msg.copy(reply, 4, 4, 20);
  crypto.createHash('md5').update(reply).update(workerData.secret).digest().copy(reply, 4);
  socket.send(reply, from.port, from.address, () => Atomics.add(workerData.sent, 0, 1));
});
socket.bind(0, '127.0.0.1', () => parentPort.postMessage(socket.address().port));
`;

it('after a stall past the timeout, replies already in the socket buffer end their requests without a retransmission, beyond the 32 one turn of the loop reads', async () => {
  const sent = new Int32Array(new SharedArrayBuffer(4));
  const nasThread = new Worker(THREAD_NAS, { eval: true, workerData: { secret: SECRET, sent } });
  try {
    const port = await new Promise<number>((resolve) => nasThread.once('message', resolve));
    client = new CoaClient({ rto: { initialMs: 100, minMs: 20, maxMs: 1000 } });
    await client.open();
    const target = { host: '127.0.0.1', port, secret: SECRET };
    const started = performance.now();
    const replies = Array.from({ length: 64 }, (_, i) => client.disconnect(target, session(`b${i}`)));
    // Block this thread until the NAS has answered all 64 and every timeout is due: the replies
    // wait in the socket buffer, and libuv reads 32 datagrams from a socket per turn. Bounded, so a
    // NAS that never answers fails the assertions below instead of hanging the run.
    while ((Atomics.load(sent, 0) < 64 && performance.now() - started < 5000) || performance.now() - started < 200)
      Atomics.wait(sent, 0, Atomics.load(sent, 0), 10);
    const results = await Promise.all(replies);
    expect(results.map((r) => `${r.kind}/${r.attempts}`)).toEqual(Array(64).fill('ack/1'));
    expect(client.stats).toMatchObject({ sent: 64, retransmitted: 0, dropped: 0 });
  } finally {
    await nasThread.terminate();
  }
});

it('close() ends outstanding and queued requests with an error', async () => {
  const { nas, target } = await setup(
    { answer: () => 'silent' },
    { maxInFlightPerNas: 1, rto: { initialMs: 10000, minMs: 20, maxMs: 10000 } },
  );
  const first = client.disconnect(target, session('a'));
  const queued = client.disconnect(target, session('b'));
  // The first is outstanding at the NAS, the second queued behind it.
  await waitFor('the first request at the NAS', () => nas.stats.received === 1, 10_000);
  await client.close();
  expect(await first).toMatchObject({ kind: 'error', message: 'CoA client closed' });
  expect(await queued).toMatchObject({ kind: 'error' });
});

it('queued and queuedMs: the requests waiting behind the limit of a NAS that answers, and how long they take to leave; none before its first reply', async () => {
  const { nas, target } = await setup({ latencyMs: 20 }, { maxInFlightPerNas: 4 });
  fakeClock();
  const replies = Array.from({ length: 12 }, (_, i) => tracked(client.disconnect(target, session(`w${i}`))));
  await settle('the first four at the NAS', () => nas.stats.received === 4);
  // Eight wait behind the four in flight, but nothing says yet that this NAS drains its queue.
  expect(client.queued).toBe(0);
  expect(client.queuedMs).toBe(0);
  await jest.advanceTimersByTimeAsync(20);
  await settle('the next four at the NAS', () => nas.stats.received === 8);
  expect(client.queued).toBe(4);
  // In time: four waiting, four places freed per 20 ms round trip.
  expect(client.queuedMs).toBeCloseTo(20, 0);
  await advanceUntil('every reply', () => replies.every((r) => r.done()), 200);
  expect(client.queued).toBe(0);
  expect(client.queuedMs).toBe(0);
});

it('queued leaves out a NAS that has not answered for four retransmission timeouts and a second', async () => {
  const { nas, target } = await setup(
    { latencyMs: 20, answer: (r) => (Number(r.userName.slice(1)) < 4 ? 'ack' : 'silent') },
    { maxInFlightPerNas: 4, retransmits: 3, rto: { initialMs: 200, minMs: 100, maxMs: 2000 } },
  );
  fakeClock();
  Array.from({ length: 12 }, (_, i) => void client.disconnect(target, session(`s${i}`)));
  await settle('the first four at the NAS', () => nas.stats.received === 4);
  await jest.advanceTimersByTimeAsync(20);
  await settle('four silent ones at the NAS', () => nas.stats.received === 8);
  expect(client.queued).toBe(4);
  // No reply since: once four RTOs (100 ms each after 20 ms round trips) and a second have passed,
  // the four still waiting no longer count.
  await jest.advanceTimersByTimeAsync(999);
  expect(client.queued).toBe(4);
  await jest.advanceTimersByTimeAsync(2);
  expect(client.queued).toBe(0);
});
