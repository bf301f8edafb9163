/**
 * The CoA client as the service uses it: the same calls as CoaClient (client.ts), which runs in a
 * worker thread (coa-worker.ts). On one event loop with the bulk job, the first job's replies
 * waited behind its queries and result mapping, 15 to 85 ms on a 30 ms round trip, and the window
 * of 64 per NAS refilled that late (docs/network-access.md, "The CoA client's thread"). Requests go
 * over in one message per synchronous burst and replies come back in one per turn of the worker's
 * loop; what the synchronous getters need (round trips, last replies, counters) comes with them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { repoRoot } from '../../../shared/paths';
import { answering, DEFAULT_COA_OPTIONS, type CoaClientOptions, type CoaClientStats, type CoaTarget } from './client';
import type { RequestCode, SessionAttributes } from './codec';
import type { CoaReply } from './outcome';
import type { FromWorker, NasSnapshot, ToWorker, WireRequest } from './thread-protocol';

/**
 * The compiled worker: beside this file when running from dist/. From the sources (jest) it is
 * the build's copy, which must not be older than the sources it was built from.
 */
export function coaWorkerEntry(): string {
  if (path.extname(__filename) === '.js') return path.join(__dirname, 'coa-worker.js');
  const built = path.join(repoRoot(), 'dist', 'services', 'network-access', 'coa');
  for (const source of fs.readdirSync(__dirname).filter((f) => f.endsWith('.ts'))) {
    const compiled = path.join(built, source.replace(/\.ts$/, '.js'));
    if (!fs.existsSync(compiled) || fs.statSync(compiled).mtimeMs < fs.statSync(path.join(__dirname, source)).mtimeMs)
      throw new Error(`network-access: ${compiled} is missing or older than its source: run npm run build`);
  }
  return path.join(built, 'coa-worker.js');
}

/** Requests not yet answered towards one NAS, as the main thread counts them. */
interface NasCount {
  outstanding: number;
  peak: number;
  snapshot?: NasSnapshot;
}

export class CoaClientThread {
  /** Read by the worker with every batch, so settings changed at run time apply to the next requests. */
  readonly options: CoaClientOptions;
  readonly stats: CoaClientStats = { sent: 0, retransmitted: 0, dropped: 0, busyRetries: 0 };
  private worker!: Worker;
  private readonly pending = new Map<number, { key: string; done: (reply: CoaReply) => void }>();
  private readonly opening = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private readonly nases = new Map<string, NasCount>();
  private batch: WireRequest[] = [];
  private nextId = 0;
  private sockets = 0;
  private closing: Promise<void> | undefined;

  constructor(options: Partial<CoaClientOptions> = {}) {
    this.options = { ...DEFAULT_COA_OPTIONS, ...options, rto: { ...DEFAULT_COA_OPTIONS.rto, ...options.rto } };
    this.spawn();
  }

  disconnect(target: CoaTarget, session: SessionAttributes): Promise<CoaReply> {
    return this.request(target, 'Disconnect-Request', session);
  }

  change(target: CoaTarget, session: SessionAttributes): Promise<CoaReply> {
    return this.request(target, 'CoA-Request', session);
  }

  request(target: CoaTarget, code: RequestCode, session: SessionAttributes): Promise<CoaReply> {
    if (this.closing) return Promise.resolve({ kind: 'error', attempts: 0, message: 'CoA client closed' });
    const id = this.nextId++;
    const key = keyOf(target);
    const nas = this.nasCount(key);
    nas.outstanding++;
    nas.peak = Math.max(nas.peak, Math.min(nas.outstanding, this.options.maxInFlightPerNas));
    if (this.batch.length === 0) queueMicrotask(() => this.flush());
    this.batch.push({ id, target, code, session });
    // Outstanding requests keep the process alive, as the in-thread client's timers did; an idle worker does not.
    if (this.pending.size === 0) this.worker.ref();
    return new Promise<CoaReply>((done) => this.pending.set(id, { key, done }));
  }

  inFlightPeaks(): Record<string, number> {
    return Object.fromEntries([...this.nases].map(([key, n]) => [key, n.peak]));
  }

  resetPeaks(): void {
    for (const n of this.nases.values()) n.peak = Math.min(n.outstanding, this.options.maxInFlightPerNas);
  }

