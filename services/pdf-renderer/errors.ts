/**
 * The pool's failures, which the service maps to API errors. They are raised in the renderer's
 * worker thread and cross to the main thread as plain data, so this module loads no browser code:
 * the main thread revives them by name into the same classes.
 */

export class QueueFullError extends Error {
  constructor() {
    super('pdf renderer queue is full');
    this.name = 'QueueFullError';
  }
}

export class RenderTimeoutError extends Error {
  constructor(ms: number) {
    super(`pdf render exceeded ${ms} ms`);
    this.name = 'RenderTimeoutError';
  }
}

export class PoolClosedError extends Error {
  constructor() {
    super('pdf renderer is stopping');
    this.name = 'PoolClosedError';
  }
}

/** An error as it crosses the thread boundary. */
export interface WireError {
  name: string;
  message: string;
  stack?: string;
}

export function toWire(err: unknown): WireError {
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { name: 'Error', message: String(err) };
}

const KNOWN: Record<string, () => Error> = {
  QueueFullError: () => new QueueFullError(),
  PoolClosedError: () => new PoolClosedError(),
  RenderTimeoutError: () => new RenderTimeoutError(0),
};

/** The same class for the pool's own failures (the service maps them), a named Error otherwise. */
export function fromWire(wire: WireError): Error {
  const err = KNOWN[wire.name]?.() ?? new Error();
  err.name = wire.name;
  err.message = wire.message;
  // The worker's frames: where it really failed.
  if (wire.stack) err.stack = wire.stack;
  return err;
}
