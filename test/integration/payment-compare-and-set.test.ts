/**
 * POST /payment's fast path writes without a lock, as a compare-and-set on the invoice row it read.
 * A stale read must write nothing at all (no ledger row, no payment row) and hand back undefined.
 */
import { eq } from 'drizzle-orm';
import { readInvoiceForPayment, recordPaymentUnlocked } from '../../shared/billing';
import { pgPool } from '../../shared/db/client';
import { invoicePayments, invoices, transactions } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { seedBillingSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
let subscriberId: number;
const admin = adminToken();

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  subscriberId = await seedBillingSubscriber(t.db, 'cas');
});
afterAll(() => t.close());

async function newInvoice(): Promise<number> {
  const res = await api.post(
    '/api/invoices',
    { subscriber_id: subscriberId, tax_rate: 0, items: [{ description: 'x', qty: 1, unit_price: 10 }] },
    { token: admin },
  );
  return res.body.data.id;
}

const rowsOf = async (id: number) => ({
  payments: (await t.db.select().from(invoicePayments).where(eq(invoicePayments.invoiceId, id))).length,
  ledger: (await t.db.select().from(transactions).where(eq(transactions.invoiceId, id))).length,
  invoice: (await t.db.select().from(invoices).where(eq(invoices.id, id)))[0],
});

it('writes when the invoice is as read', async () => {
  const id = await newInvoice();
  const read = await readInvoiceForPayment(pgPool(), id);
  const r = await recordPaymentUnlocked(pgPool(), read, { amount: 400 });
  expect(r?.invoice).toMatchObject({ paidAmount: 400, status: 'partial' });
  expect(await rowsOf(id)).toMatchObject({ payments: 1, ledger: 1, invoice: { paidAmount: 400, status: 'partial' } });
});

it('writes nothing when another payment landed after the read', async () => {
  const id = await newInvoice();
  const stale = await readInvoiceForPayment(pgPool(), id);
  expect((await api.post(`/api/invoices/${id}/payment`, { amount: 7 }, { token: admin })).status).toBe(200);
  expect(await recordPaymentUnlocked(pgPool(), stale, { amount: 500 })).toBeUndefined();
  expect(await rowsOf(id)).toMatchObject({ payments: 1, ledger: 1, invoice: { paidAmount: 700, status: 'partial' } });
});

it('writes nothing when the total changed after the read (a paid-in-full status would be wrong)', async () => {
  const id = await newInvoice();
  const stale = await readInvoiceForPayment(pgPool(), id);
  expect(
    (await api.put(`/api/invoices/${id}`, { items: [{ description: 'y', qty: 1, unit_price: 5 }] }, { token: admin }))
      .status,
  ).toBe(200);
  expect(await recordPaymentUnlocked(pgPool(), stale, { amount: 1000 })).toBeUndefined();
  expect(await rowsOf(id)).toMatchObject({
    payments: 0,
    ledger: 0,
    invoice: { paidAmount: 0, total: 500, status: 'pending' },
  });
});

it('over HTTP, a payment whose read went stale settles under the lock and is refused on the real balance', async () => {
  const id = await newInvoice();
  const results = await Promise.all(
    Array.from({ length: 6 }, () => api.post(`/api/invoices/${id}/payment`, { amount: 4 }, { token: admin })),
  );
  // 10.00 takes two payments of 4.00; every other one is refused on the balance it really sees
  // (spec: 400 `amount exceeds balance`), and nothing answers anything else (a 409 or 500 included).
  const answers = results.map((r) => (r.status === 200 ? '200' : `${r.status} ${r.body.message}`)).sort();
  expect(answers).toEqual(['200', '200', ...Array(4).fill('400 amount exceeds balance')]);
  expect(await rowsOf(id)).toMatchObject({ payments: 2, ledger: 2, invoice: { paidAmount: 800, status: 'partial' } });
});
