/**
 * Issue 43, finding 4: `PUT /api/subscribers/:id` with `subscribers.edit` does not do what the named
 * actions guard. A changed expiry_date also needs subscribers.add_days, a changed service_id
 * subscribers.change_service, a changed price or override_price subscribers.set_price; values sent
 * unchanged (the console sends the whole form) need nothing more. Callers: a restricted API key and
 * a limited manager signed in with a password.
 */
import fs from 'node:fs';
import path from 'node:path';
import { count, eq, inArray } from 'drizzle-orm';
import { invoices, managers, subscribers, transactions } from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let reseller: number;
let basic: number;
let premium: number;
let seq = 0;

const plusDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const row = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const ledgerRows = async () => Number((await t.db.select({ n: count() }).from(transactions))[0].n);
const invoiceRows = async () => Number((await t.db.select({ n: count() }).from(invoices))[0].n);

async function mkSub(): Promise<number> {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    {
      username: `fields${seq}@isp`,
      password: 'secret1',
      service_id: basic,
      reseller_id: reseller,
      expiry_date: plusDays(10),
    },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function apiKey(permissions: string[]): Promise<string> {
  const res = await api.post('/api/api-keys', { name: `key${++seq}`, permissions }, { token: admin });
  expect(res.status).toBe(201);
  return res.body.data.key;
}

async function limitedManager(permissions: string[]): Promise<string> {
  const username = `clerk${++seq}`;
  const made = await api.post(
    '/api/managers',
    { username, password: 'long-enough-1', role: 'user', reseller_id: reseller, permissions },
    { token: admin },
  );
  expect(made.status).toBe(201);
  const login = await api.post('/api/auth/login', { username, password: 'long-enough-1' });
  expect(login.status).toBe(200);
  return login.body.data.token;
}

const EDIT_ONLY = ['subscribers.view', 'subscribers.edit'];

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (await api.post('/api/resellers', { name: 'Fields', balance: 1000, currency: 'USD' }, { token: admin }))
    .body.data.id;
  const plan = async (name: string, price: number) =>
    (await api.post('/api/services', { name, price, duration_days: 30 }, { token: admin })).body.data.id as number;
  basic = await plan('basic', 10);
  premium = await plan('premium', 30);
  for (const p of [basic, premium])
    await api.post(
      `/api/resellers/${reseller}/service-limits`,
      { service_id: p, max_subscribers: 100 },
      { token: admin },
    );
});
afterAll(() => t?.close());

const callers: [string, () => Promise<string>][] = [
  ['a restricted API key', () => apiKey(EDIT_ONLY)],
  ['a limited manager', () => limitedManager(EDIT_ONLY)],
];

describe.each(callers)('PUT /api/subscribers/:id by %s with subscribers.view and subscribers.edit', (_, mkCaller) => {
  let caller: string;
  beforeAll(async () => {
    caller = await mkCaller();
  });

  async function refused(id: number, body: Record<string, unknown>, permission: string) {
    const before = await row(id);
    const [ledger, invoiced] = [await ledgerRows(), await invoiceRows()];
    const res = await api.put(`/api/subscribers/${id}`, { full_name: 'Changed', ...body }, { token: caller });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 403,
      body: { success: false, message: `permission ${permission} required` },
    });
    expect(await row(id)).toEqual(before);
    expect([await ledgerRows(), await invoiceRows()]).toEqual([ledger, invoiced]);
  }

  it('cannot move expiry_date without subscribers.add_days: 403 and the row unchanged', async () => {
    await refused(await mkSub(), { expiry_date: plusDays(4 * 365) }, 'subscribers.add_days');
  });

  it('cannot change service_id without subscribers.change_service: 403 and the row unchanged', async () => {
    await refused(await mkSub(), { service_id: premium }, 'subscribers.change_service');
  });

  it('cannot set price or override_price without subscribers.set_price: 403 and the row unchanged', async () => {
    const id = await mkSub();
    await refused(id, { price: 0, override_price: true }, 'subscribers.set_price');
    await refused(id, { price: 0 }, 'subscribers.set_price');
    await refused(id, { override_price: true }, 'subscribers.set_price');
  });

  it('may send those fields unchanged, as the console does with the whole form', async () => {
    const id = await mkSub();
    expect((await api.put(`/api/subscribers/${id}`, { price: 12.5 }, { token: admin })).status).toBe(200);
    const before = await row(id);
    const res = await api.put(
      `/api/subscribers/${id}`,
      {
        full_name: 'Same Fields',
        expiry_date: before.expiryDate,
        service_id: before.serviceId,
        price: 12.5,
        override_price: before.overridePrice,
      },
      { token: caller },
    );
    expect(res.status).toBe(200);
    expect(await row(id)).toMatchObject({
      fullName: 'Same Fields',
      expiryDate: before.expiryDate,
      serviceId: basic,
      price: before.price,
      overridePrice: before.overridePrice,
    });
  });
});

