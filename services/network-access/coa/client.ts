/**
 * RFC 5176 client over UDP. `radius` encodes and verifies packets; this is everything around them:
 *
 * - Identifiers: 8 bits per socket, so at most 256 requests in flight on one socket; more sockets
 *   open as needed (up to `maxSockets`). Identifiers are handed out round-robin so a late reply to
 *   a timed-out request rarely meets a reused identifier (and when it does, its Response
 *   Authenticator does not verify against the new request, so it is dropped).
 * - Reply matching: socket + identifier + the address and port the request went to + the reply
 *   code that answers it + the Response Authenticator (MD5 over the request's authenticator and
 *   the shared secret). Anything else is counted and dropped.
 * - Timeouts from the measured round trip of each NAS (rtt.ts), retransmission of the same bytes
 *   (same identifier and authenticator, so the NAS can spot the duplicate) with the timeout doubled
 *   each time, and a bounded number of them.
 * - A NAK with Error-Cause 506 (Resources Unavailable) waits and asks again, a bounded number of times.
 * - At most `maxInFlightPerNas` requests outstanding per NAS (retransmissions included); the rest
 *   queue in order.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import { isIP } from 'node:net';
import {
  encodeRequest,
  errorCauseOf,
  REPLY_CODE_BY_NUMBER,
  REPLY_CODES,
  verifyReply,
  type RequestCode,
  type SessionAttributes,
} from './codec';
import { RESOURCES_UNAVAILABLE, type CoaReply } from './outcome';
import { DEFAULT_RTO, RttEstimator, type RtoBounds } from './rtt';

export interface CoaTarget {
  host: string;
  port: number;
  secret: string;
}

export interface CoaClientOptions {
  maxInFlightPerNas: number;
  /** Transmissions after the first before the request counts as unanswered. */
  retransmits: number;
  /** Extra requests after a NAK with Error-Cause 506. */
  busyRetries: number;
  rto: RtoBounds;
  maxSockets: number;
  /** Source address of the requests (a NAS accepts CoA only from its RADIUS servers' addresses). */
  bindAddress?: string;
}

export const DEFAULT_COA_OPTIONS: CoaClientOptions = {
  maxInFlightPerNas: 64,
  retransmits: 1,
  busyRetries: 3,
  rto: DEFAULT_RTO,
  maxSockets: 64,
};

const IDS_PER_SOCKET = 256;
const EMPTY = Buffer.alloc(0);
const TIMER_TICK_MS = 5;
/**
 * libuv reads at most this many datagrams from one socket per turn of the event loop (uv__udp_io's
 * count): after a stall longer than a timeout, with 64 replies waiting, one turn leaves half of them
 * in the buffer.
 */
const READS_PER_TURN = 32;
/** Turns a timeout waits for the socket's buffer to drain: enough for every identifier's reply. */
const MAX_DRAIN_TURNS = IDS_PER_SOCKET / READS_PER_TURN;
/**
 * A NAS still counts as answering this many timeouts, and at least ANSWERING_MIN_MS, after its last
 * reply: a busy event loop (a collection, a batch's lookups) reads replies late, and the gap between
 * two of them then passes a few timeouts of a LAN NAS without the NAS stalling.
 */
const ANSWERING_RTOS = 4;
const ANSWERING_MIN_MS = 1000;

interface Pending {
  socket: UdpSocket;
  id: number;
  packet: Buffer;
  target: CoaTarget;
  code: RequestCode;
  nas: NasState;
  sentAt: number;
  attempts: number;
  /** Armed with the initial timeout, before this NAS had a measured round trip. */
  provisional: boolean;
  timer: NodeJS.Timeout | undefined;
  done: (reply: CoaReply) => void;
}

