/**
 * The gateway's side of a graceful shutdown (runtime/shutdown.ts calls `drain`), in three steps:
 *
 * 1. Readiness (`GET /health`) answers 503 `shutting down`, while other requests are still served
 *    for `readinessGraceMs`, the time a load balancer needs to see it and route elsewhere.
 * 2. The listening socket closes (Node also closes idle keep-alive connections), and a request
 *    arriving on a connection still open answers 503 `shutting down` with `Connection: close`.
 * 3. The requests already in flight run to their end (or the deadline).
 *
 * Liveness (`GET /health/live`) keeps answering 200 throughout: a draining process is alive, and an
 * orchestrator must not kill it for being busy finishing.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export const LIVENESS_PATH = '/health/live';
export const READINESS_PATH = '/health';
export const DRAINING_MESSAGE = 'shutting down';

export class HttpDrain {
  private inFlight = 0;
  private draining = false;
  private refusing = false;
  private onIdle?: () => void;

  get isDraining(): boolean {
    return this.draining;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Gateway middleware (http-front.ts): counts requests in flight; refuses new ones while draining. */
  readonly middleware = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (this.draining) {
      const path = req.url?.split('?')[0];
      if ((this.refusing && path !== LIVENESS_PATH) || path === READINESS_PATH) {
        const body = JSON.stringify({ success: false, message: DRAINING_MESSAGE });
        res.writeHead(503, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          Connection: 'close',
        });
        res.end(body);
        return;
      }
    }
    this.inFlight++;
    // 'close' follows every response, finished or cut off: one listener counts both.
    res.once('close', this.finished);
    next();
  };

  private readonly finished = (): void => {
    if (--this.inFlight === 0) this.onIdle?.();
  };

  /** Steps 1 to 3; resolves with how many requests were still running at the deadline. */
  async drain(server: Server | undefined, timeoutMs: number, readinessGraceMs = 0): Promise<number> {
    this.draining = true;
    if (readinessGraceMs > 0) await new Promise((r) => setTimeout(r, readinessGraceMs));
    this.refusing = true;
    server?.close();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.onIdle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    server?.closeIdleConnections();
    return this.inFlight;
  }
}
