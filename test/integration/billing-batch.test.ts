/** createInvoices: the batch writer behind bulk renewals must match createInvoice invoice for invoice. */
import { eq, inArray } from 'drizzle-orm';
import { createInvoice, createInvoices, type CreateInvoiceInput, type InvoiceRecord } from '../../shared/billing';
import type { Tx } from '../../shared/db/client';
import { invoiceItems, invoices } from '../../shared/db/schema';
import { startTestApp, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const inTx = <T>(fn: (tx: Tx) => Promise<T>) => t.db.transaction((tx) => fn(tx as unknown as Tx));
const seqOf = (invoiceNumber: string) => Number(invoiceNumber.split('-').at(-1));

/** Everything computed or defaulted, without what differs between two copies (id, number, link, times). */
const computed = ({ invoice, items }: InvoiceRecord) => ({
  subscriberId: invoice.subscriberId,
  resellerId: invoice.resellerId,
  kind: invoice.kind,
  amount: invoice.amount,
  taxRate: invoice.taxRate,
  taxAmount: invoice.taxAmount,
  total: invoice.total,
  paidAmount: invoice.paidAmount,
  status: invoice.status,
  currency: invoice.currency,
  issueDate: invoice.issueDate,
  dueDate: invoice.dueDate,
  notes: invoice.notes,
  commissionRate: invoice.commissionRate,
  commissionAmount: invoice.commissionAmount,
  createdBy: invoice.createdBy,
  hasLink: Boolean(invoice.publicTokenNonce && invoice.publicTokenHash),
  items: items.map((it) => ({
    position: it.position,
    description: it.description,
    qty: it.qty,
    unitPrice: it.unitPrice,
    amount: it.amount,
  })),
});

it('same totals, tax, commission and lines as createInvoice; numbers gap-free and consecutive in input order', async () => {
  const a = await seedReseller(t.db, { name: 'batch-a', commissionRate: '12.5' });
  const b = await seedReseller(t.db, { name: 'batch-b', commissionRate: '7' });
  const plan = await seedPlan(t.db, { price: 1000 });
  const sa = await seedSubscriber(t.db, { resellerId: a.id, serviceId: plan.id });
  const sb = await seedSubscriber(t.db, { resellerId: b.id, serviceId: plan.id });
  const inputs: CreateInvoiceInput[] = [
    {
      subscriberId: sa.id,
      resellerId: a.id,
      items: [{ description: 'Renewal', qty: 1, unitPrice: 1999 }],
      kind: 'renewal',
      createdBy: 1,
    },
    {
      subscriberId: sb.id,
      resellerId: b.id,
      items: [
        { description: 'x', qty: '2.345', unitPrice: 333 },
        { description: 'y', qty: 3, unitPrice: 0 },
      ],
      taxRate: '7.25',
      notes: 'n',
    },
    {
      subscriberId: sa.id,
      resellerId: a.id,
      items: [{ description: 'z', qty: 0.5, unitPrice: 101 }],
      taxRate: 15,
      currency: 'EUR',
      issueDate: '2025-02-01',
      dueDate: '2025-03-01',
    },
  ];
  const single = await inTx(async (tx) => {
    const out: InvoiceRecord[] = [];
    for (const input of inputs) out.push(await createInvoice(tx, input));
    return out;
  });
  const batch = await inTx((tx) => createInvoices(tx, inputs));
  expect(batch.map(computed)).toEqual(single.map(computed));

  // What was returned is what was stored.
  const ids = batch.map((r) => r.invoice.id);
  const stored = await t.db.select().from(invoices).where(inArray(invoices.id, ids));
  expect(stored.sort((x, y) => x.id - y.id)).toEqual(batch.map((r) => r.invoice));
  const lines = await t.db.select().from(invoiceItems).where(inArray(invoiceItems.invoiceId, ids));
  expect(lines.sort((x, y) => x.id - y.id)).toEqual(batch.flatMap((r) => r.items));

  // The numbers of this year (the first two of each run, issued today) continue the per-year counter without gaps.
  const thisYear = (rs: InvoiceRecord[]) =>
    rs.filter((r) => r.invoice.issueDate === single[0].invoice.issueDate).map((r) => seqOf(r.invoice.invoiceNumber));
  const [s1, s2] = thisYear(single);
  const [b1, b2] = thisYear(batch);
  expect([s2, b1, b2]).toEqual([s1 + 1, s1 + 2, s1 + 3]);
  expect(ids).toEqual([...ids].sort((x, y) => x - y));
  const next = await inTx((tx) => createInvoice(tx, inputs[0]));
  expect(seqOf(next.invoice.invoiceNumber)).toBe(b2 + 1);
});

it('one refused input writes nothing and takes no number', async () => {
  const r = await seedReseller(t.db, { name: 'batch-c' });
  const plan = await seedPlan(t.db, { price: 1000 });
  const s = await seedSubscriber(t.db, { resellerId: r.id, serviceId: plan.id });
  const ok: CreateInvoiceInput = {
    subscriberId: s.id,
    resellerId: r.id,
    items: [{ description: 'ok', qty: 1, unitPrice: 100 }],
  };
  const before = await inTx((tx) => createInvoice(tx, ok));
  await expect(inTx((tx) => createInvoices(tx, [ok, { ...ok, taxRate: 101 }]))).rejects.toMatchObject({
    code: 400,
    message: 'tax_rate must be between 0 and 100',
  });
  await expect(inTx((tx) => createInvoices(tx, [ok, { ...ok, resellerId: 999999 }]))).rejects.toMatchObject({
    code: 400,
    message: 'reseller_id not found',
  });
  expect(await t.db.select().from(invoices).where(eq(invoices.subscriberId, s.id))).toHaveLength(1);
  const [after] = await inTx((tx) => createInvoices(tx, [ok]));
  expect(seqOf(after.invoice.invoiceNumber)).toBe(seqOf(before.invoice.invoiceNumber) + 1);
  expect(await inTx((tx) => createInvoices(tx, []))).toEqual([]);
});
