/** Payments, quick-pay, consolidation and Idempotency-Key against the real database, concurrency included. */
import { and, count, eq, inArray, sql } from 'drizzle-orm';
import {
  idempotencyKeys,
  invoicePayments,
  invoices,
  resellers,
  subscribers,
  transactions,
  walletEntries,
} from '../../shared/db/schema';
import { saveSettings } from '../../shared/settings';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { behindAWriter } from '../helpers/row-locks';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let A: typeof resellers.$inferSelect;
let B: typeof resellers.$inferSelect;
let planId: number;
let resA: string;
let resB: string;
let userA: string;

async function subscriber(resellerId = A.id) {
  return seedSubscriber(t.db, { resellerId, serviceId: planId });
}

/** An invoice of `total` (decimal, no tax) for the subscriber; returns its id. */
async function invoice(subscriberId: number, total: number, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post(
    '/api/invoices',
    {
      subscriber_id: subscriberId,
      items: [{ description: 'service', qty: 1, unit_price: total }],
      tax_rate: 0,
      ...extra,
    },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data.id;
}

const row = async (id: number) => (await t.db.select().from(invoices).where(eq(invoices.id, id)))[0];
const paymentsOf = (id: number) => t.db.select().from(invoicePayments).where(eq(invoicePayments.invoiceId, id));
const ledgerOf = (id: number) => t.db.select().from(transactions).where(eq(transactions.invoiceId, id));
const counts = async () => ({
  payments: (await t.db.select({ n: count() }).from(invoicePayments))[0].n,
  ledger: (await t.db.select({ n: count() }).from(transactions))[0].n,
  wallet: (await t.db.select({ n: count() }).from(walletEntries))[0].n,
  invoices: (await t.db.select({ n: count() }).from(invoices))[0].n,
});

/** The invariant of ARCHITECTURE section 3 over every invoice. */
async function violations(): Promise<number> {
  const res = await t.pool.query(`
    select count(*)::int as n from invoices i
    where i.paid_amount <> coalesce((select sum(amount) from invoice_payments p where p.invoice_id = i.id), 0)
       or i.paid_amount > i.total
       or (i.status = 'paid' and (i.paid_amount <> i.total or i.paid_at is null))
       or (select count(*) from invoice_payments p where p.invoice_id = i.id)
          <> (select count(*) from transactions x where x.invoice_id = i.id and x.type = 'invoice_payment')`);
  return res.rows[0].n;
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  A = await seedReseller(t.db, { name: 'A' });
  B = await seedReseller(t.db, { name: 'B' });
  planId = (await seedPlan(t.db, { price: 1000 })).id;
  resA = token('reseller', { managerId: 20, resellerId: A.id });
  resB = token('reseller', { managerId: 21, resellerId: B.id });
  userA = token('user', { managerId: 22, resellerId: A.id });
});
afterAll(async () => {
  expect(await violations()).toBe(0);
  await t.close();
});

