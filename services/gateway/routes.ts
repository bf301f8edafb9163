import type { RouteDef } from '../../shared/http/route';

export const routes: RouteDef[] = [
  {
    method: 'GET',
    path: '/health',
    action: 'gateway.health',
    auth: 'public',
    access: 'none',
    summary: 'Liveness and readiness: 200 when the gateway and the database answer, else 503',
    tag: 'operations',
    rateLimit: 'none',
    errors: { 503: 'Still starting, or the database is unreachable' },
  },
  {
    method: 'GET',
    path: '/metrics',
    action: 'gateway.metrics',
    auth: 'public',
    access: 'none',
    summary: 'Prometheus metrics (process, HTTP request counts and latency by route and status)',
    tag: 'operations',
    rateLimit: 'none',
    produces: 'text',
  },
  {
    method: 'GET',
    path: '/api/openapi.json',
    action: 'gateway.openapi',
    auth: 'public',
    access: 'none',
    summary: 'This OpenAPI 3.1 document',
    tag: 'operations',
    rateLimit: 'none',
    produces: 'raw-json',
  },
];
