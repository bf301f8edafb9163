/** Invoices through the gateway: create, read, list, edit, delete, validation and scope. */
import { count, eq, sql } from 'drizzle-orm';
import { todayUtc, addDays } from '../../shared/billing';
import { invoiceItems, invoices, resellers, subscribers } from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let A: typeof resellers.$inferSelect;
let A1: typeof resellers.$inferSelect;
let B: typeof resellers.$inferSelect;
let sA: typeof subscribers.$inferSelect;
let sA1: typeof subscribers.$inferSelect;
let sB: typeof subscribers.$inferSelect;
let resA: string;
let resB: string;
let userA: string;

const invoiceCount = async () => (await t.db.select({ n: count() }).from(invoices))[0].n;
const itemCount = async () => (await t.db.select({ n: count() }).from(invoiceItems))[0].n;
const line = (over: Record<string, unknown> = {}) => ({ description: 'Monthly 20M', qty: 1, unit_price: 30, ...over });

async function create(body: Record<string, unknown>, tok = admin) {
  const res = await api.post('/api/invoices', body, { token: tok });
  expect(res.status).toBe(201);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  A = await seedReseller(t.db, { name: 'A', commissionRate: '12.5' });
  A1 = await seedReseller(t.db, { name: 'A1', parentId: A.id, commissionRate: '5' });
  B = await seedReseller(t.db, { name: 'B' });
  const plan = await seedPlan(t.db, { price: 3000 });
  sA = await seedSubscriber(t.db, {
    resellerId: A.id,
    serviceId: plan.id,
    username: 'alice@north',
    fullName: 'Alice Archer',
  });
  sA1 = await seedSubscriber(t.db, {
    resellerId: A1.id,
    serviceId: plan.id,
    username: 'bob@north',
    fullName: 'Bob Baker',
  });
  sB = await seedSubscriber(t.db, {
    resellerId: B.id,
    serviceId: plan.id,
    username: 'carol@south',
    fullName: 'Carol Clark',
  });
  resA = token('reseller', { managerId: 10, resellerId: A.id });
  resB = token('reseller', { managerId: 11, resellerId: B.id });
  userA = token('user', { managerId: 12, resellerId: A.id, permissions: ['subscribers.view'] });
});
afterAll(() => t.close());