describe('POST /api/invoices/:id/payment', () => {
  it('pending -> partial -> paid with paid_at; one ledger row and one payment row each', async () => {
    const s = await subscriber();
    const id = await invoice(s.id, 25);
    const first = await api.post(
      `/api/invoices/${id}/payment`,
      { amount: 10.5, method: 'bank', reference: 'TX-9', notes: 'first' },
      { token: resA },
    );
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      success: true,
      data: {
        invoice: { id, status: 'partial', paid_amount: 10.5, balance: 14.5, paid_at: null },
        payment: { id: expect.any(Number), amount: 10.5, method: 'bank' },
        transaction_id: expect.any(Number),
      },
    });
    const paidAt = '2026-01-02T03:04:05.000Z';
    const second = await api.post(`/api/invoices/${id}/payment`, { amount: 14.5, paid_at: paidAt }, { token: admin });
    expect(second.status).toBe(200);
    expect(second.body.data.invoice).toEqual({ id, status: 'paid', paid_amount: 25, balance: 0, paid_at: paidAt });
    expect(second.body.data.payment.method).toBe('cash');

    const payments = await paymentsOf(id);
    const ledger = await ledgerOf(id);
    expect(payments.map((p) => p.amount)).toEqual([1050, 1450]);
    expect(ledger.map((l) => [l.type, l.amount, l.method, l.subscriberId, l.resellerId, l.username]).sort()).toEqual([
      ['invoice_payment', 1050, 'bank', s.id, A.id, s.username],
      ['invoice_payment', 1450, 'cash', s.id, A.id, s.username],
    ]);
    expect(payments.map((p) => p.transactionId).sort()).toEqual(
      [first.body.data.transaction_id, second.body.data.transaction_id].sort(),
    );
    expect(await row(id)).toMatchObject({ status: 'paid', paidAmount: 2500, paidAt: new Date(paidAt) });

    const list = await api.get(`/api/invoices/${id}/payments`, { token: userA });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      expect.objectContaining({
        id: first.body.data.payment.id,
        amount: 10.5,
        method: 'bank',
        reference: 'TX-9',
        notes: 'first',
        created_by: 20,
        paid_at: expect.any(String),
      }),
      expect.objectContaining({
        id: second.body.data.payment.id,
        amount: 14.5,
        method: 'cash',
        reference: null,
        paid_at: paidAt,
        created_by: 1,
      }),
    ]);
  });

  it('400 amount exceeds balance (also on a paid invoice); nothing written', async () => {
    const id = await invoice((await subscriber()).id, 10);
    const before = await counts();
    const res = await api.post(`/api/invoices/${id}/payment`, { amount: 10.01 }, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: 'amount exceeds balance' });
    expect(await counts()).toEqual(before);
    await api.post(`/api/invoices/${id}/payment`, { amount: 10 }, { token: admin });
    const again = await api.post(`/api/invoices/${id}/payment`, { amount: 0.01 }, { token: admin });
    expect(again.status).toBe(400);
    expect(again.body.message).toBe('amount exceeds balance');
  });

  it('409 invoice is void', async () => {
    const id = await invoice((await subscriber()).id, 10);
    await t.db.update(invoices).set({ status: 'void' }).where(eq(invoices.id, id));
    const before = await counts();
    const res = await api.post(`/api/invoices/${id}/payment`, { amount: 1 }, { token: admin });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ success: false, message: 'invoice is void' });
    expect(await counts()).toEqual(before);
  });

  it('bad input: 400 naming the field, nothing written; 404, 403 and user role', async () => {
    const id = await invoice((await subscriber()).id, 10);
    const before = await counts();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /^amount is required$/],
      [{ amount: 0 }, /^amount must be > 0$/],
      [{ amount: -5 }, /^amount must be > 0$/],
      [{ amount: '5' }, /^amount must be number$/],
      [{ amount: 1.001 }, /^amount has more decimal places than USD allows$/],
      [{ amount: 1, method: 'bitcoin' }, /^method must be one of cash, card, bank, wallet, prepaid_card, other$/],
      [{ amount: 1, paid_at: 'yesterday' }, /^paid_at must be an ISO date-time$/],
    ];
    for (const [body, message] of cases) {
      const res = await api.post(`/api/invoices/${id}/payment`, body, { token: admin });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect((await api.post('/api/invoices/999999/payment', { amount: 1 }, { token: admin })).status).toBe(404);
    expect((await api.post(`/api/invoices/${id}/payment`, { amount: 1 }, { token: resB })).status).toBe(403);
    expect((await api.post(`/api/invoices/${id}/payment`, { amount: 1 }, { token: userA })).status).toBe(403);
    expect((await api.get(`/api/invoices/${id}/payments`, { token: resB })).status).toBe(403);
    expect((await api.get('/api/invoices/999999/payments', { token: admin })).status).toBe(404);
    expect(await counts()).toEqual(before);
  });

  it('method wallet draws on the subscriber wallet, and is refused when it holds too little', async () => {
    const s = await subscriber();
    const id = await invoice(s.id, 10);
    const low = await api.post(`/api/invoices/${id}/payment`, { amount: 4, method: 'wallet' }, { token: admin });
    expect(low.status).toBe(400);
    expect(low.body.message).toBe('amount exceeds wallet balance');
    await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 15 }, { token: admin }); // 10 to the invoice, 5 to the wallet
    const id2 = await invoice(s.id, 10);
    const ok = await api.post(`/api/invoices/${id2}/payment`, { amount: 4, method: 'wallet' }, { token: admin });
    expect(ok.status).toBe(200);
    expect(ok.body.data.payment).toMatchObject({ amount: 4, method: 'wallet' });
    const [sub] = await t.db.select().from(subscribers).where(eq(subscribers.id, s.id));
    expect(sub.walletBalance).toBe(100);
    const entries = await t.db.select().from(walletEntries).where(eq(walletEntries.subscriberId, s.id));
    expect(entries.map((e) => e.amount).sort((a, b) => a - b)).toEqual([-400, 500]);
    expect(entries.reduce((sum, e) => sum + e.amount, 0)).toBe(sub.walletBalance);
  });

  it('50 concurrent payments of 1.00 on 10.00: exactly 10 succeed, paid 10.00, 10 payment rows', async () => {
    const id = await invoice((await subscriber()).id, 10);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => api.post(`/api/invoices/${id}/payment`, { amount: 1 }, { token: admin })),
    );
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status !== 200);
    expect(ok).toHaveLength(10);
    expect(refused.every((r) => r.status === 400 && r.body.message === 'amount exceeds balance')).toBe(true);
    expect(await row(id)).toMatchObject({ paidAmount: 1000, status: 'paid' });
    expect(await paymentsOf(id)).toHaveLength(10);
    expect(await ledgerOf(id)).toHaveLength(10);
  });
});