/**
 * First in, first out, in O(1) at both ends: a bulk job queues thousands of requests behind a NAS's
 * gate, and `Array.prototype.shift` on such an array copies it on every release.
 */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    // Drop the consumed front once it is most of the array: amortised O(1), bounded memory.
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes and returns everything queued, in order. */
  drain(): T[] {
    const all = this.items.slice(this.head) as T[];
    this.items = [];
    this.head = 0;
    return all;
  }
}

/** Per NAS (address:port): its round-trip estimate and its concurrency gate. */
interface NasState {
  rtt: RttEstimator;
  active: number;
  peak: number;
  waiting: Fifo<() => void>;
  pending: Set<Pending>;
  /** performance.now() of its last verified reply; -Infinity before the first. */
  lastReplyAt: number;
}

class UdpSocket {
  readonly slots: (Pending | undefined)[] = new Array(IDS_PER_SOCKET);
  used = 0;
  /** Datagrams read from this socket, of any kind: tells a timeout whether the buffer was drained. */
  received = 0;
  private nextId = 0;

  constructor(readonly socket: dgram.Socket) {}

  allocate(p: Omit<Pending, 'id' | 'socket'>): Pending | undefined {
    if (this.used >= IDS_PER_SOCKET) return undefined;
    for (let i = 0; i < IDS_PER_SOCKET; i++) {
      const id = (this.nextId + i) & 0xff;
      if (this.slots[id] === undefined) {
        const pending = { ...p, id, socket: this } as Pending;
        this.slots[id] = pending;
        this.used++;
        this.nextId = (id + 1) & 0xff;
        return pending;
      }
    }
    return undefined;
  }

  free(p: Pending): void {
    if (this.slots[p.id] === p) {
      this.slots[p.id] = undefined;
      this.used--;
    }
  }
}

export interface CoaClientStats {
  sent: number;
  retransmitted: number;
  /** Datagrams that matched no request, came from elsewhere, or failed verification. */
  dropped: number;
  busyRetries: number;
}

export class CoaClient {
  readonly options: CoaClientOptions;
  readonly stats: CoaClientStats = { sent: 0, retransmitted: 0, dropped: 0, busyRetries: 0 };
  private readonly sockets: UdpSocket[] = [];
  private readonly nases = new Map<string, NasState>();
  /** Requests waiting for a free identifier when every socket is full. */
  private readonly idWaiters = new Fifo<() => void>();
  private opening: Promise<void> | undefined;
  private closed = false;

  constructor(options: Partial<CoaClientOptions> = {}) {
    this.options = { ...DEFAULT_COA_OPTIONS, ...options, rto: { ...DEFAULT_COA_OPTIONS.rto, ...options.rto } };
  }

  /** Disconnect-Request for one session. */
  disconnect(target: CoaTarget, session: SessionAttributes): Promise<CoaReply> {
    return this.request(target, 'Disconnect-Request', session);
  }

  /** CoA-Request changing a live session's attributes (a new rate limit) without disconnecting it. */
  change(target: CoaTarget, session: SessionAttributes): Promise<CoaReply> {
    return this.request(target, 'CoA-Request', session);
  }

  async request(target: CoaTarget, code: RequestCode, session: SessionAttributes): Promise<CoaReply> {
    if (this.closed) return { kind: 'error', attempts: 0, message: 'CoA client closed' };
    const nas = this.nasState(target);
    const queued = this.acquire(nas);
    if (queued) await queued;
    try {
      let attempts = 0;
      for (let busy = 0; ; busy++) {
        const reply = await this.exchange(target, code, session, nas);
        attempts += reply.attempts;
        const again =
          reply.kind === 'nak' && reply.errorCause === RESOURCES_UNAVAILABLE && busy < this.options.busyRetries;
        if (!again || this.closed) return { ...reply, attempts };
        this.stats.busyRetries++;
        // The NAS is short of resources: wait a few round trips (doubling, with jitter) before asking again.
        await sleep(nas.rtt.rtoMs() * 2 ** busy * (1 + Math.random()));
      }
    } finally {
      this.release(nas);
    }
  }

