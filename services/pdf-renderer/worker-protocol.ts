/** Messages between the pdf-renderer service (main thread) and its pool's worker thread. */
import type { WireError } from './errors';
import type { RendererOptions } from './options';

export interface PoolStatus {
  /** The running browser's process, once launched. */
  pid: number | undefined;
  /** Browsers launched so far. */
  generation: number;
  restarts: number;
  concurrency: number;
  idle: number;
  queued: number;
}

export interface RenderJob {
  html: string;
  widthMm: number;
  /** null: a receipt roll, the page is as long as the content. */
  heightMm: number | null;
}

export interface WorkerInit extends RendererOptions {
  /** Unset: the worker looks for Chromium (chromium.ts), which needs playwright-core. */
  executablePath?: string;
}

export type ToWorker = { type: 'render'; id: number; job: RenderJob } | { type: 'stop' };

export type FromWorker =
  /** The browser is being launched; renders may be sent. */
  | { type: 'ready' }
  /** The pool could not start (no Chromium): the service's start fails with this. */
  | { type: 'failed'; error: WireError }
  | { type: 'status'; status: PoolStatus }
  /** `pdf` is transferred, not copied. */
  | { type: 'rendered'; id: number; pdf: ArrayBuffer }
  | { type: 'renderFailed'; id: number; error: WireError }
  | { type: 'log'; level: 'info' | 'warn'; args: unknown[] }
  | { type: 'stopped' };
