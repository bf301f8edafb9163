/** Commissions, proration and the overdue rule. */
import { eq, inArray } from 'drizzle-orm';
import { addDays, todayUtc } from '../../shared/billing';
import { invoices, resellers, services } from '../../shared/db/schema';
import { invoicesService } from '../../services/billing/invoices.service';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let A: typeof resellers.$inferSelect;
let B: typeof resellers.$inferSelect;
let plan: typeof services.$inferSelect;
let resA: string;
let resB: string;
let userA: string;

async function invoice(subscriberId: number, unitPrice: number, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await api.post(
    '/api/invoices',
    {
      subscriber_id: subscriberId,
      items: [{ description: 'x', qty: 1, unit_price: unitPrice }],
      tax_rate: 10,
      ...extra,
    },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data.id;
}
const status = async (id: number) =>
  (await t.db.select({ s: invoices.status }).from(invoices).where(eq(invoices.id, id)))[0].s;

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  A = await seedReseller(t.db, { name: 'A', commissionRate: '10' });
  B = await seedReseller(t.db, { name: 'B', commissionRate: '20' });
  plan = await seedPlan(t.db, { price: 3000, durationDays: 30 });
  resA = token('reseller', { managerId: 30, resellerId: A.id });
  resB = token('reseller', { managerId: 31, resellerId: B.id });
  userA = token('user', { managerId: 32, resellerId: A.id });
});
afterAll(() => t.close());