describe('POST /api/invoices/quick-pay/:subscriber_id', () => {
  it('oldest first over pending, partial and overdue; partial on the last; skips paid and void', async () => {
    const s = await subscriber();
    const newest = await invoice(s.id, 30);
    const oldest = await invoice(s.id, 10);
    const middle = await invoice(s.id, 20);
    const voided = await invoice(s.id, 50);
    const paid = await invoice(s.id, 5);
    await api.post(`/api/invoices/${paid}/payment`, { amount: 5 }, { token: admin });
    await api.post(`/api/invoices/${middle}/payment`, { amount: 5 }, { token: admin });
    await t.db.update(invoices).set({ issueDate: '2024-01-01', status: 'overdue' }).where(eq(invoices.id, oldest));
    await t.db.update(invoices).set({ issueDate: '2024-02-01' }).where(eq(invoices.id, middle));
    await t.db.update(invoices).set({ issueDate: '2023-01-01', status: 'void' }).where(eq(invoices.id, voided));

    const res = await api.post(
      `/api/invoices/quick-pay/${s.id}`,
      { amount: 40, method: 'card', reference: 'Q1' },
      { token: resA },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      applied: [
        { invoice_id: oldest, amount: 10 },
        { invoice_id: middle, amount: 15 },
        { invoice_id: newest, amount: 15 },
      ],
      remaining: 0,
    });
    expect(await row(oldest)).toMatchObject({ status: 'paid', paidAmount: 1000 });
    expect(await row(middle)).toMatchObject({ status: 'paid', paidAmount: 2000 });
    expect(await row(newest)).toMatchObject({ status: 'partial', paidAmount: 1500 });
    expect(await row(voided)).toMatchObject({ status: 'void', paidAmount: 0 });
    const ledger = await t.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.subscriberId, s.id), eq(transactions.reference, 'Q1')));
    expect(ledger.map((l) => l.amount).sort((a, b) => a - b)).toEqual([1000, 1500, 1500]);
  });

  it('the excess is credited to the wallet through the ledger', async () => {
    const s = await subscriber();
    const id = await invoice(s.id, 10);
    const res = await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 25.5 }, { token: admin });
    expect(res.body).toEqual({ success: true, applied: [{ invoice_id: id, amount: 10 }], remaining: 15.5 });
    const [sub] = await t.db.select().from(subscribers).where(eq(subscribers.id, s.id));
    expect(sub.walletBalance).toBe(1550);
    const credit = await t.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.subscriberId, s.id), eq(transactions.type, 'wallet_credit')));
    expect(credit).toHaveLength(1);
    expect(credit[0].amount).toBe(1550);
    const entries = await t.db.select().from(walletEntries).where(eq(walletEntries.subscriberId, s.id));
    expect(entries).toEqual([expect.objectContaining({ amount: 1550, transactionId: credit[0].id })]);
    // No open invoice at all: everything goes to the wallet.
    const all = await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 1 }, { token: admin });
    expect(all.body).toEqual({ success: true, applied: [], remaining: 1 });
  });

  it('a payment restoring an overdue suspension takes the subscriber before the invoice (no deadlock with quick-pay)', async () => {
    const s = await subscriber();
    const id = await invoice(s.id, 10);
    await t.db.update(invoices).set({ dueDate: '2020-01-01', status: 'overdue' }).where(eq(invoices.id, id));
    await t.db.update(subscribers).set({ blockedReason: 'overdue' }).where(eq(subscribers.id, s.id));
    // A quick-pay's order: the subscriber's row, then its invoices. The payment waits for the
    // first; before, it held the invoice and waited for the subscriber, and the two deadlocked.
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(subscribers).where(eq(subscribers.id, s.id)).for('update'),
      (tx) => tx.select().from(invoices).where(eq(invoices.id, id)).for('update'),
      () => api.post(`/api/invoices/${id}/payment`, { amount: 10 }, { token: admin }),
    );
    expect(res.status).toBe(200);
    expect(await row(id)).toMatchObject({ status: 'paid', paidAmount: 1000 });
    const [after] = await t.db.select().from(subscribers).where(eq(subscribers.id, s.id));
    expect(after.blockedReason).toBeNull();
  });

  it('an invoice is billed to the reseller the subscriber has under its lock, not before a transfer', async () => {
    const s = await subscriber(A.id);
    // A transfer to B holds the subscriber's row and commits while the create waits for it.
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(subscribers).where(eq(subscribers.id, s.id)).for('update'),
      (tx) => tx.update(subscribers).set({ resellerId: B.id }).where(eq(subscribers.id, s.id)),
      () =>
        api.post(
          '/api/invoices',
          { subscriber_id: s.id, items: [{ description: 'router', qty: 1, unit_price: 25 }], tax_rate: 0 },
          { token: admin },
        ),
    );
    expect(res.status).toBe(201);
    expect(await row(res.body.data.id)).toMatchObject({ subscriberId: s.id, resellerId: B.id, total: 2500 });
  });

  it('pays in the currency its amount was read in, though the system currency changes before its lock', async () => {
    const s = await subscriber();
    const id = await invoice(s.id, 10);
    try {
      // Another writer holds the subscriber's row and changes the system currency to JPY meanwhile.
      const res = await behindAWriter(
        t,
        (tx) => tx.select().from(subscribers).where(eq(subscribers.id, s.id)).for('update'),
        (tx) => saveSettings(tx, { currency: 'JPY' }),
        () => api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 10 }, { token: admin }),
      );
      // 10.00 USD pays the 10.00 USD invoice; it is not 1,000 yen credited to the wallet.
      expect(res.body).toEqual({ success: true, applied: [{ invoice_id: id, amount: 10 }], remaining: 0 });
      expect(await row(id)).toMatchObject({ status: 'paid', paidAmount: 1000 });
      const [sub] = await t.db.select().from(subscribers).where(eq(subscribers.id, s.id));
      expect(sub.walletBalance).toBe(0);
    } finally {
      await saveSettings(t.db, { currency: 'USD' });
    }
  });

  it('404 unknown subscriber, 403 other tree or user, 400 bad amount or method; nothing written', async () => {
    const s = await subscriber();
    await invoice(s.id, 10);
    const before = await counts();
    const missing = await api.post('/api/invoices/quick-pay/999999', { amount: 1 }, { token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('subscriber not found');
    expect((await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 1 }, { token: resB })).status).toBe(403);
    expect((await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 1 }, { token: userA })).status).toBe(403);
    for (const [body, message] of [
      [{ amount: 0 }, /^amount must be > 0$/],
      [{}, /^amount is required$/],
      [{ amount: 1, method: 'wallet' }, /^method must be one of/],
      [{ amount: 1, method: 'gold' }, /^method must be one of/],
      [{ amount: 0.001 }, /^amount has more decimal places/],
    ] as const) {
      const res = await api.post(`/api/invoices/quick-pay/${s.id}`, body, { token: admin });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(message);
    }
    expect(await counts()).toEqual(before);
  });

  it('concurrent quick-pays on one subscriber never overpay an invoice', async () => {
    const s = await subscriber();
    const ids = [await invoice(s.id, 7), await invoice(s.id, 5), await invoice(s.id, 8)];
    const results = await Promise.all(
      Array.from({ length: 12 }, () => api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 3 }, { token: admin })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    const rows = await t.db.select().from(invoices).where(inArray(invoices.id, ids));
    for (const r of rows) {
      expect(r.paidAmount).toBeLessThanOrEqual(r.total);
      expect(r.status).toBe('paid');
    }
    const applied = results
      .flatMap((r) => r.body.applied as { amount: number }[])
      .reduce((sum, a) => sum + Math.round(a.amount * 100), 0);
    const remaining = results.reduce((sum, r) => sum + Math.round(r.body.remaining * 100), 0);
    expect(applied).toBe(2000);
    expect(remaining).toBe(1600);
    const [sub] = await t.db.select().from(subscribers).where(eq(subscribers.id, s.id));
    expect(sub.walletBalance).toBe(1600);
  });
});