  /** Peak of requests outstanding at once towards each NAS (`host:port`) since the last reset. */
  inFlightPeaks(): Record<string, number> {
    return Object.fromEntries([...this.nases].map(([key, n]) => [key, n.peak]));
  }

  resetPeaks(): void {
    for (const n of this.nases.values()) n.peak = n.active;
  }

  /**
   * Requests waiting for a place behind their NAS's limit (coa_max_in_flight_per_nas), over the
   * NASes that answer: a queue that drains. A NAS with no reply for ANSWERING_RTOS of its timeouts
   * and ANSWERING_MIN_MS (or none yet: a job's first requests to a NAS idle since) drains at the
   * pace of its timeouts, and is left out, so that whoever holds work back for this count is not
   * held by it.
   */
  get queued(): number {
    const now = performance.now();
    let n = 0;
    for (const nas of this.nases.values()) if (this.answering(nas, now)) n += nas.waiting.length;
    return n;
  }

  /**
   * How long, in ms, the longest queue behind a NAS that answers takes to reach the wire at the pace
   * that NAS answers (its limit per smoothed round trip): work already lined up, in time rather
   * than requests, so that whoever feeds the queues keeps them that far ahead of a fast NAS and no
   * further ahead of a slow one. NASes left out of `queued` are left out here too.
   */
  get queuedMs(): number {
    const now = performance.now();
    let ms = 0;
    for (const nas of this.nases.values()) {
      if (nas.waiting.length === 0 || !this.answering(nas, now)) continue;
      const perRequest = Math.max(nas.rtt.smoothedMs, 1) / this.options.maxInFlightPerNas;
      ms = Math.max(ms, nas.waiting.length * perRequest);
    }
    return ms;
  }

  private answering(nas: NasState, now: number): boolean {
    return now - nas.lastReplyAt <= Math.max(ANSWERING_MIN_MS, ANSWERING_RTOS * nas.rtt.rtoMs());
  }

  /** Opens the first socket ahead of the first request (a job's first requests waited for its bind). */
  async open(): Promise<void> {
    if (this.sockets.length === 0 && !this.closed)
      await (this.opening ??= this.openSocket().finally(() => (this.opening = undefined)));
  }

  /** UDP sockets open (each carries up to 256 requests at once). */
  get socketCount(): number {
    return this.sockets.length;
  }

