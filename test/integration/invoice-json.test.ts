/**
 * PostgreSQL builds the invoice JSON of every invoice response (services/billing/invoice-json.ts;
 * an invoice's own fields are kept in its row, `invoices.api_json`, migration 0040). These tests
 * hold it to the rules the rest of the API follows in TypeScript: money through `fromMinor` for
 * every minor-unit exponent, timestamps as `toISOString()`, rates as plain numbers, keys in the
 * spec's order, the same view from GET, list, create and payments, and the kept JSON in step with
 * every write of the row.
 */
import { eq } from 'drizzle-orm';
import { invoiceItems, invoicePayments, invoices, resellers, subscribers } from '../../shared/db/schema';
import { EXPONENT_EXCEPTIONS, fromMinor } from '../../shared/money';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { seedBillingSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
let subscriberId: number;
const admin = adminToken();

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  subscriberId = await seedBillingSubscriber(t.db, 'json-view');
});
afterAll(() => t.close());

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The view computed in TypeScript from the stored rows: what the SQL must reproduce. */
async function expectedView(id: number) {
  const [i] = await t.db.select().from(invoices).where(eq(invoices.id, id));
  const items = await t.db
    .select()
    .from(invoiceItems)
    .where(eq(invoiceItems.invoiceId, id))
    .orderBy(invoiceItems.position);
  const payments = await t.db
    .select()
    .from(invoicePayments)
    .where(eq(invoicePayments.invoiceId, id))
    .orderBy(invoicePayments.id);
  const m = (v: number) => fromMinor(v, i.currency);
  return {
    id: i.id,
    invoice_number: i.invoiceNumber,
    subscriber_id: i.subscriberId,
    reseller_id: i.resellerId,
    kind: i.kind,
    amount: m(i.amount),
    tax_rate: Number(i.taxRate),
    tax_amount: m(i.taxAmount),
    total: m(i.total),
    paid_amount: m(i.paidAmount),
    balance: m(i.total - i.paidAmount),
    status: i.status,
    currency: i.currency,
    issue_date: i.issueDate,
    due_date: i.dueDate,
    paid_at: iso(i.paidAt),
    notes: i.notes,
    commission_rate: Number(i.commissionRate),
    commission_amount: m(i.commissionAmount),
    consolidated_into: i.consolidatedInto,
    created_by: i.createdBy,
    created_at: iso(i.createdAt),
    subscriber_username: (await t.db.select().from(subscribers).where(eq(subscribers.id, i.subscriberId)))[0].username,
    reseller_name: (await t.db.select().from(resellers).where(eq(resellers.id, i.resellerId)))[0].name,
    items: items.map((it) => ({
      description: it.description,
      qty: Number(it.qty),
      unit_price: m(it.unitPrice),
      amount: m(it.amount),
    })),
    payments: payments.map((p) => ({
      id: p.id,
      invoice_id: p.invoiceId,
      transaction_id: p.transactionId,
      amount: m(p.amount),
      method: p.method,
      reference: p.reference,
      paid_at: iso(p.paidAt),
      notes: p.notes,
      created_by: p.createdBy,
      created_at: iso(p.createdAt),
    })),
  };
}

describe.each([
  ['USD', 2, 12.34],
  ['JPY', 0, 1234],
  ['KWD', 3, 1.234],
  ['CLF', 4, 0.1234],
])('%s (exponent %i)', (currency, _exponent, unitPrice) => {
  it('GET, list, create and payments show the stored row exactly as fromMinor and toISOString would', async () => {
    const created = await api.post(
      '/api/invoices',
      {
        subscriber_id: subscriberId,
        currency,
        tax_rate: 7.5,
        notes: 'línea "quoted" \\ back',
        items: [
          { description: 'Plan', qty: 1.5, unit_price: unitPrice },
          { description: 'Router', qty: 2, unit_price: 0 },
        ],
      },
      { token: admin },
    );
    expect(created.status).toBe(201);
    const id = created.body.data.id as number;
    const paid = await api.post(
      `/api/invoices/${id}/payment`,
      { amount: created.body.data.total > 1 ? 1 : created.body.data.total, method: 'cash', reference: 'r-1' },
      { token: admin },
    );
    expect(paid.status).toBe(200);

    const expected = await expectedView(id);
    const got = await api.get(`/api/invoices/${id}`, { token: admin });
    expect(got.status).toBe(200);
    const { public_url: url, ...view } = got.body.data;
    expect(view).toEqual(expected);
    expect(Object.keys(got.body.data)).toEqual([...Object.keys(expected), 'public_url']);
    expect(url).toMatch(new RegExp(`/api/invoices/public/${id}\\?token=[A-Za-z0-9_-]{43}$`));

    // The create response is the same view, before the payment.
    expect(created.body.data.public_url).toBe(url);
    expect(created.body.data.items).toEqual(expected.items);
    expect(created.body.data.payments).toEqual([]);

    const list = await api.get(`/api/invoices?subscriber_id=${subscriberId}&limit=100`, { token: admin });
    const { items: _items, payments, ...listExpected } = expected;
    expect(list.body.data.find((r: { id: number }) => r.id === id)).toEqual(listExpected);

    const history = await api.get(`/api/invoices/${id}/payments`, { token: admin });
    expect(history.body).toEqual({ success: true, data: payments });
  });
});