describe('POST /api/invoices', () => {
  it('201 with computed totals, number, commission, defaults and public_url', async () => {
    const put = await api.put(
      '/api/settings',
      { default_tax_rate: 7.5, default_due_days: 10, invoice_prefix: 'INV' },
      { token: admin },
    );
    expect(put.status).toBe(200);
    const res = await api.post(
      '/api/invoices',
      {
        subscriber_id: sA.id,
        items: [line({ qty: 2, unit_price: 10.05 }), line({ description: 'Router', qty: 0.5, unit_price: 3.33 })],
        notes: 'hello',
      },
      { token: admin },
    );
    expect(res.status).toBe(201);
    const d = res.body.data;
    const year = todayUtc().slice(0, 4);
    // Lines: 2 x 10.05 = 20.10; 0.5 x 3.33 = 1.665 -> 1.67. Amount 21.77, tax 7.5% = 1.63275 -> 1.63.
    expect(d).toMatchObject({
      invoice_number: `INV-${year}-000001`,
      subscriber_id: sA.id,
      reseller_id: A.id,
      amount: 21.77,
      tax_rate: 7.5,
      tax_amount: 1.63,
      total: 23.4,
      paid_amount: 0,
      balance: 23.4,
      status: 'pending',
      currency: 'USD',
      issue_date: todayUtc(),
      due_date: addDays(todayUtc(), 10),
      paid_at: null,
      notes: 'hello',
      commission_rate: 12.5,
      commission_amount: 2.72, // 21.77 x 12.5% = 2.72125
      payments: [],
    });
    expect(d.items).toEqual([
      { description: 'Monthly 20M', qty: 2, unit_price: 10.05, amount: 20.1 },
      { description: 'Router', qty: 0.5, unit_price: 3.33, amount: 1.67 },
    ]);
    expect(d.public_url).toMatch(
      new RegExp(`^http://billing\\.test/api/invoices/public/${d.id}\\?token=[A-Za-z0-9_-]{43}$`),
    );
    const [row] = await t.db.select().from(invoices).where(eq(invoices.id, d.id));
    expect(row).toMatchObject({ amount: 2177, taxAmount: 163, total: 2340, commissionAmount: 272, createdBy: 1 });
    expect(row.publicTokenHash).toMatch(/^[0-9a-f]{64}$/);
    const items = await t.db.select().from(invoiceItems).where(eq(invoiceItems.invoiceId, d.id));
    expect(items.map((i) => i.amount).sort()).toEqual([167, 2010]);
  });

  it('honours tax_rate, due_date and currency given in the body', async () => {
    const d = await create({
      subscriber_id: sA.id,
      items: [line({ unit_price: 1500 })],
      tax_rate: 0,
      due_date: '2099-12-31',
      currency: 'JPY',
    });
    expect(d).toMatchObject({ currency: 'JPY', amount: 1500, tax_amount: 0, total: 1500, due_date: '2099-12-31' });
  });

  it("a reseller creates for its own tree; the commission rate is the owning reseller's", async () => {
    const d = await create({ subscriber_id: sA1.id, items: [line()] }, resA);
    expect(d).toMatchObject({ reseller_id: A1.id, commission_rate: 5, commission_amount: 1.5 });
  });

  it('403 for a subscriber of another tree and for the user role; nothing written', async () => {
    const before = await invoiceCount();
    const other = await api.post('/api/invoices', { subscriber_id: sB.id, items: [line()] }, { token: resA });
    expect(other.status).toBe(403);
    const user = await api.post('/api/invoices', { subscriber_id: sA.id, items: [line()] }, { token: userA });
    expect(user.status).toBe(403);
    expect(await invoiceCount()).toBe(before);
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ['missing items', { items: undefined }, /^items is required$/],
    ['empty items', { items: [] }, /^items /],
    ['negative qty', { items: [line({ qty: -1 })] }, /^items\[0\]\.qty /],
    ['zero qty', { items: [line({ qty: 0 })] }, /^items\[0\]\.qty /],
    ['non-numeric qty', { items: [line({ qty: 'two' })] }, /^items\[0\]\.qty must be number$/],
    ['numeric string qty', { items: [line({ qty: '2' })] }, /^items\[0\]\.qty must be number$/],
    [
      'too many qty decimals',
      { items: [line({ qty: 1.0001 })] },
      /^items\[0\]\.qty must have at most 3 decimal places$/,
    ],
    ['negative unit_price', { items: [line(), line({ unit_price: -5 })] }, /^items\[1\]\.unit_price /],
    ['non-numeric unit_price', { items: [line({ unit_price: 'free' })] }, /^items\[0\]\.unit_price must be number$/],
    [
      'unit_price beyond the currency',
      { items: [line({ unit_price: 1.005 })] },
      /^items\[0\]\.unit_price has more decimal places than USD allows$/,
    ],
    ['missing description', { items: [{ qty: 1, unit_price: 1 }] }, /^items\[0\]\.description is required$/],
    ['tax_rate above 100', { tax_rate: 100.01 }, /^tax_rate /],
    ['negative tax_rate', { tax_rate: -1 }, /^tax_rate /],
    ['tax_rate with 3 decimals', { tax_rate: 7.125 }, /^tax_rate must have at most 2 decimal places$/],
    ['non-numeric tax_rate', { tax_rate: '7' }, /^tax_rate must be number$/],
    ['impossible due_date', { due_date: '2025-02-30' }, /^due_date must be an ISO date/],
    ['non-date due_date', { due_date: 'next week' }, /^due_date must be an ISO date/],
    ['due_date before issue', { due_date: '2000-01-01' }, /^due_date must not be before the issue date$/],
    ['lowercase currency', { currency: 'usd' }, /^currency /],
    ['unknown currency', { currency: 'XYZ' }, /^currency must be an ISO 4217 code$/],
    ['unknown subscriber', { subscriber_id: 999999 }, /^subscriber_id not found$/],
    ['non-integer subscriber', { subscriber_id: 'abc' }, /^subscriber_id must be integer$/],
    ['missing subscriber', { subscriber_id: undefined }, /^subscriber_id is required$/],
    ['total too large', { items: [line({ qty: 1000000, unit_price: 1e11 })] }, /^items total is too large$/],
  ];
  it.each(bad)('400 naming the field, nothing written: %s', async (_name, patch, message) => {
    const before = [await invoiceCount(), await itemCount()];
    // JSON drops undefined values: `{ items: undefined }` sends a body without items.
    const body: Record<string, unknown> = { subscriber_id: sA.id, items: [line()], ...patch };
    const res = await api.post('/api/invoices', body, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toMatch(message);
    expect([await invoiceCount(), await itemCount()]).toEqual(before);
  });

  it('numbers are gap-free and unique under concurrency', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        api.post('/api/invoices', { subscriber_id: sA.id, items: [line()] }, { token: admin }),
      ),
    );
    expect(results.every((r) => r.status === 201)).toBe(true);
    const rows = await t.db.select({ n: invoices.invoiceNumber }).from(invoices);
    const seq = rows.map((r) => Number(r.n.split('-')[2])).sort((a, b) => a - b);
    expect(seq).toEqual(Array.from({ length: seq.length }, (_, i) => i + 1));
  });
});

