/**
 * The distributed mode: the gateway and the subscribers unit in two brokers that only meet
 * through the transporter. CI sets TRANSPORTER to the machine's NATS; without it (a laptop with
 * nothing installed) the same test runs over Moleculer's in-process Fake transporter.
 */
import crypto from 'node:crypto';
import { createTestDatabase, adminToken, client, startTestApp, type TestApp } from '../helpers/app';

const transporter = process.env.TRANSPORTER || 'Fake';
const namespace = `test-${crypto.randomBytes(4).toString('hex')}`;

let gateway: TestApp;
let backend: TestApp;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  backend = await startTestApp({ databaseUrl, env: { SERVICES: 'subscribers', TRANSPORTER: transporter }, broker: { namespace } });
  gateway = await startTestApp({ databaseUrl, env: { SERVICES: 'gateway', TRANSPORTER: transporter }, broker: { namespace } });
  await gateway.app.broker.waitForServices(['plans', 'auth'], 20_000);
}, 60_000);

afterAll(async () => {
  await gateway.app.broker.stop();
  await backend.close();
  await gateway.pool.end();
});

it(`serves an HTTP request across two brokers over ${transporter.startsWith('nats') ? 'NATS' : transporter}`, async () => {
  expect(gateway.app.broker.getLocalService('plans')).toBeUndefined();
  expect(backend.app.broker.getLocalService('gateway')).toBeUndefined();
  const api = client(gateway.baseUrl);
  const created = await api.post('/api/services', { name: 'Remote plan', price: 12.5, duration_days: 30 }, { token: adminToken() });
  expect(created.status).toBe(201);
  expect(created.body.data).toMatchObject({ name: 'Remote plan', price: 12.5 });
  const read = await api.get(`/api/services/${created.body.data.id}`, { token: adminToken() });
  expect(read.body.data.name).toBe('Remote plan');
});

it('keeps the error status and message of the remote service', async () => {
  const res = await client(gateway.baseUrl).get('/api/services/999999', { token: adminToken() });
  expect(res.status).toBe(404);
  expect(res.body).toEqual({ success: false, message: 'service not found' });
});

it('answers 503 for a unit that no process runs', async () => {
  const res = await client(gateway.baseUrl).get('/api/nas', { token: adminToken() });
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ success: false, message: 'service unavailable' });
});
