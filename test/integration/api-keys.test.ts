/**
 * API keys through HTTP (docs/security.md): shown once and stored hashed, told from a JWT by their
 * prefix, never more than their manager (an admin's key with subscribers.view reads subscribers
 * and nothing else), scope, expiry, allow-list, per-key rate limit, last use, and revocation, a
 * manager's disablement, deletion or lost permission taking effect at once on a second gateway
 * that otherwise keeps rows for a minute. Two brokers in this process over the transporter.
 */
import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { apiKeys, auditLog } from '../../shared/db/schema';
import { adminToken, client, createTestDatabase, startTestApp, type TestApp } from '../helpers/app';
import { FAKE, suiteTransporter } from '../helpers/transporter';
import { waitFor } from '../helpers/wait';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

const { transporter, label } = suiteTransporter(FAKE);
const namespace = `apikeys-${crypto.randomBytes(4).toString('hex')}`;
let backend: TestApp;
let replica: TestApp;
let api: ReturnType<typeof client>;
let east: { id: number };
let west: { id: number };
let eastChild: { id: number };

beforeAll(async () => {
  const databaseUrl = await createTestDatabase();
  const env = (services: string) => ({
    SERVICES: services,
    TRANSPORTER: transporter,
    API_KEY_RATE_LIMIT_PER_MIN: '20',
  });
  backend = await startTestApp({ databaseUrl, env: env('gateway,subscribers'), broker: { namespace } });
  // The replica keeps rows for a minute: a refusal within the test can only come from an event.
  replica = await startTestApp({
    databaseUrl,
    env: { ...env('gateway'), IDENTITY_CACHE_MS: '60000' },
    broker: { namespace },
  });
  await replica.app.broker.waitForServices(['managers', 'apiKeys', 'subscribers'], 20_000);
  const listeners = (event: string) =>
    (backend.app.broker.registry as unknown as { events: { getAllEndpoints(event: string): { id: string }[] } }).events
      .getAllEndpoints(event)
      .map((endpoint) => endpoint.id);
  await waitFor(
    "the backend learning the replica's listeners",
    () =>
      listeners('apikey.changed').includes(replica.app.broker.nodeID) &&
      listeners('manager.changed').includes(replica.app.broker.nodeID),
    10_000,
  );
  api = client(backend.baseUrl);
  east = await seedReseller(backend.db, { name: 'East' });
  west = await seedReseller(backend.db, { name: 'West' });
  eastChild = await seedReseller(backend.db, { name: 'East child', parentId: east.id });
  const plan = await seedPlan(backend.db, { price: 10 });
  await seedSubscriber(backend.db, { resellerId: east.id, serviceId: plan.id, username: 'east1' });
  await seedSubscriber(backend.db, { resellerId: eastChild.id, serviceId: plan.id, username: 'child1' });
  await seedSubscriber(backend.db, { resellerId: west.id, serviceId: plan.id, username: 'west1' });
}, 60_000);

afterAll(async () => {
  await replica?.close();
  await backend?.close();
});

async function createKey(body: Record<string, unknown>, token = adminToken()) {
  const res = await api.post('/api/api-keys', body, { token });
  expect(res.status).toBe(201);
  return res.body.data as { id: number; key: string; prefix: string; expires_at: string | null };
}

async function manager(username: string, body: Record<string, unknown>): Promise<{ id: number; token: string }> {
  const created = await api.post(
    '/api/managers',
    { username, password: 'long-enough-1', ...body },
    { token: adminToken() },
  );
  expect(created.status).toBe(201);
  const login = await api.post('/api/auth/login', { username, password: 'long-enough-1' });
  return { id: created.body.data.id, token: login.body.data.token };
}

const usernames = (res: { body: { data: { username: string }[] } }) => res.body.data.map((s) => s.username).sort();

