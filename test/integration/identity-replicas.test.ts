/**
 * A change to a manager reaches every gateway replica at once: the managers service broadcasts
 * `manager.changed` and each gateway drops its cached row (services/gateway/identities.ts).
 * Two brokers in this process over the transporter (NATS in CI), on one database.
 */
import crypto from 'node:crypto';
import { adminToken, client, createTestDatabase, startTestApp, type TestApp } from '../helpers/app';
import { FAKE, suiteTransporter } from '../helpers/transporter';
import { waitFor } from '../helpers/wait';

const { transporter, label } = suiteTransporter(FAKE);
const namespace = `identity-${crypto.randomBytes(4).toString('hex')}`;
let backend: TestApp;
let replica: TestApp;

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  const env = (services: string) => ({ SERVICES: services, TRANSPORTER: transporter });
  backend = await startTestApp({ databaseUrl, env: env('gateway,subscribers'), broker: { namespace } });
  // The replica keeps rows for a minute: a refusal within the test can only come from the event.
  replica = await startTestApp({
    databaseUrl,
    env: { ...env('gateway'), IDENTITY_CACHE_MS: '60000' },
    broker: { namespace },
  });
  await replica.app.broker.waitForServices(['managers', 'settings'], 20_000);
  // And the other way: the backend must know the replica's gateway before it broadcasts to it.
  const listeners = () =>
    (backend.app.broker.registry as unknown as { events: { getAllEndpoints(event: string): { id: string }[] } }).events
      .getAllEndpoints('manager.changed')
      .map((endpoint) => endpoint.id);
  await waitFor(
    "the backend learning the replica's manager.changed listener",
    () => listeners().includes(replica.app.broker.nodeID),
    10_000,
  );
}, 60_000);

afterAll(async () => {
  // Each app's stop releases its share of the process's database pool; the last one closes it.
  await replica.close();
  await backend.close();
});

describe(`over ${label}`, () => {
  it('a second gateway refuses the token of a manager disabled through the first as soon as the event arrives', async () => {
    const created = await client(backend.baseUrl).post(
      '/api/managers',
      { username: 'replicated', password: 'long-enough-1', role: 'admin' },
      { token: adminToken() },
    );
    expect(created.status).toBe(201);
    const login = await client(backend.baseUrl).post('/api/auth/login', {
      username: 'replicated',
      password: 'long-enough-1',
    });
    const token = login.body.data.token;
    // The replica caches the row...
    expect((await client(replica.baseUrl).get('/api/settings', { token })).status).toBe(200);
    // ...and a change made through the other gateway evicts it there too.
    expect(
      (
        await client(backend.baseUrl).put(
          `/api/managers/${created.body.data.id}`,
          { active: false },
          { token: adminToken() },
        )
      ).status,
    ).toBe(200);
    // Refused once the event has arrived; before that the cached row answers 200, never anything else.
    const statuses = new Set<number>();
    await waitFor(
      'the replica refusing the token',
      async () => {
        const { status } = await client(replica.baseUrl).get('/api/settings', { token });
        statuses.add(status);
        return status === 401;
      },
      10_000,
    );
    expect([...statuses].filter((s) => s !== 200 && s !== 401)).toEqual([]);
  });
});
