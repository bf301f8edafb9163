/** Messages between the CoA client's handle on the main thread (client-thread.ts) and its worker (coa-worker.ts). */
import type { CoaClientOptions, CoaClientStats, CoaTarget } from './client';
import type { RequestCode, SessionAttributes } from './codec';
import type { CoaReply } from './outcome';

export interface WireRequest {
  id: number;
  target: CoaTarget;
  code: RequestCode;
  session: SessionAttributes;
}

/** What the main thread's synchronous getters need of one NAS (`host:port`). */
export interface NasSnapshot {
  key: string;
  smoothedMs: number;
  rtoMs: number;
  /** Epoch ms (performance.timeOrigin + now: the threads' clocks share no origin) of its last verified reply. */
  lastReplyAt: number;
}

export type ToWorker =
  /** The options go with every batch: the service changes them at run time (settings). */
  | { type: 'requests'; options: CoaClientOptions; requests: WireRequest[] }
  | { type: 'open'; id: number }
  | { type: 'close' };

export type FromWorker =
  /** Every reply settled in one turn of the worker's loop, and the counters since the last post. */
  | {
      type: 'replies';
      replies: [id: number, reply: CoaReply][];
      stats: CoaClientStats;
      socketCount: number;
      nases: NasSnapshot[];
    }
  | { type: 'opened'; id: number; error?: string }
  | { type: 'closed' };
