import { sql } from 'drizzle-orm';
import { routesOf, type RegisteredAction } from '../../services/gateway/route-registry';
import { services } from '../../shared/db/schema';
import {
  adminToken,
  client,
  createTestDatabase,
  startTestApp,
  testEnv,
  TEST_METRICS_TOKEN,
  type TestApp,
} from '../helpers/app';
import { login, startServer, stopServer } from '../helpers/server-process';

let t: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
});
afterAll(() => t.close());

describe('envelope and error rules', () => {
  it('unknown route: 404 envelope', async () => {
    for (const path of ['/api/nope', '/nowhere', '/api/services/1/unknown']) {
      const res = await api.get(path, { token: adminToken() });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, message: 'not found' });
    }
  });

  it('malformed JSON: 400 and nothing written', async () => {
    const res = await api.post('/api/services', undefined, { token: adminToken(), rawBody: '{"name": "x", ' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: 'malformed JSON body' });
    expect(await t.db.select().from(services)).toHaveLength(0);
  });

  it('body over 1 MB: 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1_100_000), price: 1, duration_days: 30 });
    const res = await api.post('/api/services', undefined, { token: adminToken(), rawBody: big });
    expect(res.status).toBe(413);
    expect(res.body.success).toBe(false);
  });

  it('a JSON body that is not an object: 400', async () => {
    const res = await api.post('/api/services', undefined, { token: adminToken(), rawBody: '[1,2]' });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('body must be a JSON object');
  });

  it('a path id that is not an integer: 400 naming it', async () => {
    for (const id of ['abc', '1.5', '-3', '0', '99999999999']) {
      const res = await api.get(`/api/services/${id}`, { token: adminToken() });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^id /);
    }
  });

  it('validation failures name the field', async () => {
    const cases: [unknown, string][] = [
      [{ price: 10, duration_days: 30 }, 'name is required'],
      [{ name: 'p', price: 'ten', duration_days: 30 }, 'price must be number'],
      [{ name: 'p', price: -1, duration_days: 30 }, 'price must be >= 0'],
      [{ name: 'p', price: 10, duration_days: 0 }, 'duration_days must be >= 1'],
      [{ name: 'p', price: 10, duration_days: 30, currency: 'usd' }, 'currency must match pattern "^[A-Z]{3}$"'],
      [
        { name: 'p', price: 10, duration_days: 30, fup_tiers: [{ level: 5, threshold_gb: 1, rate_limit: '1M/1M' }] },
        'fup_tiers[0].level must be <= 3',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await api.post('/api/services', body, { token: adminToken() });
      expect({ status: res.status, message: res.body.message }).toEqual({ status: 400, message });
    }
    expect(await t.db.select().from(services)).toHaveLength(0);
  });

  it('pagination: page >= 1 and limit 1..500, else 400', async () => {
    for (const q of ['page=0', 'limit=0', 'limit=501', 'page=x']) {
      const res = await api.get(`/api/services?${q}`, { token: adminToken() });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^(page|limit) /);
    }
    const ok = await api.get('/api/services?page=2&limit=500', { token: adminToken() });
    expect(ok.status).toBe(200);
    expect(ok.body.pagination).toEqual({ page: 2, limit: 500, total: 0 });
  });
});

describe('operations endpoints', () => {
  it('GET /health is 200 without auth while the database answers', async () => {
    const res = await api.get('/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: { status: 'ok' } });
  });

  it('GET /metrics serves Prometheus text with HTTP counts by route and status', async () => {
    await api.get('/api/services', { token: adminToken() });
    const res = await api.get('/metrics', { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/process_cpu_user_seconds_total/);
    expect(res.text).toMatch(/http_requests_total\{route="\/api\/services",method="GET",status="200"\} \d+/);
    expect(res.text).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",route="\/api\/services",method="GET",status="200"\}/,
    );
    expect(res.text).toMatch(/http_requests_total\{route="unmatched",method="GET",status="404"\}/);
    // The scrape itself is the one request in flight.
    expect(res.text).toMatch(/^http_requests_in_flight 1$/m);
  });

  it('GET /api/openapi.json documents every registered route with its access and errors', async () => {
    const res = await api.get('/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    const routes = routesOf(
      t.app.broker.registry
        .getActionList({ skipInternal: true })
        .map((i) => (i as unknown as { action: RegisteredAction }).action),
    );
    expect(routes.length).toBeGreaterThan(20);
    for (const r of routes) {
      const op = doc.paths[r.path.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[r.method.toLowerCase()];
      expect({ route: `${r.method} ${r.path}`, documented: !!op }).toEqual({
        route: `${r.method} ${r.path}`,
        documented: true,
      });
      expect(op['x-permission']).toBe(r.access);
      expect(Object.keys(op.responses)).toContain(String(r.success ?? 200));
      if (r.auth === 'jwt') expect(Object.keys(op.responses)).toContain('401');
      if (r.body) expect(op.requestBody.content['application/json'].schema).toEqual(r.body);
    }
  });
});

/**
 * Apps with another configuration run as their own server process: services share one database
 * pool and one config per process (shared/db/client.ts), as they do in production.
 */
async function startConfigured(env: Record<string, string>, databaseUrl?: string) {
  const url = databaseUrl ?? (await createTestDatabase());
  const { PORT, HOST, ...rest } = testEnv(url, env) as Record<string, string>;
  const server = await startServer({ env: rest });
  return { server, url, api: client(server.base), token: await login(server.base) };
}

describe('rate limits', () => {
  it('beyond RATE_LIMIT_PER_MIN: 429 envelope with Retry-After', async () => {
    const limited = await startConfigured({ RATE_LIMIT_PER_MIN: '4' });
    try {
      // The login was the first request of the window.
      for (let i = 0; i < 3; i++)
        expect((await limited.api.get('/api/services', { token: limited.token })).status).toBe(200);
      const res = await limited.api.get('/api/services', { token: limited.token });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ success: false, message: 'too many requests' });
      const retry = Number(res.headers.get('retry-after'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      // Probes are not rate limited.
      expect((await limited.api.get('/health')).status).toBe(200);
    } finally {
      await stopServer(limited.server);
    }
  });

  it('the public invoice routes have their own, lower limit', async () => {
    const limited = await startConfigured({ PUBLIC_RATE_LIMIT_PER_MIN: '2' });
    try {
      const l = limited.api;
      // Unknown invoice: 404, but each request still counts against the public window.
      expect((await l.get('/api/invoices/public/1?token=x')).status).toBe(404);
      expect((await l.get('/api/invoices/public/1/pdf?token=x')).status).toBe(404);
      const res = await l.get('/api/invoices/public/1?token=x');
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ success: false, message: 'too many requests' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // The authenticated surface keeps its own budget.
      expect((await l.get('/api/services', { token: limited.token })).status).toBe(200);
    } finally {
      await stopServer(limited.server);
    }
  });
});

describe('health when the database is gone', () => {
  it('GET /health answers 503', async () => {
    const doomed = await startConfigured({});
    try {
      expect((await doomed.api.get('/health')).status).toBe(200);
      const name = new URL(doomed.url).pathname.slice(1);
      await t.db.execute(sql.raw(`drop database "${name}" with (force)`));
      const res = await doomed.api.get('/health');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ success: false, message: 'database unreachable' });
    } finally {
      await stopServer(doomed.server);
    }
  });
});