describe('GET /api/invoices/:id', () => {
  it('returns items, payment history and public_url; 404 unknown; 403 outside the tree; user may read', async () => {
    const d = await create({ subscriber_id: sA1.id, items: [line()] });
    const pay = await api.post(
      `/api/invoices/${d.id}/payment`,
      { amount: 10, method: 'card', reference: 'R-1' },
      { token: admin },
    );
    expect(pay.status).toBe(200);
    const res = await api.get(`/api/invoices/${d.id}`, { token: resA });
    expect(res.status).toBe(200);
    expect(res.body.data.items).toHaveLength(1);
    expect(res.body.data.payments).toEqual([
      expect.objectContaining({
        id: pay.body.data.payment.id,
        amount: 10,
        method: 'card',
        reference: 'R-1',
        created_by: 1,
      }),
    ]);
    expect(res.body.data.public_url).toBe(d.public_url);
    expect((await api.get(`/api/invoices/${d.id}`, { token: userA })).status).toBe(200);
    const other = await api.get(`/api/invoices/${d.id}`, { token: resB });
    expect(other.status).toBe(403);
    const missing = await api.get('/api/invoices/987654', { token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, message: 'invoice not found' });
    expect((await api.get('/api/invoices/abc', { token: admin })).status).toBe(400);
    expect((await api.get(`/api/invoices/${d.id}`)).status).toBe(401);
  });
});

describe('GET /api/invoices', () => {
  let ids: { a: number; a1: number; b: number; old: number };
  beforeAll(async () => {
    await t.db.delete(invoiceItems);
    await t.db.delete(invoices);
    ids = {
      a: (await create({ subscriber_id: sA.id, items: [line()] })).id,
      a1: (await create({ subscriber_id: sA1.id, items: [line()] })).id,
      b: (await create({ subscriber_id: sB.id, items: [line()] })).id,
      old: (await create({ subscriber_id: sB.id, items: [line()] })).id,
    };
    await t.db
      .update(invoices)
      .set({ issueDate: '2024-01-15', status: 'paid', paidAmount: sql`${invoices.total}` })
      .where(eq(invoices.id, ids.old));
  });

  const list = async (query: string, tok = admin) => {
    const res = await api.get(`/api/invoices${query}`, { token: tok });
    expect(res.status).toBe(200);
    return res.body as { data: { id: number }[]; pagination: { page: number; limit: number; total: number } };
  };

  it('newest first with exact pagination', async () => {
    const all = await list('');
    expect(all.data.map((i) => i.id)).toEqual([ids.old, ids.b, ids.a1, ids.a]);
    expect(all.pagination).toEqual({ page: 1, limit: 50, total: 4 });
    const page2 = await list('?limit=3&page=2');
    expect(page2.data.map((i) => i.id)).toEqual([ids.a]);
    expect(page2.pagination).toEqual({ page: 2, limit: 3, total: 4 });
    expect((await list('?order=asc')).data.map((i) => i.id)).toEqual([ids.a, ids.a1, ids.b, ids.old]);
  });

  it('filters: status, subscriber, reseller, dates, search', async () => {
    expect((await list('?status=paid')).data.map((i) => i.id)).toEqual([ids.old]);
    expect((await list(`?subscriber_id=${sA1.id}`)).data.map((i) => i.id)).toEqual([ids.a1]);
    expect((await list(`?reseller_id=${B.id}`)).data.map((i) => i.id)).toEqual([ids.old, ids.b]);
    expect((await list('?from=2024-01-01&to=2024-01-31')).data.map((i) => i.id)).toEqual([ids.old]);
    expect((await list(`?from=${todayUtc()}`)).pagination.total).toBe(3);
    expect((await list('?search=carol')).data.map((i) => i.id)).toEqual([ids.old, ids.b]);
    expect((await list('?search=bob%20bak')).data.map((i) => i.id)).toEqual([ids.a1]);
    const [{ n }] = await t.db.select({ n: invoices.invoiceNumber }).from(invoices).where(eq(invoices.id, ids.a));
    expect((await list(`?search=${n}`)).data.map((i) => i.id)).toEqual([ids.a]);
    expect((await list('?search=%25')).pagination.total).toBe(0); // a literal %, not a wildcard
  });

  it('scope-filtered: a reseller sees its tree only and cannot name another reseller', async () => {
    expect((await list('', resA)).data.map((i) => i.id)).toEqual([ids.a1, ids.a]);
    expect((await list('', resB)).data.map((i) => i.id)).toEqual([ids.old, ids.b]);
    expect((await list('', userA)).pagination.total).toBe(2);
    const res = await api.get(`/api/invoices?reseller_id=${B.id}`, { token: resA });
    expect(res.status).toBe(403);
  });

  it('400 on bad query values', async () => {
    for (const q of ['?limit=501', '?page=0', '?status=open', '?from=2024-13-01', '?subscriber_id=x']) {
      const res = await api.get(`/api/invoices${q}`, { token: admin });
      expect(res.status).toBe(400);
    }
  });
});

