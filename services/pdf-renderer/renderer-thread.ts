/**
 * The main thread's handle on the render pool, which runs in a worker thread (render-worker.ts) so
 * that playwright-core, and the async-hook promise tracking its zones switch on, stay off the
 * thread that serves the API. Renders go over as messages and the PDF bytes come back transferred,
 * not copied; the pool's status is posted whenever it changes, so reading it stays synchronous.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { repoRoot } from '../../shared/paths';
import { fromWire, PoolClosedError } from './errors';
import type { FromWorker, PoolStatus, RenderJob, ToWorker, WorkerInit } from './worker-protocol';

export interface ThreadLogger {
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
}

/** How long a stopping worker gets to close Chromium (its own grace is 3 s) before it is ended. */
const STOP_GRACE_MS = 10_000;

/**
 * The compiled worker: beside this file when running from dist/. From the sources (jest) it is
 * the build's copy, which must not be older than the sources it was built from.
 */
export function workerEntry(): string {
  if (path.extname(__filename) === '.js') return path.join(__dirname, 'render-worker.js');
  const built = path.join(repoRoot(), 'dist', 'services', 'pdf-renderer');
  for (const source of fs.readdirSync(__dirname).filter((f) => f.endsWith('.ts'))) {
    const compiled = path.join(built, source.replace(/\.ts$/, '.js'));
    if (!fs.existsSync(compiled) || fs.statSync(compiled).mtimeMs < fs.statSync(path.join(__dirname, source)).mtimeMs)
      throw new Error(`pdf-renderer: ${compiled} is missing or older than its source: run npm run build`);
  }
  return path.join(built, 'render-worker.js');
}

export class RendererThread {
  private worker!: Worker;
  private readonly pending = new Map<number, { resolve: (pdf: Buffer) => void; reject: (err: Error) => void }>();
  private nextId = 0;
  private latest: PoolStatus | undefined;
  private stopping?: Promise<void>;
  /** Between the worker's 'ready' and its exit: renders sent otherwise would never be answered. */
  private alive = false;

  private constructor(
    private readonly init: WorkerInit,
    private readonly logger: ThreadLogger,
    private readonly onStatus: (status: PoolStatus) => void,
  ) {}

  /** Resolves once the worker found Chromium and began launching it; rejects with why it could not. */
  static async start(init: WorkerInit, logger: ThreadLogger, onStatus: (status: PoolStatus) => void) {
    const thread = new RendererThread(init, logger, onStatus);
    await thread.spawn();
    return thread;
  }

  /** The last status the worker posted; undefined while no worker is up. */
  status(): PoolStatus | undefined {
    return this.latest;
  }

  render(job: RenderJob): Promise<Buffer> {
    if (this.stopping || !this.alive) return Promise.reject(new PoolClosedError());
    const id = this.nextId++;
    return new Promise<Buffer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ type: 'render', id, job });
    });
  }

  /** The worker closes Chromium and ends; one that does not within the grace is ended, and its browser killed. */
  stop(): Promise<void> {
    this.stopping ??= this.stopWorker();
    return this.stopping;
  }

  private async stopWorker(): Promise<void> {
    const worker = this.worker;
    const stopped = new Promise<boolean>((resolve) => {
      if (!this.alive) return resolve(false);
      worker.on('message', (m: FromWorker) => m.type === 'stopped' && resolve(true));
      worker.once('exit', () => resolve(false));
      setTimeout(() => resolve(false), STOP_GRACE_MS).unref();
      this.send({ type: 'stop' });
    });
    if (!(await stopped)) this.killBrowser();
    await worker.terminate();
    this.failPending();
    this.latest = undefined;
  }

  private spawn(): Promise<void> {
    const worker = new Worker(workerEntry(), { workerData: this.init });
    this.worker = worker;
    return new Promise<void>((resolve, reject) => {
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') {
          this.alive = true;
          resolve();
        } else if (message.type === 'failed') {
          reject(fromWire(message.error));
          void worker.terminate();
        } else this.receive(message);
      });
      worker.on('error', (err) => {
        reject(err);
        this.logger.warn('pdf-renderer: render worker failed', err);
      });
      worker.on('exit', () => {
        const wasAlive = this.alive;
        this.alive = false;
        reject(new Error('pdf-renderer: render worker exited while starting'));
        if (!wasAlive || this.worker !== worker || this.stopping) return;
        // A worker that died on its own: its renders are answered as during a restart, its browser
        // (a child of this process, not of the thread) is killed, and a new worker takes over.
        this.killBrowser();
        this.failPending();
        this.latest = undefined;
        this.logger.warn('pdf-renderer: render worker exited, starting another');
        this.spawn().catch((err) => this.logger.warn('pdf-renderer: render worker restart failed', err));
      });
    });
  }

  private receive(message: FromWorker): void {
    switch (message.type) {
      case 'status':
        this.latest = message.status;
        this.onStatus(message.status);
        break;
      case 'rendered':
        this.settle(message.id)?.resolve(Buffer.from(message.pdf));
        break;
      case 'renderFailed':
        this.settle(message.id)?.reject(fromWire(message.error));
        break;
      case 'log':
        this.logger[message.level](...message.args);
        break;
    }
  }

  private settle(id: number) {
    const waiter = this.pending.get(id);
    this.pending.delete(id);
    return waiter;
  }

  private failPending(): void {
    for (const waiter of this.pending.values()) waiter.reject(new PoolClosedError());
    this.pending.clear();
  }

  private killBrowser(): void {
    const pid = this.latest?.pid;
    if (!pid) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }

  private send(message: ToWorker): void {
    this.worker.postMessage(message);
  }
}
