/**
 * `pdf-renderer`: HTML in, PDF bytes out, as a stream. The bytes are cut into 64 KiB chunks because
 * NATS caps a message at 1 MB and Moleculer sends each stream chunk as one message.
 */
import { Readable } from 'node:stream';
import type { Context, Service, ServiceSchema } from 'moleculer';
import { fail } from '../../shared/failures';
import { observeRender, setPdfQueue, type RenderOutcome } from '../../shared/metrics';
import { PAPER_SIZES, isPaperSize } from '../../shared/paper';
import { PoolClosedError, QueueFullError, RenderTimeoutError } from './errors';
import { rendererOptionsFromEnv, type RendererOptions } from './options';
import { RendererThread } from './renderer-thread';
import type { PoolStatus } from './worker-protocol';

export interface RenderParams {
  html: string;
  paper: string;
}

const CHUNK_BYTES = 64 * 1024;

function chunked(bytes: Buffer): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK_BYTES) parts.push(bytes.subarray(i, i + CHUNK_BYTES));
  return Readable.from(parts, { objectMode: false });
}

function reportQueue({ queued, idle, concurrency }: PoolStatus): void {
  setPdfQueue(queued, concurrency - idle);
}

export function createPdfRendererService(
  overrides: Partial<RendererOptions> & { executablePath?: string } = {},
): ServiceSchema {
  // One schema serves every broker of the process (services/pdf-renderer/index.ts), so each
  // service instance keeps its own thread: kept in the closure, a second broker's replaced the
  // first's, which then outlived its broker's stop with its Chromium (tests start two apps).
  const pools = new WeakMap<Service, RendererThread>();

  return {
    name: 'pdf-renderer',
    actions: {
      render: {
        visibility: 'public',
        // Same HTML, same PDF: a caller whose replica died retries on another (moleculer.config.ts).
        idempotent: true,
        async handler(this: Service, ctx: Context<RenderParams>): Promise<Readable> {
          const { html, paper } = ctx.params;
          const pool = pools.get(this);
          if (typeof html !== 'string' || !html) throw fail('htmlMissing');
          if (!isPaperSize(paper)) throw fail('paperInvalid');
          if (!pool) throw fail('rendererNotRunning');
          const size = PAPER_SIZES[paper];
          const started = process.hrtime.bigint();
          let outcome: RenderOutcome = 'error';
          try {
            const pdf = chunked(await pool.render({ html, widthMm: size.width, heightMm: size.height }));
            outcome = 'ok';
            return pdf;
          } catch (err) {
            if (err instanceof QueueFullError || err instanceof PoolClosedError) outcome = 'busy';
            if (err instanceof RenderTimeoutError) outcome = 'timeout';
            if (err instanceof QueueFullError) throw fail('rendererBusy');
            if (err instanceof PoolClosedError) throw fail('rendererRestarting');
            if (err instanceof RenderTimeoutError) throw fail('renderTimeout');
            throw err;
          } finally {
            observeRender(outcome, Number(process.hrtime.bigint() - started) / 1e9);
          }
        },
      },
      /** Browser pid, generation and queue depth: for health checks and the crash-recovery test. */
      status: {
        visibility: 'public',
        handler(this: Service) {
          return pools.get(this)?.status() ?? null;
        },
      },
    },
    async started(this: Service) {
      // The pool runs in a worker thread (renderer-thread.ts), which starts launching the browser.
      // Fails the start with a message naming the fix when no Chromium exists.
      pools.set(
        this,
        await RendererThread.start({ ...rendererOptionsFromEnv(), ...overrides }, this.logger, reportQueue),
      );
    },
    async stopped(this: Service) {
      const pool = pools.get(this);
      pools.delete(this);
      await pool?.stop();
    },
  };
}