describe('PUT /api/invoices/:id', () => {
  it('recomputes totals from new items and tax; keeps the rest', async () => {
    const d = await create({ subscriber_id: sA.id, items: [line()], tax_rate: 10, notes: 'n' });
    const res = await api.put(
      `/api/invoices/${d.id}`,
      { items: [line({ qty: 3, unit_price: 5 }), line({ unit_price: 0.5 })], tax_rate: 20, due_date: '2099-01-01' },
      { token: resA },
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      amount: 15.5,
      tax_rate: 20,
      tax_amount: 3.1,
      total: 18.6,
      due_date: '2099-01-01',
      notes: 'n',
      commission_amount: 1.94,
    });
    expect(res.body.data.items).toHaveLength(2);
    expect((await t.db.select().from(invoiceItems).where(eq(invoiceItems.invoiceId, d.id))).length).toBe(2);
    const notesOnly = await api.put(`/api/invoices/${d.id}`, { tax_rate: 0 }, { token: admin });
    expect(notesOnly.body.data).toMatchObject({ amount: 15.5, tax_amount: 0, total: 15.5 });
  });

  it('409 unless pending; 400 bad input changes nothing; 403 outside the tree or for a user', async () => {
    const d = await create({ subscriber_id: sA.id, items: [line()], tax_rate: 0 });
    for (const [patch, msg] of [
      [{ items: [] }, /^items /],
      [{ tax_rate: 101 }, /^tax_rate/],
      [{ due_date: 'x' }, /^due_date/],
      [{}, /^body has nothing to change$/],
    ] as const) {
      const res = await api.put(`/api/invoices/${d.id}`, patch, { token: admin });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(msg);
    }
    expect((await api.put(`/api/invoices/${d.id}`, { notes: 'x' }, { token: resB })).status).toBe(403);
    expect((await api.put(`/api/invoices/${d.id}`, { notes: 'x' }, { token: userA })).status).toBe(403);
    expect((await api.put('/api/invoices/999999', { notes: 'x' }, { token: admin })).status).toBe(404);
    const [row] = await t.db.select().from(invoices).where(eq(invoices.id, d.id));
    expect(row).toMatchObject({ total: 3000, notes: null });
    await api.post(`/api/invoices/${d.id}/payment`, { amount: 1 }, { token: admin });
    const partial = await api.put(`/api/invoices/${d.id}`, { notes: 'late' }, { token: admin });
    expect(partial.status).toBe(409);
    expect(partial.body.message).toMatch(/only pending invoices can be edited/);
    await api.post(`/api/invoices/${d.id}/payment`, { amount: 29 }, { token: admin });
    expect((await api.put(`/api/invoices/${d.id}`, { notes: 'late' }, { token: admin })).status).toBe(409);
  });
});

describe('DELETE /api/invoices/:id', () => {
  it('admin only; removes a pending invoice and its lines', async () => {
    const d = await create({ subscriber_id: sA.id, items: [line()] });
    expect((await api.del(`/api/invoices/${d.id}`, { token: resA })).status).toBe(403);
    expect((await api.del(`/api/invoices/${d.id}`, { token: userA })).status).toBe(403);
    const res = await api.del(`/api/invoices/${d.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: d.id, deleted: true });
    expect(await t.db.select().from(invoices).where(eq(invoices.id, d.id))).toHaveLength(0);
    expect(await t.db.select().from(invoiceItems).where(eq(invoiceItems.invoiceId, d.id))).toHaveLength(0);
    expect((await api.del(`/api/invoices/${d.id}`, { token: admin })).status).toBe(404);
  });

  it('409 cannot delete paid invoice (and one with payments)', async () => {
    const d = await create({ subscriber_id: sA.id, items: [line()], tax_rate: 0 });
    await api.post(`/api/invoices/${d.id}/payment`, { amount: 10 }, { token: admin });
    const partial = await api.del(`/api/invoices/${d.id}`, { token: admin });
    expect(partial.status).toBe(409);
    await api.post(`/api/invoices/${d.id}/payment`, { amount: 20 }, { token: admin });
    const paid = await api.del(`/api/invoices/${d.id}`, { token: admin });
    expect(paid.status).toBe(409);
    expect(paid.body).toEqual({ success: false, message: 'cannot delete paid invoice' });
    expect(await t.db.select().from(invoices).where(eq(invoices.id, d.id))).toHaveLength(1);
  });
});