describe('GET /api/invoices/commissions', () => {
  let ids: Record<string, number>;
  beforeAll(async () => {
    const sA = await seedSubscriber(t.db, { resellerId: A.id, serviceId: plan.id });
    const sB = await seedSubscriber(t.db, { resellerId: B.id, serviceId: plan.id });
    ids = {
      janPaid: await invoice(sA.id, 100),
      janPending: await invoice(sA.id, 50),
      febPaid: await invoice(sA.id, 30),
      febVoid: await invoice(sA.id, 1000),
      bPaid: await invoice(sB.id, 70),
    };
    for (const k of ['janPaid', 'febPaid', 'bPaid']) {
      const [r] = await t.db.select().from(invoices).where(eq(invoices.id, ids[k]));
      await api.post(`/api/invoices/${r.id}/payment`, { amount: r.total / 100 }, { token: admin });
    }
    await t.db
      .update(invoices)
      .set({ issueDate: '2025-01-10' })
      .where(inArray(invoices.id, [ids.janPaid, ids.janPending]));
    await t.db
      .update(invoices)
      .set({ issueDate: '2025-02-03' })
      .where(inArray(invoices.id, [ids.febPaid, ids.febVoid, ids.bPaid]));
    await t.db.update(invoices).set({ status: 'void' }).where(eq(invoices.id, ids.febVoid));
  });

  it("paid invoices by default, monthly rows, the reseller's rate", async () => {
    const res = await api.get(`/api/invoices/commissions?reseller_id=${A.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        total_commission: 13,
        total_invoiced: 130,
        rate: 10,
        currency: 'USD',
        rows: [
          { month: '2025-01', invoiced: 100, commission: 10 },
          { month: '2025-02', invoiced: 30, commission: 3 },
        ],
      },
    });
  });

  it('a reseller gets its own by default; status and dates filter; 403 for another tree', async () => {
    const own = await api.get('/api/invoices/commissions', { token: resA });
    expect(own.body.data).toMatchObject({ total_commission: 13, rate: 10 });
    const pending = await api.get('/api/invoices/commissions?status=pending', { token: resA });
    expect(pending.body.data).toMatchObject({
      total_commission: 5,
      total_invoiced: 50,
      rows: [{ month: '2025-01', invoiced: 50, commission: 5 }],
    });
    const feb = await api.get('/api/invoices/commissions?from=2025-02-01&to=2025-02-28', { token: userA });
    expect(feb.status).toBe(200);
    expect(feb.body.data.rows).toEqual([{ month: '2025-02', invoiced: 30, commission: 3 }]);
    expect((await api.get(`/api/invoices/commissions?reseller_id=${A.id}`, { token: resB })).status).toBe(403);
    expect((await api.get('/api/invoices/commissions?reseller_id=99999', { token: admin })).status).toBe(400);
    expect((await api.get('/api/invoices/commissions?from=2025-02-31', { token: admin })).status).toBe(400);
  });

  it("sums one currency: the reseller's own by default, another when asked, never both added up", async () => {
    const s = await seedSubscriber(t.db, { resellerId: A.id, serviceId: plan.id });
    const yen = await invoice(s.id, 2000, { currency: 'JPY', tax_rate: 0 });
    await api.post(`/api/invoices/${yen}/payment`, { amount: 2000 }, { token: admin });
    await t.db.update(invoices).set({ issueDate: '2025-02-10' }).where(eq(invoices.id, yen));
    const usd = await api.get(`/api/invoices/commissions?reseller_id=${A.id}`, { token: admin });
    expect(usd.body.data).toMatchObject({ total_commission: 13, total_invoiced: 130, currency: 'USD' });
    const jpy = await api.get(`/api/invoices/commissions?reseller_id=${A.id}&currency=JPY`, { token: admin });
    expect(jpy.body.data).toEqual({
      total_commission: 200,
      total_invoiced: 2000,
      rate: 10,
      currency: 'JPY',
      rows: [{ month: '2025-02', invoiced: 2000, commission: 200 }],
    });
    const bad = await api.get('/api/invoices/commissions?currency=XYZ', { token: admin });
    expect([bad.status, bad.body.message]).toEqual([400, 'currency must be an ISO 4217 code']);
    await t.db.update(invoices).set({ status: 'void' }).where(eq(invoices.id, yen));
  });

  it('commission_basis invoiced counts every non-void invoice; admin without reseller gets the effective rate', async () => {
    expect((await api.put('/api/settings', { commission_basis: 'invoiced' }, { token: admin })).status).toBe(200);
    const res = await api.get(`/api/invoices/commissions?reseller_id=${A.id}`, { token: admin });
    expect(res.body.data).toMatchObject({ total_commission: 18, total_invoiced: 180, rate: 10 });
    const all = await api.get('/api/invoices/commissions', { token: admin });
    // A: 180 invoiced / 18 commission; B: 70 / 14 -> 32 / 250 = 12.8%.
    expect(all.body.data).toMatchObject({ total_commission: 32, total_invoiced: 250, rate: 12.8 });
    await api.put('/api/settings', { commission_basis: 'paid' }, { token: admin });
  });
});

describe('POST /api/invoices/prorate', () => {
  it('credit = old x unused / period, charge = new x remaining / period, each rounded once', async () => {
    const newPlan = await seedPlan(t.db, { price: 4500, durationDays: 30 });
    const s = await seedSubscriber(t.db, { resellerId: A.id, serviceId: plan.id, expiryDate: addDays(todayUtc(), 10) });
    const res = await api.post(
      '/api/invoices/prorate',
      { subscriber_id: s.id, new_service_id: newPlan.id },
      { token: resA },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { old_unused_credit: 10, new_service_charge: 15, net_amount_due: 5, days_remaining: 10 },
    });
    const cheaper = await seedPlan(t.db, { price: 1000, durationDays: 7 });
    const down = await api.post(
      '/api/invoices/prorate',
      { subscriber_id: s.id, new_service_id: cheaper.id },
      { token: admin },
    );
    // 10 x 10.00 / 7 = 14.2857 -> 14.29
    expect(down.body.data).toEqual({
      old_unused_credit: 10,
      new_service_charge: 14.29,
      net_amount_due: 4.29,
      days_remaining: 10,
    });
    // Nothing is written.
    expect(await t.db.select().from(invoices).where(eq(invoices.subscriberId, s.id))).toHaveLength(0);
  });

  it("uses the subscriber's own price when it overrides the plan", async () => {
    const newPlan = await seedPlan(t.db, { price: 3000, durationDays: 30 });
    const s = await seedSubscriber(t.db, {
      resellerId: A.id,
      serviceId: plan.id,
      expiryDate: addDays(todayUtc(), 15),
      price: 1000,
      overridePrice: true,
    });
    const res = await api.post(
      '/api/invoices/prorate',
      { subscriber_id: s.id, new_service_id: newPlan.id },
      { token: admin },
    );
    expect(res.body.data).toEqual({
      old_unused_credit: 5,
      new_service_charge: 15,
      net_amount_due: 10,
      days_remaining: 15,
    });
  });

  it('errors: 404 subscriber, 400 new_service_id, 403 other tree or user, 400 bad body', async () => {
    const s = await seedSubscriber(t.db, { resellerId: A.id, serviceId: plan.id });
    const missing = await api.post(
      '/api/invoices/prorate',
      { subscriber_id: 999999, new_service_id: plan.id },
      { token: admin },
    );
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('subscriber not found');
    const noPlan = await api.post(
      '/api/invoices/prorate',
      { subscriber_id: s.id, new_service_id: 999999 },
      { token: admin },
    );
    expect(noPlan.status).toBe(400);
    expect(noPlan.body.message).toBe('new_service_id not found');
    expect(
      (await api.post('/api/invoices/prorate', { subscriber_id: s.id, new_service_id: plan.id }, { token: resB }))
        .status,
    ).toBe(403);
    expect(
      (await api.post('/api/invoices/prorate', { subscriber_id: s.id, new_service_id: plan.id }, { token: userA }))
        .status,
    ).toBe(403);
    const bad = await api.post('/api/invoices/prorate', { subscriber_id: s.id }, { token: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('new_service_id is required');
  });
});

describe('overdue', () => {
  it('the job marks pending/partial invoices past due with a balance; payments on them still work', async () => {
    const s = await seedSubscriber(t.db, { resellerId: A.id, serviceId: plan.id });
    const late = await invoice(s.id, 10);
    const latePartial = await invoice(s.id, 10);
    const latePaid = await invoice(s.id, 10);
    const dueToday = await invoice(s.id, 10);
    const lateVoid = await invoice(s.id, 10);
    await api.post(`/api/invoices/${latePartial}/payment`, { amount: 1 }, { token: admin });
    await api.post(`/api/invoices/${latePaid}/payment`, { amount: 11 }, { token: admin });
    const yesterday = addDays(todayUtc(), -1);
    await t.db
      .update(invoices)
      .set({ dueDate: yesterday, issueDate: addDays(todayUtc(), -30) })
      .where(inArray(invoices.id, [late, latePartial, latePaid, lateVoid]));
    await t.db.update(invoices).set({ dueDate: todayUtc() }).where(eq(invoices.id, dueToday));
    await t.db.update(invoices).set({ status: 'void' }).where(eq(invoices.id, lateVoid));

    const { marked } = await t.app.broker.call<{ marked: number }, Record<string, never>>('billing.markOverdue', {});
    expect(marked).toBe(2);
    expect([
      await status(late),
      await status(latePartial),
      await status(latePaid),
      await status(dueToday),
      await status(lateVoid),
    ]).toEqual(['overdue', 'overdue', 'paid', 'pending', 'void']);

    const part = await api.post(`/api/invoices/${late}/payment`, { amount: 5 }, { token: admin });
    expect(part.body.data.invoice).toMatchObject({ status: 'overdue', balance: 6 });
    const rest = await api.post(`/api/invoices/${late}/payment`, { amount: 6 }, { token: admin });
    expect(rest.body.data.invoice).toMatchObject({ status: 'paid', balance: 0 });
    const filtered = await api.get(`/api/invoices?status=overdue&subscriber_id=${s.id}`, { token: admin });
    expect(filtered.body.data.map((i: { id: number }) => i.id)).toEqual([latePartial]);
    expect((await api.put(`/api/invoices/${latePartial}`, { notes: 'x' }, { token: admin })).status).toBe(409);
  });

  it('runs when the billing service starts', async () => {
    const s = await seedSubscriber(t.db, { resellerId: A.id, serviceId: plan.id });
    const id = await invoice(s.id, 10);
    await t.db
      .update(invoices)
      .set({ dueDate: addDays(todayUtc(), -2), issueDate: addDays(todayUtc(), -9) })
      .where(eq(invoices.id, id));
    // Restart the billing service in the running broker: its `started` hook runs the job.
    const broker = t.app.broker;
    await broker.destroyService(broker.getLocalService('billing')!);
    const restarted = broker.createService(invoicesService);
    await broker.waitForServices('billing');
    expect(restarted.name).toBe('billing');
    expect(await status(id)).toBe('overdue');
  });
});
