import type { IncomingMessage, ServerResponse } from 'node:http';
import client from 'prom-client';
import { registry } from '../../shared/metrics';

export { registry };

const requests = new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
});

const latency = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

/** The gateway marks each request with its route template so labels stay low-cardinality. */
export interface RoutedRequest extends IncomingMessage {
  routeTemplate?: string;
}

export function metricsMiddleware(req: RoutedRequest, res: ServerResponse, next: () => void): void {
  const end = process.hrtime.bigint();
  res.once('finish', () => {
    const labels = { route: req.routeTemplate ?? 'unmatched', method: req.method ?? '', status: String(res.statusCode) };
    requests.inc(labels);
    latency.observe(labels, Number(process.hrtime.bigint() - end) / 1e9);
  });
  next();
}
