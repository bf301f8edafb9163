/**
 * Graceful shutdown of one process, in the order an orchestrator expects (docs/distributed.md):
 *
 * 0. Readiness on OPS_PORT, if served, turns 503 (runtime/ops-server.ts).
 * 1. The gateway, if this process runs one, turns readiness to 503, stops taking requests and
 *    lets those in flight finish (services/gateway/readiness.ts).
 * 2. The broker tells the other nodes it has no services any more (they stop routing here), waits
 *    for the actions in flight (Moleculer's context tracking, moleculer.config.ts), and runs each
 *    service's `stopped()`: that is where background workers such as the outbox relay finish their
 *    current batch; an event it has not published stays unpublished in the table, so another
 *    replica or the next start picks it up (handed back, never lost).
 * 3. The database pool closes, then the embedded PostgreSQL if this process started one.
 */
import type { App } from './app';

/** How long step 1 waits for HTTP requests in flight; step 2 has its own bound (tracking.shutdownTimeout). */
export const HTTP_DRAIN_TIMEOUT_MS = 15_000;

interface DrainingGateway {
  drainHttp(timeoutMs: number): Promise<number>;
}

function drainingGateway(app: App): DrainingGateway | undefined {
  const gateway = app.broker.getLocalService('gateway') as Partial<DrainingGateway> | undefined;
  return typeof gateway?.drainHttp === 'function' ? (gateway as DrainingGateway) : undefined;
}

export async function gracefulStop(app: App, httpDrainTimeoutMs = HTTP_DRAIN_TIMEOUT_MS): Promise<void> {
  app.ops?.startDraining();
  const gateway = drainingGateway(app);
  if (gateway) {
    const unfinished = await gateway.drainHttp(httpDrainTimeoutMs);
    if (unfinished > 0)
      app.broker.logger.warn(
        `${unfinished} HTTP request(s) still running after ${httpDrainTimeoutMs} ms; stopping anyway`,
      );
  }
  await app.stop();
}

/** SIGINT/SIGTERM run gracefulStop once, then exit 0 (1 if stopping failed); repeated signals are ignored. */
export function stopOnSignals(app: App, exit: (code: number) => void = (code) => process.exit(code)): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    app.broker.logger.info(`${signal} received, draining and stopping`);
    gracefulStop(app).then(
      () => exit(0),
      (err) => {
        console.error(err);
        exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
