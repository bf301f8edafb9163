/** Renderer tuning from the environment (documented in docs/documents.md). */
function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

export interface RendererOptions {
  /** Pages rendering at once (spec section 8: 4 per container, configurable). */
  concurrency: number;
  /** Renders allowed to wait for a page; one more is answered 503. */
  maxQueue: number;
  /** Deadline of one render, from page acquired to PDF bytes. */
  timeoutMs: number;
}

export function rendererOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RendererOptions {
  return {
    concurrency: positiveInt(env, 'PDF_CONCURRENCY', 4),
    maxQueue: positiveInt(env, 'PDF_QUEUE_LIMIT', 64),
    timeoutMs: positiveInt(env, 'PDF_RENDER_TIMEOUT_MS', 15_000),
  };
}
