/**
 * A small HTTP listener for orchestrators, on OPS_PORT, in any process (the units without the
 * gateway have no other HTTP port): `GET /health/live` (200 while the process runs), `GET /health`
 * (readiness: 200 once the broker has started and, in distributed mode, the transporter is
 * connected; 503 from the moment a shutdown begins) and `GET /metrics` (this process's registry).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceBroker } from 'moleculer';
import { registry } from '../shared/metrics';

export interface OpsServer {
  port: number;
  /** Readiness turns 503 (graceful shutdown, step 0). */
  startDraining(): void;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: string, type = 'application/json; charset=utf-8'): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

export function isReady(broker: ServiceBroker, draining: boolean): boolean {
  if (draining || !broker.started) return false;
  const transit = broker.transit as { connected?: boolean } | undefined;
  return !transit || transit.connected === true;
}

export async function startOpsServer(broker: ServiceBroker, port: number | undefined): Promise<OpsServer | undefined> {
  if (port === undefined) return undefined;
  let draining = false;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET') return send(res, 405, JSON.stringify({ success: false, message: 'method not allowed' }));
    if (path === '/health/live') return send(res, 200, JSON.stringify({ success: true, data: { status: 'ok' } }));
    if (path === '/health') {
      const ready = isReady(broker, draining);
      const body = ready
        ? { success: true, data: { status: 'ok' } }
        : { success: false, message: draining ? 'shutting down' : 'starting' };
      return send(res, ready ? 200 : 503, JSON.stringify(body));
    }
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => send(res, 200, text, registry.contentType),
        () => send(res, 500, JSON.stringify({ success: false, message: 'internal server error' })),
      );
      return;
    }
    send(res, 404, JSON.stringify({ success: false, message: 'not found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, process.env.HOST || '0.0.0.0', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    startDraining: () => {
      draining = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