describe('POST /api/invoices/consolidate/:subscriber_id', () => {
  it('merges every pending invoice into a new pending one and voids the originals', async () => {
    const s = await subscriber();
    const a = await invoice(s.id, 10, { due_date: '2099-03-01' });
    const b = await invoice(s.id, 20.5, { due_date: '2099-02-01' });
    const partial = await invoice(s.id, 5);
    await api.post(`/api/invoices/${partial}/payment`, { amount: 1 }, { token: admin });
    const res = await api.post(`/api/invoices/consolidate/${s.id}`, { notes: 'merged' }, { token: resA });
    expect(res.status).toBe(200);
    const merged = res.body.data.consolidated_invoice;
    expect(res.body.data.voided_invoice_ids).toEqual([a, b]);
    expect(merged).toMatchObject({
      status: 'pending',
      total: 30.5,
      amount: 30.5,
      paid_amount: 0,
      notes: 'merged',
      kind: 'consolidated',
      due_date: '2099-02-01',
      subscriber_id: s.id,
    });
    expect(merged.items).toHaveLength(2);
    expect(merged.items.map((i: { amount: number }) => i.amount)).toEqual([10, 20.5]);
    const originals = await t.db
      .select()
      .from(invoices)
      .where(inArray(invoices.id, [a, b]));
    expect(originals.every((o) => o.status === 'void' && o.consolidatedInto === merged.id)).toBe(true);
    expect(await row(partial)).toMatchObject({ status: 'partial' });
    const pay = await api.post(`/api/invoices/${a}/payment`, { amount: 1 }, { token: admin });
    expect(pay.status).toBe(409);
    expect(pay.body.message).toBe('invoice is void');
    expect(await paymentsOf(merged.id)).toHaveLength(0);
  });

  it('409 with fewer than two pending invoices; 404, 403', async () => {
    const s = await subscriber();
    await invoice(s.id, 10);
    const before = await counts();
    const res = await api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: admin });
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('at least two pending invoices are needed to consolidate');
    expect((await api.post('/api/invoices/consolidate/999999', {}, { token: admin })).status).toBe(404);
    await invoice(s.id, 10);
    const b2 = await counts();
    expect((await api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: resB })).status).toBe(403);
    expect((await api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: userA })).status).toBe(403);
    expect(b2.invoices).toBe(before.invoices + 1);
    expect(await counts()).toEqual(b2);
  });

  it('a pending original already past due gives the merged invoice today as due date', async () => {
    const s = await subscriber();
    const a = await invoice(s.id, 10);
    await invoice(s.id, 10);
    await t.db.update(invoices).set({ issueDate: '2024-01-01', dueDate: '2024-01-08' }).where(eq(invoices.id, a));
    const res = await api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.consolidated_invoice.due_date).toBe(res.body.data.consolidated_invoice.issue_date);
  });

  it("a subscriber moved to another reseller: its old invoices stay the old reseller's (403 to the new one), and mixed ones are 409", async () => {
    const s = await subscriber(A.id);
    const old = [await invoice(s.id, 10), await invoice(s.id, 20)];
    await t.db.update(subscribers).set({ resellerId: B.id }).where(eq(subscribers.id, s.id));
    // Before: B merged A's invoices into one of its own (void of either alone is 403 to B).
    expect((await api.post(`/api/invoices/${old[0]}/void`, {}, { token: resB })).status).toBe(403);
    const byB = await api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: resB });
    expect([byB.status, byB.body.message]).toEqual([403, 'not authorized']);
    const [a, b] = [await row(old[0]), await row(old[1])];
    expect([a.status, b.status, a.resellerId, b.resellerId]).toEqual(['pending', 'pending', A.id, A.id]);
    // The admin merges A's two, billed to A still.
    const merged = await api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: admin });
    expect(merged.status).toBe(200);
    expect((await row(merged.body.data.consolidated_invoice.id)).resellerId).toBe(A.id);
    // A new invoice is B's: the two resellers' cannot be one invoice.
    await invoice(s.id, 5);
    const mixed = await api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: admin });
    expect([mixed.status, mixed.body.message]).toEqual([409, 'pending invoices are billed to different resellers']);
  });

  it('two concurrent consolidations do not both succeed', async () => {
    const s = await subscriber();
    for (let i = 0; i < 4; i++) await invoice(s.id, 10);
    const [x, y] = await Promise.all([
      api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: admin }),
      api.post(`/api/invoices/consolidate/${s.id}`, {}, { token: admin }),
    ]);
    expect([x.status, y.status].sort()).toEqual([200, 409]);
    const live = await t.db
      .select()
      .from(invoices)
      .where(and(eq(invoices.subscriberId, s.id), sql`${invoices.status} <> 'void'`));
    expect(live).toHaveLength(1);
    expect(live[0].total).toBe(4000);
  });
});