it('prints money the way JSON.stringify prints fromMinor: no trailing zeros, integers bare', async () => {
  const created = await api.post(
    '/api/invoices',
    {
      subscriber_id: subscriberId,
      currency: 'USD',
      tax_rate: 0,
      items: [{ description: 'Even', qty: 1, unit_price: 10.5 }],
    },
    { token: admin },
  );
  const got = await api.get(`/api/invoices/${created.body.data.id}`, { token: admin });
  expect(got.text).toMatch(/"amount" ?: ?10\.5,/);
  expect(got.text).toMatch(/"tax_rate" ?: ?0,/);
  expect(got.text).toMatch(/"paid_amount" ?: ?0,/);
  expect(got.text).toMatch(/"qty" ?: ?1,/);
});

it('an invoice without a public link shows public_url null', async () => {
  const created = await api.post(
    '/api/invoices',
    {
      subscriber_id: subscriberId,
      items: [{ description: 'No link', qty: 1, unit_price: 1 }],
    },
    { token: admin },
  );
  const id = created.body.data.id as number;
  await t.db.update(invoices).set({ publicTokenNonce: null, publicTokenHash: null }).where(eq(invoices.id, id));
  const got = await api.get(`/api/invoices/${id}`, { token: admin });
  expect(got.body.data.public_url).toBeNull();
});

/** An invoice's kept JSON (`api_json`) parsed, as the lists serve it. */
async function keptJson(id: number) {
  const { rows } = await t.pool.query<{ api_json: string }>('select api_json from invoices where id = $1', [id]);
  return JSON.parse(rows[0].api_json) as Record<string, unknown>;
}

/** The view of a list row (no items or payments), computed in TypeScript. */
/** The kept JSON: the invoice's own fields, without the names read when it is shown. */
async function expectedListView(id: number) {
  const {
    items: _items,
    payments: _payments,
    subscriber_username: _username,
    reseller_name: _reseller,
    ...view
  } = await expectedView(id);
  return view;
}

/** A USD invoice of one item through the API; its id. */
async function createdInvoice(description: string, unitPrice: number): Promise<number> {
  const created = await api.post(
    '/api/invoices',
    { subscriber_id: subscriberId, items: [{ description, qty: 1, unit_price: unitPrice }] },
    { token: admin },
  );
  return created.body.data.id as number;
}

it("the row's kept JSON follows fromMinor for every currency of money.ts's exponent table", async () => {
  // The migration's function carries its own copy of the exponents: a currency added to money.ts
  // alone would be divided by 100 here and fail.
  const currencies = [...Object.keys(EXPONENT_EXCEPTIONS), 'USD', 'EUR'];
  for (const [k, currency] of currencies.entries()) {
    const { rows } = await t.pool.query<{ id: number }>(
      `insert into invoices (invoice_number, subscriber_id, reseller_id, amount, tax_rate, tax_amount, total, paid_amount,
         currency, issue_date, due_date, commission_rate, commission_amount, paid_at)
       select $1, s.id, s.reseller_id, 123457, 7.25, 8951, 132408, 1001, $2, '2026-02-03', '2026-03-05', 12.5, 15433,
         '2026-02-04T05:06:07.089Z' from subscribers s where s.id = $3 returning id`,
      [`JSON-${k}-${Date.now()}`, currency, subscriberId],
    );
    const view = await expectedListView(rows[0].id);
    const kept = await keptJson(rows[0].id);
    expect([currency, kept]).toEqual([currency, view]);
    expect(Object.keys(kept)).toEqual(Object.keys(view));
  }
});

it('every write of an invoice row rewrites its kept JSON in the same statement', async () => {
  const id = await createdInvoice('Kept', 20);
  await t.pool.query(
    `update invoices set notes = 'after "edit"', status = 'void', paid_amount = 150, paid_at = '2026-01-02T03:04:05.678Z',
       due_date = '2027-01-01', consolidated_into = $1 where id = $1`,
    [id],
  );
  const view = await expectedListView(id);
  expect(view).toMatchObject({ notes: 'after "edit"', status: 'void', paid_amount: 1.5, balance: 18.5 });
  expect(await keptJson(id)).toEqual(view);
  const list = await api.get(`/api/invoices?subscriber_id=${subscriberId}&limit=100`, { token: admin });
  const { subscriber_username, reseller_name } = await expectedView(id);
  expect(list.body.data.find((r: { id: number }) => r.id === id)).toEqual({
    ...view,
    subscriber_username,
    reseller_name,
  });
});

it("a writer's session settings do not change the kept JSON (float digits, time zone, date style, search path)", async () => {
  const id = await createdInvoice('Settings', 1234.57);
  const c = await t.pool.connect();
  try {
    await c.query('begin');
    // At 0 or below float8 prints rounded digits (1e+03 for 1234.57 at -15).
    await c.query(`set local extra_float_digits = -15`);
    await c.query(`set local timezone = 'Asia/Kolkata'`);
    await c.query(`set local datestyle = 'SQL, DMY'`);
    // pg_restore and logical replication compute generated columns with an empty search_path.
    const { rows } = await c.query<{ schema: string }>('select current_schema() as schema');
    await c.query(`set local search_path = ''`);
    await c.query(
      `update "${rows[0].schema}".invoices set paid_amount = 12345, paid_at = '2026-01-02T03:04:05.678Z' where id = $1`,
      [id],
    );
    await c.query('commit');
  } finally {
    c.release();
  }
  const view = await expectedListView(id);
  expect(view).toMatchObject({ amount: 1234.57, paid_amount: 123.45, paid_at: '2026-01-02T03:04:05.678Z' });
  expect(await keptJson(id)).toEqual(view);
});