  /** As CoaClient's: requests waiting behind the limit of NASes that answer. */
  get queued(): number {
    let n = 0;
    for (const nas of this.nases.values()) if (this.answering(nas)) n += this.waiting(nas);
    return n;
  }

  /** As CoaClient's: how long the longest such queue takes to reach the wire, in ms. */
  get queuedMs(): number {
    let ms = 0;
    for (const nas of this.nases.values()) {
      const waiting = this.waiting(nas);
      if (waiting === 0 || !this.answering(nas)) continue;
      const perRequest = Math.max(nas.snapshot!.smoothedMs, 1) / this.options.maxInFlightPerNas;
      ms = Math.max(ms, waiting * perRequest);
    }
    return ms;
  }

  open(): Promise<void> {
    if (this.closing) return Promise.resolve();
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.opening.set(id, { resolve, reject });
      this.send({ type: 'open', id });
    });
  }

  get socketCount(): number {
    return this.sockets;
  }

  rtoMs(target: { host: string; port: number }): number {
    return this.nases.get(keyOf(target))?.snapshot?.rtoMs ?? this.options.rto.initialMs;
  }

  /** The worker ends outstanding and queued requests with an error, closes its sockets and exits. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.flush();
      const worker = this.worker;
      worker.on('message', (m: FromWorker) => m.type === 'closed' && resolve());
      worker.once('exit', () => resolve());
      this.send({ type: 'close' });
    }).then(async () => {
      await this.worker.terminate();
      this.failAll('CoA client closed');
    });
    return this.closing;
  }

  private spawn(): void {
    const worker = new Worker(coaWorkerEntry(), { workerData: this.options });
    this.worker = worker;
    if (this.pending.size === 0) worker.unref();
    worker.on('message', (message: FromWorker) => this.receive(message));
    // An uncaught error ends the worker; 'exit' below answers its requests.
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (this.worker !== worker || this.closing) return;
      // A worker that died on its own: its requests end with an error (the caller's fallback, the
      // router API, takes over, as for any failed exchange) and a new worker takes the next ones.
      this.failAll('CoA worker exited');
      this.sockets = 0;
      for (const nas of this.nases.values()) nas.snapshot = undefined;
      this.spawn();
    });
  }

  private receive(message: FromWorker): void {
    if (message.type === 'replies') {
      for (const s of message.nases) this.nasCount(s.key).snapshot = s;
      this.sockets = message.socketCount;
      this.stats.sent += message.stats.sent;
      this.stats.retransmitted += message.stats.retransmitted;
      this.stats.dropped += message.stats.dropped;
      this.stats.busyRetries += message.stats.busyRetries;
      for (const [id, reply] of message.replies) this.settle(id, reply);
      if (this.pending.size === 0) this.worker.unref();
    } else if (message.type === 'opened') {
      const waiter = this.opening.get(message.id);
      this.opening.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error));
      else waiter?.resolve();
    }
  }

  private settle(id: number, reply: CoaReply): void {
    const waiter = this.pending.get(id);
    if (!waiter) return;
    this.pending.delete(id);
    this.nases.get(waiter.key)!.outstanding--;
    waiter.done(reply);
  }

  private failAll(message: string): void {
    for (const id of [...this.pending.keys()]) this.settle(id, { kind: 'error', attempts: 0, message });
    this.batch = [];
    for (const waiter of this.opening.values()) waiter.resolve();
    this.opening.clear();
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    const requests = this.batch;
    this.batch = [];
    this.send({ type: 'requests', options: this.options, requests });
  }

  private send(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  private nasCount(key: string): NasCount {
    let nas = this.nases.get(key);
    if (!nas) this.nases.set(key, (nas = { outstanding: 0, peak: 0 }));
    return nas;
  }

  /** The worker's gate lets maxInFlightPerNas through; the rest of a NAS's outstanding requests wait. */
  private waiting(nas: NasCount): number {
    return Math.max(0, nas.outstanding - this.options.maxInFlightPerNas);
  }

  private answering(nas: NasCount): boolean {
    const s = nas.snapshot;
    return !!s && answering(performance.timeOrigin + performance.now() - s.lastReplyAt, s.rtoMs);
  }
}

function keyOf(target: { host: string; port: number }): string {
  return `${target.host}:${target.port}`;
}
