/**
 * The renderer's worker thread: the only code that loads playwright-core. Playwright runs each of
 * its API calls inside `AsyncLocalStorage.run`, which turns on async-hook promise tracking for the
 * whole thread it runs in; here that is this thread, so the services on the main thread keep
 * promises without hooks (docs/documents.md, "The renderer's thread").
 */
import { parentPort, workerData } from 'node:worker_threads';
import { findChromium } from './chromium';
import { toWire } from './errors';
import { RenderPool } from './pool';
import type { FromWorker, ToWorker, WorkerInit } from './worker-protocol';

const port = parentPort!;
const post = (message: FromWorker, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

/** Whole Error objects do not clone well; the main thread's logger gets their stacks. */
const loggable = (args: unknown[]) => args.map((a) => (a instanceof Error ? (a.stack ?? a.message) : a));

/** The PDF's own ArrayBuffer when the Buffer spans all of it (the usual case), else a copy of it. */
function ownBuffer(pdf: Buffer): ArrayBuffer {
  if (pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength && pdf.buffer instanceof ArrayBuffer)
    return pdf.buffer;
  return pdf.buffer.slice(pdf.byteOffset, pdf.byteOffset + pdf.byteLength) as ArrayBuffer;
}

function start(init: WorkerInit): RenderPool | undefined {
  let pool: RenderPool | undefined;
  let statusPosted = true;
  // Several changes in one turn (a render released, the next acquired) are posted once.
  const changed = () => {
    if (!statusPosted) return;
    statusPosted = false;
    queueMicrotask(() => {
      statusPosted = true;
      if (pool) post({ type: 'status', status: pool.status() });
    });
  };
  try {
    const { executablePath = findChromium(), ...options } = init;
    pool = new RenderPool({
      ...options,
      executablePath,
      logger: {
        info: (...args) => post({ type: 'log', level: 'info', args: loggable(args) }),
        warn: (...args) => post({ type: 'log', level: 'warn', args: loggable(args) }),
      },
      onChange: changed,
    });
  } catch (err) {
    post({ type: 'failed', error: toWire(err) });
    return undefined;
  }
  post({ type: 'status', status: pool.status() });
  post({ type: 'ready' });
  pool.warm();
  return pool;
}

const pool = start(workerData as WorkerInit);

port.on('message', (message: ToWorker) => {
  if (!pool) return;
  if (message.type === 'render') {
    const { id, job } = message;
    pool.render(job).then(
      (pdf) => {
        const bytes = ownBuffer(pdf);
        post({ type: 'rendered', id, pdf: bytes }, [bytes]);
      },
      (err: unknown) => post({ type: 'renderFailed', id, error: toWire(err) }),
    );
  } else if (message.type === 'stop') {
    void pool.stop().finally(() => {
      post({ type: 'stopped' });
      port.close();
    });
  }
});