describe('PUT /api/subscribers/:id with the governing permissions', () => {
  it('moves expiry, plan and price for a caller that holds add_days, change_service and set_price', async () => {
    const key = await apiKey([
      ...EDIT_ONLY,
      'subscribers.add_days',
      'subscribers.change_service',
      'subscribers.set_price',
    ]);
    const id = await mkSub();
    const body = { expiry_date: plusDays(40), service_id: premium, price: 0, override_price: true };
    const res = await api.put(`/api/subscribers/${id}`, body, { token: key });
    expect(res.status).toBe(200);
    expect(await row(id)).toMatchObject({
      expiryDate: plusDays(40),
      serviceId: premium,
      price: 0,
      overridePrice: true,
    });
  });

  it('refuses the whole body when one field lacks its permission: nothing of it is written', async () => {
    const key = await limitedManager([...EDIT_ONLY, 'subscribers.add_days']);
    const id = await mkSub();
    const before = await row(id);
    const res = await api.put(
      `/api/subscribers/${id}`,
      { expiry_date: plusDays(90), price: 0, override_price: true },
      { token: key },
    );
    expect(res.body).toEqual({ success: false, message: 'permission subscribers.set_price required' });
    expect(await row(id)).toEqual(before);
  });

  it('the catalogue offers subscribers.set_price and the OpenAPI PUT names each field permission', async () => {
    expect((await api.get('/api/permissions', { token: admin })).body.data).toContain('subscribers.set_price');
    const doc = (await api.get('/api/openapi.json')).body;
    const put = doc.paths['/api/subscribers/{id}'].put;
    for (const rule of [
      'expiry_date: subscribers.add_days',
      'service_id: subscribers.change_service',
      'price or override_price: subscribers.set_price',
    ])
      expect(put.description).toContain(rule);
    expect(put.responses['403'].description).toContain('permission <name> required');
  });

  it('the bulk set_price needs subscribers.set_price: without it each id fails and keeps its price', async () => {
    const limited = token('reseller', { resellerId: reseller, permissions: EDIT_ONLY });
    const ids = [await mkSub(), await mkSub()];
    const before = await Promise.all(ids.map(row));
    const res = await api.post(
      '/api/subscribers/bulk-action',
      { ids, action: 'set_price', payload: { price: 0, override_price: true } },
      { token: limited },
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      succeeded: [],
      failed: ids.map((id) => ({ id, reason: 'permission subscribers.set_price required' })),
    });
    expect(await Promise.all(ids.map(row))).toEqual(before);
    const allowed = token('reseller', { resellerId: reseller, permissions: [...EDIT_ONLY, 'subscribers.set_price'] });
    const done = await api.post(
      '/api/subscribers/bulk-action',
      { ids, action: 'set_price', payload: { price: 7, override_price: true } },
      { token: allowed },
    );
    expect(done.body.data).toEqual({ succeeded: ids, failed: [] });
    for (const id of ids) expect(await row(id)).toMatchObject({ price: 700, overridePrice: true });
  });

  it('migration 0042 keeps price setting for reseller accounts that had subscribers.edit, not for staff', async () => {
    const mk = async (username: string, role: 'reseller' | 'user', permissions: string[]) =>
      (
        await t.db
          .insert(managers)
          .values({ username, passwordHash: '!', role, resellerId: reseller, permissions })
          .returning({ id: managers.id })
      )[0].id;
    const owner = await mk('owner-edit', 'reseller', EDIT_ONLY);
    const viewer = await mk('owner-view', 'reseller', ['subscribers.view']);
    const staff = await mk('staff-edit', 'user', EDIT_ONLY);
    const sql = fs.readFileSync(
      path.join(__dirname, '../../shared/db/migrations/0042_set_price_permission.sql'),
      'utf8',
    );
    await t.pool.query(sql);
    await t.pool.query(sql);
    const rows = await t.db
      .select({ id: managers.id, permissions: managers.permissions })
      .from(managers)
      .where(inArray(managers.id, [owner, viewer, staff]));
    expect(Object.fromEntries(rows.map((r) => [r.id, r.permissions]))).toEqual({
      [owner]: [...EDIT_ONLY, 'subscribers.set_price'],
      [viewer]: ['subscribers.view'],
      [staff]: EDIT_ONLY,
    });
  });
});
