/**
 * The distributed mode: a gateway broker that runs no other service learns every route from the
 * units running in other brokers, meeting them only through the transporter. CI sets TRANSPORTER
 * to the machine's NATS; without it (a laptop with nothing installed) the same test runs over
 * Moleculer's in-process Fake transporter, and says so in its name (test/helpers/transporter.ts).
 */
import crypto from 'node:crypto';
import { ServiceBroker, type ActionSchema } from 'moleculer';
import { brokerOptions } from '../../moleculer.config';
import type { Config } from '../../shared/config';
import { routesOf, type RegisteredAction } from '../../services/gateway/route-registry';
import { createTestDatabase, adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { FAKE, suiteTransporter } from '../helpers/transporter';
import { waitFor } from '../helpers/wait';

const { transporter, label } = suiteTransporter(FAKE);
const namespace = `test-${crypto.randomBytes(4).toString('hex')}`;

let gateway: TestApp;
let backend: TestApp;
let network: TestApp;

/** The routes a broker's own services declare. */
function localRoutes(broker: ServiceBroker): string[] {
  const actions = broker.registry
    .getActionList({ onlyLocal: true, skipInternal: true })
    .map((item) => (item as unknown as { action: RegisteredAction }).action);
  return routesOf(actions).map((r) => `${r.method} ${r.path}`);
}

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  const env = (services: string) => ({ SERVICES: services, TRANSPORTER: transporter });
  backend = await startTestApp({ databaseUrl, env: env('billing,subscribers,notifier'), broker: { namespace } });
  network = await startTestApp({ databaseUrl, env: env('network-access'), broker: { namespace } });
  gateway = await startTestApp({ databaseUrl, env: env('gateway'), broker: { namespace } });
  await gateway.app.broker.waitForServices(['plans', 'auth', 'billing', 'nas'], 20_000);
}, 60_000);

afterAll(async () => {
  // Each app's stop releases its share of the process's database pool; the last one closes it.
  await gateway.close();
  await network.close();
  await backend.close();
});

describe(`over ${label}`, () => {
  it('lists in /api/openapi.json every route that the other brokers declare, with its service.action', async () => {
    const doc = (await client(gateway.baseUrl).get('/api/openapi.json')).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(
      ([path, ops]) =>
        Object.keys(ops).map((method) => `${method.toUpperCase()} ${path.replace(/\{([A-Za-z_]+)\}/g, ':$1')}`),
    );
    const declared = [
      ...localRoutes(backend.app.broker),
      ...localRoutes(network.app.broker),
      ...localRoutes(gateway.app.broker),
    ];
    expect(declared.length).toBeGreaterThan(60);
    expect(documented.sort()).toEqual([...new Set(declared)].sort());
    expect(doc.paths['/api/invoices/{id}/payment'].post.operationId).toBe('billing.pay');
    expect(doc.paths['/api/nas'].get.operationId).toBe('nas.list');
  });

  it('serves an HTTP request across brokers', async () => {
    expect(gateway.app.broker.getLocalService('plans')).toBeUndefined();
    expect(backend.app.broker.getLocalService('gateway')).toBeUndefined();
    const api = client(gateway.baseUrl);
    const created = await api.post(
      '/api/services',
      { name: 'Remote plan', price: 12.5, duration_days: 30 },
      { token: adminToken() },
    );
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Remote plan', price: 12.5 });
    const read = await api.get(`/api/services/${created.body.data.id}`, { token: adminToken() });
    expect(read.body.data.name).toBe('Remote plan');
    expect((await api.get('/api/nas', { token: adminToken() })).status).toBe(200);
  });

  it('keeps the error status and message of the remote service', async () => {
    const res = await client(gateway.baseUrl).get('/api/services/999999', { token: adminToken() });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, message: 'service not found' });
  });

  it('answers 503 on a learned route once no process runs its unit, 404 on a route never declared', async () => {
    await network.app.broker.stop();
    const api = client(gateway.baseUrl);
    await waitFor(
      'the gateway forgetting nas.list',
      () => !gateway.app.broker.registry.getActionList({ onlyAvailable: true }).some((a) => a.name === 'nas.list'),
      10_000,
    );
    const res = await api.get('/api/nas', { token: adminToken() });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ success: false, message: 'service unavailable' });
    expect((await api.get('/api/no-such-route', { token: adminToken() })).status).toBe(404);
  });

  it('still learns a new route while a unit has no process left', async () => {
    // network-access stopped above: its actions stay in the gateway's registry with no node.
    const probe = new ServiceBroker({
      ...brokerOptions({ transporter, logLevel: 'fatal' } as Config, { namespace, logger: false }),
    });
    probe.createService({
      name: 'probe',
      actions: {
        hello: {
          rest: 'GET /api/probe-after-leave',
          http: { auth: 'public', access: 'none', summary: 'A route declared after a unit left', tag: 'test' },
          handler: () => ({ hello: 'after the leave' }),
        } as ActionSchema,
      },
    });
    await probe.start();
    try {
      const api = client(gateway.baseUrl);
      await waitFor(
        'the gateway serving the new route',
        async () => (await api.get('/api/probe-after-leave')).status === 200,
        10_000,
      );
      expect((await api.get('/api/probe-after-leave')).body).toEqual({ success: true, hello: 'after the leave' });
    } finally {
      await probe.stop();
    }
  });
});
