import type { IncomingMessage, ServerResponse } from 'node:http';
import client from 'prom-client';
import { registry } from '../../shared/metrics';

export { registry };

const latency = new client.Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

/**
 * The histogram's count per label set, read when scraped: recording each request in a counter
 * beside the histogram hashed its labels a second time (about 0.5 µs of 1.1 µs here).
 */
new client.Counter({
  name: 'http_requests_total',
  help: 'HTTP requests by route template, method and status',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const v of (await latency.get()).values) {
      if (v.metricName === 'http_request_duration_seconds_count')
        this.inc(v.labels as Record<'route' | 'method' | 'status', string>, v.value);
    }
  },
});

/** Every gateway's count of requests in flight in this process (tests run several), read when scraped. */
const inFlightReaders = new Set<() => number>();

new client.Gauge({
  name: 'http_requests_in_flight',
  help: 'HTTP requests received and not yet answered, the scrape included',
  registers: [registry],
  collect() {
    let n = 0;
    for (const read of inFlightReaders) n += read();
    this.set(n);
  },
});

/** Reports `read()` in http_requests_in_flight until the returned function is called. */
export function reportInFlight(read: () => number): () => void {
  inFlightReaders.add(read);
  return () => inFlightReaders.delete(read);
}

/** The gateway marks each request with its route template so labels stay low-cardinality. */
export interface RoutedRequest extends IncomingMessage {
  routeTemplate?: string;
}

export function metricsMiddleware(req: RoutedRequest, res: ServerResponse, next: () => void): void {
  const start = process.hrtime.bigint();
  res.once('finish', () => {
    latency.observe(
      { route: req.routeTemplate ?? 'unmatched', method: req.method ?? '', status: String(res.statusCode) },
      Number(process.hrtime.bigint() - start) / 1e9,
    );
  });
  next();
}
