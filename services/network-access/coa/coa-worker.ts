/**
 * The CoA client's worker thread: the sockets, the window per NAS, the timers and the reply
 * matching (client.ts) run here, so a reply is read and its place refilled from the queue while the
 * main thread runs a bulk job's queries and result mapping (issue 41: the first job's replies
 * waited 15 to 85 ms behind those tasks, doubling the round trip the window of 64 is paced by).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CoaClient, type CoaClientOptions, type CoaClientStats } from './client';
import type { CoaReply } from './outcome';
import type { FromWorker, NasSnapshot, ToWorker } from './thread-protocol';

const port = parentPort!;
const post = (message: FromWorker) => port.postMessage(message);
const client = new CoaClient(workerData as Partial<CoaClientOptions>);

let settled: [number, CoaReply][] = [];
let flushing = false;

/** Replies settled in one turn go back as one message, after the turn's I/O (setImmediate). */
function flush(): void {
  flushing = false;
  const stats: CoaClientStats = { ...client.stats };
  Object.assign(client.stats, { sent: 0, retransmitted: 0, dropped: 0, busyRetries: 0 });
  post({ type: 'replies', replies: settled, stats, socketCount: client.socketCount, nases: snapshot() });
  settled = [];
}

function settle(id: number, reply: CoaReply): void {
  settled.push([id, reply]);
  if (!flushing) {
    flushing = true;
    setImmediate(flush);
  }
}

function snapshot(): NasSnapshot[] {
  const origin = performance.timeOrigin;
  return client.nasSnapshots().map((n) => ({ ...n, lastReplyAt: origin + n.lastReplyAt }));
}

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'requests': {
      const { options } = message;
      Object.assign(client.options, options, { rto: { ...options.rto } });
      for (const r of message.requests)
        client.request(r.target, r.code, r.session).then((reply) => settle(r.id, reply));
      break;
    }
    case 'open':
      client.open().then(
        () => post({ type: 'opened', id: message.id }),
        (err: Error) => post({ type: 'opened', id: message.id, error: err.message }),
      );
      break;
    case 'close':
      void client.close().then(() => {
        // Replies the close settled are posted before it says it is done.
        setImmediate(() => {
          if (flushing) flush();
          post({ type: 'closed' });
          port.close();
        });
      });
      break;
  }
});
