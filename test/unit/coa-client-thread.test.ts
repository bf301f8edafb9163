import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { CoaClient } from '../../services/network-access/coa/client';
import { CoaClientThread } from '../../services/network-access/coa/client-thread';
import type { CoaReply } from '../../services/network-access/coa/outcome';
import { repoRoot } from '../../shared/paths';
import { waitFor } from '../helpers/wait';
import { NasSimulator } from '../sim/nas-simulator';

const SECRET = 'coa-secret';
const RTO = { initialMs: 200, minMs: 20, maxMs: 2000 };
const session = (userName: string) => ({ userName, acctSessionId: `sess-${userName}`, framedIp: '10.20.0.5' });
/** Replies without their round trip, which differs run to run. */
const shape = (r: CoaReply) => ('rttMs' in r ? { ...r, rttMs: 0 } : r);

let thread: CoaClientThread | undefined;
let sim: NasSimulator | undefined;
afterEach(async () => {
  await thread?.close();
  await sim?.stop();
  thread = sim = undefined;
});

async function simulator(options: Partial<ConstructorParameters<typeof NasSimulator>[0]> = {}) {
  sim = await new NasSimulator({ secret: SECRET, ...options }).start();
  return { host: '127.0.0.1', port: sim.port, secret: SECRET };
}

const workerOf = (client: CoaClientThread) => (client as unknown as { worker: Worker }).worker;

it('answers as the in-thread client does: ACK, NAK with its cause, 506 retried, timeout after retransmitting', async () => {
  const nas = () =>
    simulator({
      latencyMs: 5,
      answer: (r) =>
        r.userName === 'gone'
          ? { nak: 503 }
          : r.userName === 'busy' && r.seen < 2
            ? { nak: 506 }
            : r.userName === 'quiet'
              ? 'silent'
              : 'ack',
    });
  const names = ['a', 'gone', 'busy', 'quiet'];
  const inThread = new CoaClient({ retransmits: 1, rto: RTO });
  let target = await nas();
  const direct = await Promise.all(names.map((n) => inThread.disconnect(target, session(n))));
  await inThread.close();
  // A fresh NAS: the simulator counts a user's requests (`seen`) for its whole life.
  await sim!.stop();
  target = await nas();
  thread = new CoaClientThread({ retransmits: 1, rto: RTO });
  const viaWorker = await Promise.all(names.map((n) => thread!.disconnect(target, session(n))));
  expect(viaWorker.map(shape)).toEqual(direct.map(shape));
  expect(viaWorker.map((r) => r.kind)).toEqual(['ack', 'nak', 'ack', 'timeout']);
  expect(thread.stats).toEqual(inThread.stats);
  expect(thread.stats).toMatchObject({ retransmitted: 1, busyRetries: 1 });
  expect(thread.rtoMs(target)).toBeLessThan(RTO.initialMs);
});

it('settings changed on the main thread apply to the next requests in the worker', async () => {
  const target = await simulator({ latencyMs: 10 });
  thread = new CoaClientThread({ maxInFlightPerNas: 64, rto: RTO });
  thread.options.maxInFlightPerNas = 3;
  const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => thread!.disconnect(target, session(`s${i}`))));
  expect(replies.every((r) => r.kind === 'ack')).toBe(true);
  expect(sim!.stats.peakInFlight).toBe(3);
  expect(thread.inFlightPeaks()[`127.0.0.1:${target.port}`]).toBe(3);
});

it('queued and queuedMs count the requests beyond the window of a NAS that answers, from the main thread', async () => {
  const target = await simulator({ latencyMs: 200 });
  // An initial timeout well above the round trip: a retransmitted first request gives no sample (Karn).
  thread = new CoaClientThread({ maxInFlightPerNas: 4, rto: { initialMs: 1000, minMs: 20, maxMs: 2000 } });
  expect(await thread.disconnect(target, session('first'))).toMatchObject({ kind: 'ack' });
  const replies = Array.from({ length: 12 }, (_, i) => thread!.disconnect(target, session(`w${i}`)));
  expect(thread.queued).toBe(8);
  // Eight waiting, four places freed per round trip of about 200 ms.
  expect(thread.queuedMs).toBeGreaterThan(300);
  expect(thread.queuedMs).toBeLessThan(800);
  await Promise.all(replies);
  expect(thread.queued).toBe(0);
  expect(thread.queuedMs).toBe(0);
});

it('a worker that dies ends its requests with an error and is replaced; close() ends the worker', async () => {
  const target = await simulator({ latencyMs: 5, answer: (r) => (r.userName === 'held' ? 'silent' : 'ack') });
  thread = new CoaClientThread({ rto: { initialMs: 10_000, minMs: 20, maxMs: 10_000 } });
  const first = workerOf(thread);
  const held = thread.disconnect(target, session('held'));
  await waitFor('the request at the NAS', () => sim!.stats.received === 1, 10_000);
  await first.terminate();
  expect(await held).toEqual({ kind: 'error', attempts: 0, message: 'CoA worker exited' });
  expect(workerOf(thread)).not.toBe(first);
  expect(await thread.disconnect(target, session('after'))).toMatchObject({ kind: 'ack', attempts: 1 });
  const second = workerOf(thread);
  const exited = new Promise((resolve) => second.once('exit', resolve));
  await thread.close();
  await exited;
  expect(workerOf(thread)).toBe(second);
  expect(await thread.disconnect(target, session('closed'))).toMatchObject({
    kind: 'error',
    message: 'CoA client closed',
  });
});

/** A script run in its own process: what keeps that process alive is the point. */
function runScript(script: string): Promise<{ stdout: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { cwd: repoRoot(), timeout: 20_000 }, (err, stdout) =>
      err ? reject(err) : resolve({ stdout, ms: performance.now() - started }),
    ),
  );
}

it('an idle worker keeps no process alive; an outstanding request does, until it is answered', async () => {
  const entry = JSON.stringify(path.join(repoRoot(), 'dist', 'services', 'network-access', 'coa', 'client-thread.js'));
  const idle = await runScript(`
    const { CoaClientThread } = require(${entry});
    new CoaClientThread().open().then(() => console.log('opened'));
  `);
  expect(idle.stdout.trim()).toBe('opened');
  // Nobody listens on the discard port: the request times out after one retransmission, and only then may the process end.
  const outstanding = await runScript(`
    const { CoaClientThread } = require(${entry});
    new CoaClientThread({ retransmits: 1, rto: { initialMs: 300, minMs: 20, maxMs: 300 } })
      .disconnect({ host: '127.0.0.1', port: 9, secret: 's' }, { userName: 'u' })
      .then((r) => console.log(r.kind));
  `);
  expect(outstanding.stdout.trim()).toBe('timeout');
});