describe(`API keys over ${label}`, () => {
  it('are shown once, stored hashed, and told from a JWT by their prefix', async () => {
    const created = await api.post(
      '/api/api-keys',
      { name: 'reader', permissions: ['subscribers.view'] },
      { token: adminToken() },
    );
    expect(created.status).toBe(201);
    const { key, prefix, id } = created.body.data;
    expect(key).toMatch(/^isk_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(prefix)).toBe(true);
    const [row] = await backend.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    expect(row.secretHash).toBe(crypto.createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(key.slice(prefix.length + 1));
    const listed = await api.get('/api/api-keys', { token: adminToken() });
    expect(listed.status).toBe(200);
    const mine = listed.body.data.find((k: { id: number }) => k.id === id);
    expect(mine.prefix).toBe(prefix);
    expect(mine).not.toHaveProperty('key');
    expect(JSON.stringify(listed.body)).not.toContain(key);
    const [audit] = await backend.db.select().from(auditLog).where(eq(auditLog.entity, 'api_key'));
    expect(audit).toMatchObject({ action: 'api_key.create', entityId: id, managerId: 1 });
  });

  it("an admin's key with subscribers.view reads subscribers and nothing else", async () => {
    const { key, id } = await createKey({ name: 'view only', permissions: ['subscribers.view'] });
    const list = await api.get('/api/subscribers', { token: key });
    expect(list.status).toBe(200);
    expect(usernames(list)).toEqual(['child1', 'east1', 'west1']);
    expect((await api.get('/api/settings', { token: key })).status).toBe(403);
    expect((await api.get('/api/managers', { token: key })).status).toBe(403);
    const someone = list.body.data[0].id;
    const remove = await api.del(`/api/subscribers/${someone}`, { token: key });
    expect(remove.status).toBe(403);
    expect(remove.body.message).toBe('permission subscribers.delete required');
    // Keys manage no keys.
    const mint = await api.post('/api/api-keys', { name: 'child', permissions: ['subscribers.view'] }, { token: key });
    expect(mint.status).toBe(403);
    expect(mint.body.message).toBe('an api key cannot manage api keys');
    // Last use recorded.
    const [row] = await backend.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    expect(row.lastUsedAt).not.toBeNull();
    expect(row.lastUsedIp).toMatch(/127\.0\.0\.1/);
  });

  it('a key cannot sign out (403, nothing revoked): it is revoked on its own route', async () => {
    const { key, id } = await createKey({ name: 'signs out', full: true });
    const out = await api.post('/api/auth/logout', {}, { token: key });
    expect([out.status, out.body]).toEqual([403, { success: false, message: 'an api key cannot sign out' }]);
    expect((await api.get('/api/subscribers', { token: key })).status).toBe(200);
    const [row] = await backend.db.select().from(apiKeys).where(eq(apiKeys.id, id));
    expect(row.revokedAt).toBeNull();
  });

  it('a full admin key acts as the admin', async () => {
    const { key } = await createKey({ name: 'full', full: true });
    expect((await api.get('/api/settings', { token: key })).status).toBe(200);
  });

  it("a reseller's key, its own or made for it by an admin: never more than the reseller holds, within its tree, narrower on request", async () => {
    const r = await manager('east-admin', {
      role: 'reseller',
      reseller_id: east.id,
      permissions: ['subscribers.view'],
    });
    const over = await api.post(
      '/api/api-keys',
      { name: 'more', permissions: ['subscribers.create'] },
      { token: r.token },
    );
    expect(over.status).toBe(400);
    expect(over.body.message).toBe("the key's manager does not hold subscribers.create");
    const outside = await api.post(
      '/api/api-keys',
      { name: 'west', permissions: ['subscribers.view'], reseller_id: west.id },
      { token: r.token },
    );
    expect(outside.status).toBe(403);
    const other = await api.post(
      '/api/api-keys',
      { name: 'for admin', manager_id: 1, permissions: [] },
      { token: r.token },
    );
    expect(other.status).toBe(403);
    const tree = await createKey({ name: 'tree', permissions: ['subscribers.view'] }, r.token);
    expect(usernames(await api.get('/api/subscribers', { token: tree.key }))).toEqual(['child1', 'east1']);
    const child = await createKey(
      { name: 'child', permissions: ['subscribers.view'], reseller_id: eastChild.id },
      r.token,
    );
    expect(usernames(await api.get('/api/subscribers', { token: child.key }))).toEqual(['child1']);
    // An admin may make a key for another manager: it is that manager's, within its tree.
    const given = await createKey({ name: 'given', manager_id: r.id, permissions: ['subscribers.view'] });
    expect(usernames(await api.get('/api/subscribers', { token: given.key }))).toEqual(['child1', 'east1']);
    // The reseller sees its own keys only; an admin sees them all.
    const mine = await api.get('/api/api-keys', { token: r.token });
    expect(mine.body.data.map((k: { name: string }) => k.name).sort()).toEqual(['child', 'given', 'tree']);
    expect((await api.del(`/api/api-keys/${1}`, { token: r.token })).status).toBe(404);
  });

  it('expiry and the address allow-list', async () => {
    const soon = await createKey({
      name: 'soon',
      permissions: ['subscribers.view'],
      // Room for the create and the first request on a loaded machine; the wait below is to its expiry.
      expires_at: new Date(Date.now() + 5000).toISOString(),
    });
    expect((await api.get('/api/subscribers', { token: soon.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(soon.expires_at!) - Date.now()) + 1100));
    const expired = await api.get('/api/subscribers', { token: soon.key });
    expect(expired.status).toBe(401);
    expect(expired.body.message).toBe('api key expired');
    const past = await api.post(
      '/api/api-keys',
      { name: 'past', expires_at: '2020-01-01T00:00:00Z' },
      { token: adminToken() },
    );
    expect(past.status).toBe(400);

    const lan = await createKey({ name: 'lan', permissions: ['subscribers.view'], allowed_ips: ['10.0.0.0/8'] });
    const refused = await api.get('/api/subscribers', { token: lan.key });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('this api key is not allowed from this address');
    const local = await createKey({ name: 'local', permissions: ['subscribers.view'], allowed_ips: ['127.0.0.1'] });
    expect((await api.get('/api/subscribers', { token: local.key })).status).toBe(200);
    const bad = await api.post('/api/api-keys', { name: 'bad', allowed_ips: ['10.0.0.0/33'] }, { token: adminToken() });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('allowed_ips[0] must be an IP address or CIDR block');
  });

  it('a wrong secret with a real lookup, and a made-up key, are 401', async () => {
    const { key } = await createKey({ name: 'tamper', permissions: ['subscribers.view'] });
    const tampered = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    expect((await api.get('/api/subscribers', { token: tampered })).status).toBe(401);
    expect((await api.get('/api/subscribers', { token: 'isk_nothing' })).status).toBe(401);
  });

  it('rate limits apply per key', async () => {
    const { key } = await createKey({ name: 'busy', permissions: ['subscribers.view'] });
    const other = await createKey({ name: 'quiet', permissions: ['subscribers.view'] });
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await api.get('/api/subscribers', { token: key })).status);
    expect(statuses.slice(0, 20).every((s) => s === 200)).toBe(true);
    expect(statuses[20]).toBe(429);
    const over = await api.get('/api/subscribers', { token: key });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await api.get('/api/subscribers', { token: other.key })).status).toBe(200);
  });

  describe('take effect at once on the second gateway', () => {
    async function refusedOnReplica(key: string, status: number): Promise<void> {
      const seen = new Set<number>();
      await waitFor(
        'the replica refusing the key',
        async () => {
          const res = await client(replica.baseUrl).get('/api/subscribers', { token: key });
          seen.add(res.status);
          return res.status === status;
        },
        5_000,
      );
      expect([...seen].filter((s) => s !== 200 && s !== status)).toEqual([]);
    }

    it('revocation', async () => {
      const { key, id } = await createKey({ name: 'revoked', permissions: ['subscribers.view'] });
      expect((await client(replica.baseUrl).get('/api/subscribers', { token: key })).status).toBe(200);
      const revoked = await api.del(`/api/api-keys/${id}`, { token: adminToken() });
      expect(revoked.status).toBe(200);
      expect(revoked.body.data.revoked_at).not.toBeNull();
      await refusedOnReplica(key, 401);
      expect((await api.get('/api/subscribers', { token: key })).body.message).toBe('api key revoked');
    });

    it("the manager's loss of a permission, disablement and deletion", async () => {
      const m = await manager('staff', { role: 'user', permissions: ['subscribers.view', 'subscribers.create'] });
      const a = await createKey({ name: 'a', permissions: ['subscribers.view'] }, m.token);
      const b = await createKey({ name: 'b', permissions: ['subscribers.view'] }, m.token);
      expect((await client(replica.baseUrl).get('/api/subscribers', { token: a.key })).status).toBe(200);
      await api.put(`/api/managers/${m.id}`, { permissions: ['subscribers.create'] }, { token: adminToken() });
      await refusedOnReplica(a.key, 403);
      await api.put(
        `/api/managers/${m.id}`,
        { permissions: ['subscribers.view'], active: false },
        { token: adminToken() },
      );
      await refusedOnReplica(b.key, 401);
      expect((await client(replica.baseUrl).get('/api/subscribers', { token: b.key })).body.message).toBe(
        'manager is disabled',
      );
      expect((await api.del(`/api/managers/${m.id}`, { token: adminToken() })).status).toBe(200);
      await refusedOnReplica(a.key, 401);
    });
  });
});
