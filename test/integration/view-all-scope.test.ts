/**
 * Issue 43, finding 3: `subscribers.view_all` widens subscriber reads and nothing else. A reseller
 * holding it reads no audit row, card batch or card redemption try outside its own tree, and none
 * of the operator's own (no reseller); its subscriber reads stay admin-wide.
 */
import { cardRedeemAttempts } from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let east: number;
let west: number;
let eastSub: number;
let westSub: number;
let viewAll: string;

async function mkReseller(name: string): Promise<number> {
  const res = await api.post('/api/resellers', { name, balance: 1000, currency: 'USD' }, { token: admin });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function mkSubscriber(username: string, resellerId: number, plan: number): Promise<number> {
  const res = await api.post(
    '/api/subscribers',
    { username, password: 'secret1', service_id: plan, reseller_id: resellerId },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function mkBatch(resellerId?: number): Promise<{ id: number; cardId: number }> {
  const res = await api.post('/api/cards/batches', { count: 2, value: 5, reseller_id: resellerId }, { token: admin });
  expect(res.status).toBe(201);
  const listed = await api.get(`/api/cards/batches/${res.body.data.id}/cards`, { token: admin });
  return { id: res.body.data.id, cardId: listed.body.data[0].id };
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  east = await mkReseller('East');
  west = await mkReseller('West');
  const plan = (await api.post('/api/services', { name: 'Home', price: 10, duration_days: 30 }, { token: admin })).body
    .data.id;
  for (const r of [east, west])
    await api.post(`/api/resellers/${r}/service-limits`, { service_id: plan, max_subscribers: 10 }, { token: admin });
  eastSub = await mkSubscriber('east1@isp', east, plan);
  westSub = await mkSubscriber('west1@isp', west, plan);
  viewAll = token('reseller', {
    resellerId: east,
    permissions: ['subscribers.view', 'subscribers.view_all', 'subscribers.refill_quota'],
  });
});
afterAll(() => t?.close());

describe('subscribers.view_all', () => {
  it('still reads subscribers of every tree', async () => {
    expect((await api.get(`/api/subscribers/${westSub}`, { token: viewAll })).status).toBe(200);
    const list = await api.get('/api/subscribers', { token: viewAll });
    expect(list.body.data.map((s: { id: number }) => s.id).sort()).toEqual([eastSub, westSub].sort());
  });

  it("reads no audit row of the operator's own or of another tree", async () => {
    expect((await api.put('/api/settings', { default_tax_rate: 7 }, { token: admin })).status).toBe(200);
    expect((await api.put(`/api/subscribers/${eastSub}`, { notes: 'east' }, { token: admin })).status).toBe(200);
    expect((await api.put(`/api/subscribers/${westSub}`, { notes: 'west' }, { token: admin })).status).toBe(200);

    const all = await api.get('/api/audit?limit=500', { token: admin });
    expect(all.body.data.some((r: { reseller_id: number | null }) => r.reseller_id === null)).toBe(true);

    const seen = await api.get('/api/audit?limit=500', { token: viewAll });
    expect(seen.status).toBe(200);
    const owners = new Set(seen.body.data.map((r: { reseller_id: number | null }) => r.reseller_id));
    expect([...owners]).toEqual([east]);
    expect(seen.body.pagination.total).toBe(seen.body.data.length);
    const settingsRows = await api.get('/api/audit?target_type=settings', { token: viewAll });
    expect(settingsRows.body).toMatchObject({ data: [], pagination: { total: 0 } });
  });

  it("neither lists nor reads the operator's own card batch, its cards, CSV or sheet, nor another tree's", async () => {
    const operators = await mkBatch();
    const wests = await mkBatch(west);
    const easts = await mkBatch(east);

    const listed = await api.get('/api/cards/batches', { token: viewAll });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((b: { id: number }) => b.id)).toEqual([easts.id]);
    expect(listed.body.pagination.total).toBe(1);

    for (const b of [operators, wests]) {
      for (const path of [
        `/api/cards/batches/${b.id}`,
        `/api/cards/batches/${b.id}/cards`,
        `/api/cards/batches/${b.id}/csv`,
        `/api/cards/batches/${b.id}/pdf`,
        `/api/cards/${b.cardId}`,
      ]) {
        const res = await api.get(path, { token: viewAll });
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 403,
          body: { success: false, message: 'not authorized' },
        });
      }
    }
    expect((await api.get(`/api/cards/batches/${easts.id}/csv`, { token: viewAll })).status).toBe(200);
    expect((await api.get(`/api/cards/batches/${operators.id}/csv`, { token: admin })).status).toBe(200);
  });

  it('reads no card redemption try of no subscriber or of another tree', async () => {
    await t.db.insert(cardRedeemAttempts).values([
      { subscriberId: null, address: '198.51.100.7', ok: false, reason: 'invalid card pin' },
      { subscriberId: westSub, address: '198.51.100.8', ok: false, reason: 'invalid card pin' },
      { subscriberId: eastSub, address: '198.51.100.9', ok: false, reason: 'invalid card pin' },
    ]);
    const seen = await api.get('/api/cards/attempts', { token: viewAll });
    expect(seen.status).toBe(200);
    expect(seen.body.data.map((a: { subscriber_id: number | null }) => a.subscriber_id)).toEqual([eastSub]);
    const all = await api.get('/api/cards/attempts', { token: admin });
    expect(all.body.data).toHaveLength(3);
  });
});