describe('Idempotency-Key', () => {
  const key = (k: string) => ({ headers: { 'idempotency-key': k } });

  it('create: a repeat returns the first response and writes nothing; another body is 409', async () => {
    const s = await subscriber();
    const body = { subscriber_id: s.id, items: [{ description: 'x', qty: 1, unit_price: 9 }] };
    const first = await api.post('/api/invoices', body, { token: admin, ...key('create-1') });
    expect(first.status).toBe(201);
    const before = await counts();
    const again = await api.post(
      '/api/invoices',
      { items: body.items, subscriber_id: s.id },
      { token: admin, ...key('create-1') },
    );
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await counts()).toEqual(before);
    const other = await api.post(
      '/api/invoices',
      { ...body, notes: 'different' },
      { token: admin, ...key('create-1') },
    );
    expect(other.status).toBe(409);
    expect(await counts()).toEqual(before);
    // Keys belong to a manager: another manager may use the same key.
    const mine = await api.post('/api/invoices', body, { token: resA, ...key('create-1') });
    expect(mine.status).toBe(201);
    expect(mine.body.data.id).not.toBe(first.body.data.id);
  });

  it('payment: concurrent repeats apply once and all get the same answer', async () => {
    const id = await invoice((await subscriber()).id, 10);
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        api.post(`/api/invoices/${id}/payment`, { amount: 2 }, { token: admin, ...key(`pay-${id}`) }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    for (const r of results) expect(r.body).toEqual(results[0].body);
    expect(await paymentsOf(id)).toHaveLength(1);
    expect(await row(id)).toMatchObject({ paidAmount: 200 });
    const other = await api.post(`/api/invoices/${id}/payment`, { amount: 3 }, { token: admin, ...key(`pay-${id}`) });
    expect(other.status).toBe(409);
    expect(other.body.message).toBe('Idempotency-Key was already used with a different request');
    // The same key on another route is another request too.
    const s2 = await subscriber();
    const cross = await api.post(
      `/api/invoices/quick-pay/${s2.id}`,
      { amount: 2 },
      { token: admin, ...key(`pay-${id}`) },
    );
    expect(cross.status).toBe(409);
  });

  it('quick-pay: a repeat does not pay twice; a failed request keeps no key', async () => {
    const s = await subscriber();
    await invoice(s.id, 10);
    const first = await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 4 }, { token: admin, ...key('qp-1') });
    const again = await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 4 }, { token: admin, ...key('qp-1') });
    expect(again.body).toEqual(first.body);
    const [sub] = await t.db.select({ id: subscribers.id }).from(subscribers).where(eq(subscribers.id, s.id));
    const paid = await t.db
      .select()
      .from(invoicePayments)
      .innerJoin(invoices, eq(invoices.id, invoicePayments.invoiceId))
      .where(eq(invoices.subscriberId, sub.id));
    expect(paid).toHaveLength(1);

    const id = await invoice(s.id, 1);
    const failed = await api.post(
      `/api/invoices/${id}/payment`,
      { amount: 5 },
      { token: admin, ...key('fails-first') },
    );
    expect(failed.status).toBe(400);
    expect(await t.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, 'fails-first'))).toHaveLength(0);
    const retry = await api.post(`/api/invoices/${id}/payment`, { amount: 1 }, { token: admin, ...key('fails-first') });
    expect(retry.status).toBe(200);
  });
});