  /** The current retransmission timeout towards a NAS. */
  rtoMs(target: { host: string; port: number }): number {
    return this.nases.get(keyOf(target))?.rtt.rtoMs() ?? this.options.rto.initialMs;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const nas of this.nases.values()) {
      for (const p of [...nas.pending])
        this.finish(p, { kind: 'error', attempts: p.attempts, message: 'CoA client closed' });
      // Queued requests wake to find the client closed and end with an error.
      for (const wake of nas.waiting.drain()) wake();
    }
    for (const wake of this.idWaiters.drain()) wake();
    await Promise.all(
      this.sockets.splice(0).map((s) => new Promise<void>((resolve) => s.socket.close(() => resolve()))),
    );
  }

  // ---------------------------------------------------------------- one request/reply exchange

  private exchange(target: CoaTarget, code: RequestCode, session: SessionAttributes, nas: NasState): Promise<CoaReply> {
    return new Promise<CoaReply>((done) => {
      const init: Omit<Pending, 'id' | 'socket'> = {
        packet: EMPTY,
        target,
        code,
        nas,
        sentAt: 0,
        attempts: 0,
        provisional: false,
        timer: undefined,
        done,
      };
      const send = (pending: Pending) => {
        try {
          pending.packet = encodeRequest(code, pending.id, target.secret, session);
        } catch (err) {
          this.finish(pending, {
            kind: 'error',
            attempts: 0,
            message: `cannot encode request: ${(err as Error).message}`,
          });
          return;
        }
        nas.pending.add(pending);
        this.transmit(pending);
      };
      // Nearly always an identifier is free on an open socket: no promise in between.
      const free = this.closed ? undefined : this.freeIdentifier(init);
      if (free) send(free);
      else
        this.allocate(init)
          .then(send)
          .catch((err: Error) => done({ kind: 'error', attempts: 0, message: err.message }));
    });
  }

  private transmit(p: Pending): void {
    p.attempts++;
    p.sentAt = performance.now();
    if (p.attempts === 1) this.stats.sent++;
    else this.stats.retransmitted++;
    p.socket.socket.send(p.packet, p.target.port, p.target.host, (err) => {
      if (err) this.finish(p, { kind: 'error', attempts: p.attempts, message: err.message });
    });
    this.arm(p, this.timeoutFor(p));
  }

  /** The NAS's current timeout, doubled for every transmission already made. */
  private timeoutFor(p: Pending): number {
    p.provisional = p.nas.rtt.samples === 0;
    return Math.min(this.options.rto.maxMs, p.nas.rtt.rtoMs() * 2 ** (p.attempts - 1));
  }

  private arm(p: Pending, ms: number): void {
    if (p.timer) clearTimeout(p.timer);
    // Node keeps one timer list per duration in ms: an RTO drifting by a millisecond at a time made
    // a list per request that emptied on its reply (a priority-queue removal each). Whole ticks
    // keep a stream of requests on one list, at most TIMER_TICK_MS late.
    const due = Math.ceil(Math.max(0, ms) / TIMER_TICK_MS) * TIMER_TICK_MS;
    p.timer = setTimeout(() => this.onTimeout(p), due);
  }

  private onTimeout(p: Pending): void {
    p.timer = undefined;
    this.afterPendingReads(p, 0);
  }

  /**
   * Timers run before I/O in the event loop: after a busy stretch the reply may be sitting in the
   * socket buffer. Let the poll phase read it before retransmitting or giving up, and while a turn
   * read as many datagrams from the socket as libuv reads in one, another turn, as more may wait.
   * With one turn only, 64 replies waiting after a stall cost 32 needless retransmissions (the
   * first bulk job after a start, issue 41, stalls like that while V8 compiles its hot paths).
   */
  private afterPendingReads(p: Pending, turns: number): void {
    const before = p.socket.received;
    setImmediate(() => {
      if (p.socket.slots[p.id] !== p || p.timer) return;
      if (p.socket.received - before >= READS_PER_TURN && turns + 1 < MAX_DRAIN_TURNS)
        this.afterPendingReads(p, turns + 1);
      else if (p.attempts <= this.options.retransmits) this.transmit(p);
      else this.finish(p, { kind: 'timeout', attempts: p.attempts });
    });
  }

  private finish(p: Pending, reply: CoaReply): void {
    if (p.socket.slots[p.id] !== p) return;
    if (p.timer) clearTimeout(p.timer);
    p.socket.free(p);
    p.nas.pending.delete(p);
    const waiter = this.idWaiters.shift();
    if (waiter) waiter();
    p.done(reply);
  }

  private onMessage(socket: UdpSocket, msg: Buffer, from: dgram.RemoteInfo): void {
    socket.received++;
    const p = msg.length >= 20 ? socket.slots[msg[1]] : undefined;
    const replyCode = REPLY_CODE_BY_NUMBER[msg[0]];
    const expected = p ? REPLY_CODES[p.code] : undefined;
    if (
      !p ||
      !expected ||
      from.port !== p.target.port ||
      !sameHost(from.address, p.target.host) ||
      (replyCode !== expected.ack && replyCode !== expected.nak) ||
      !verifyReply(p.packet, msg, p.target.secret)
    ) {
      this.stats.dropped++;
      return;
    }
    const now = performance.now();
    const rttMs = now - p.sentAt;
    p.nas.lastReplyAt = now;
    if (p.attempts === 1) this.sample(p.nas, rttMs);
    const attempts = p.attempts;
    this.finish(
      p,
      replyCode === expected.ack
        ? { kind: 'ack', attempts, rttMs }
        : { kind: 'nak', errorCause: errorCauseOf(msg), attempts, rttMs },
    );
  }

  private sample(nas: NasState, rttMs: number): void {
    const first = nas.rtt.samples === 0;
    nas.rtt.sample(rttMs);
    if (!first) return;
    // The first measurement replaces the initial guess for requests already waiting on it.
    const now = performance.now();
    for (const p of nas.pending) {
      if (p.provisional && p.timer) {
        p.provisional = false;
        this.arm(p, p.sentAt + nas.rtt.rtoMs() * 2 ** (p.attempts - 1) - now);
      }
    }
  }

  // ---------------------------------------------------------------- sockets and gates

  /** An identifier on an open socket with room, if any. */
  private freeIdentifier(init: Omit<Pending, 'id' | 'socket'>): Pending | undefined {
    for (const s of this.sockets) {
      const pending = s.allocate(init);
      if (pending) return pending;
    }
    return undefined;
  }

  /** An identifier on a socket with room, opening one more socket (one at a time) when all are full. */
  private async allocate(init: Omit<Pending, 'id' | 'socket'>): Promise<Pending> {
    for (;;) {
      if (this.closed) throw new Error('CoA client closed');
      const pending = this.freeIdentifier(init);
      if (pending) return pending;
      if (this.opening) await this.opening;
      else if (this.sockets.length < this.options.maxSockets) {
        this.opening = this.openSocket().finally(() => {
          this.opening = undefined;
        });
        await this.opening;
      } else await new Promise<void>((wake) => this.idWaiters.push(wake));
    }
  }

  private async openSocket(): Promise<void> {
    // Up to 256 replies can arrive at once on a socket: room for them (capped by net.core.rmem_max).
    const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 1 << 20, lookup: literalFirst });
    const wrapped = new UdpSocket(socket);
    socket.on('message', (msg, from) => this.onMessage(wrapped, msg, from));
    // A send error surfaces in the send callback; this only keeps an ICMP-driven error from crashing the process.
    socket.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ port: 0, address: this.options.bindAddress, exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    // Outstanding requests keep the process alive through their timers; an idle socket does not.
    socket.unref();
    this.sockets.push(wrapped);
  }

  private nasState(target: { host: string; port: number }): NasState {
    const key = keyOf(target);
    let nas = this.nases.get(key);
    if (!nas) {
      nas = {
        rtt: new RttEstimator(this.options.rto),
        active: 0,
        peak: 0,
        waiting: new Fifo(),
        pending: new Set(),
        lastReplyAt: -Infinity,
      };
      this.nases.set(key, nas);
    }
    return nas;
  }

  /**
   * A place among the NAS's in-flight requests: at once when one is free (undefined, no promise to
   * wait on), else a promise of the place a release passes straight to the next in line.
   */
  private acquire(nas: NasState): Promise<void> | undefined {
    if (nas.active < this.options.maxInFlightPerNas) {
      nas.active++;
      if (nas.active > nas.peak) nas.peak = nas.active;
      return undefined;
    }
    return new Promise<void>((wake) => nas.waiting.push(wake));
  }

  private release(nas: NasState): void {
    const next = nas.waiting.shift();
    if (next) next();
    else nas.active--;
  }
}

/**
 * A NAS is addressed by its IP (the nas row's address): dgram's default lookup still goes through
 * dns.lookup, which answers a literal on the next tick, so every send waited a tick and a closure.
 */
function literalFirst(
  hostname: string,
  options: dns.LookupOneOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  const family = isIP(hostname);
  if (family) callback(null, hostname, family);
  else dns.lookup(hostname, options, callback);
}

function keyOf(target: { host: string; port: number }): string {
  return `${target.host}:${target.port}`;
}

function sameHost(from: string, to: string): boolean {
  return from === to || from === `::ffff:${to}` || (to === 'localhost' && from === '127.0.0.1');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
