/** Renderer tuning from the environment (documented in docs/documents.md). */
import { intVar } from '../../shared/config';

export interface RendererOptions {
  /** Pages rendering at once (spec section 8: 4 per container, configurable). */
  concurrency: number;
  /** Renders allowed to wait for a page; one more is answered 503. */
  maxQueue: number;
  /** Deadline of one render, from page acquired to PDF bytes. */
  timeoutMs: number;
  /** A page or browser that does not close within this is hung: the browser is killed. */
  closeGraceMs: number;
}

export function rendererOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RendererOptions {
  return {
    concurrency: intVar(env, 'PDF_CONCURRENCY', 4, 1),
    maxQueue: intVar(env, 'PDF_QUEUE_LIMIT', 64, 1),
    timeoutMs: intVar(env, 'PDF_RENDER_TIMEOUT_MS', 15_000, 1),
    closeGraceMs: intVar(env, 'PDF_CLOSE_GRACE_MS', 3_000, 1),
  };
}
