/**
 * Issue 27, prepaid cards through the API: batches (money and plan, reseller-charged, validation),
 * list/detail/cards/CSV, suspend and release, redemption by an operator (wallet credit with one
 * `prepaid_card` ledger row, open invoices oldest first, a plan card renewing a lapsed subscriber),
 * once only under 50 concurrent redemptions, the reseller tree, and the attempt limits with a
 * manager lifting the lockout.
 */
import { and, count, eq } from 'drizzle-orm';
import {
  cardBatches,
  cardRedeemAttempts,
  cards,
  invoices,
  resellers,
  services,
  subscribers,
  transactions,
} from '../../shared/db/schema';
import { behindAWriter } from '../helpers/row-locks';
import { renewalInvoices, withDefaultTax } from '../helpers/renewals';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let north: number;
let northChild: number;
let south: number;
let plan: number;
let bigPlan: number;
let seq = 0;

const today = () => new Date().toISOString().slice(0, 10);
const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const row = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];

async function mkSub(resellerId = north, extra: Record<string, unknown> = {}) {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `card${seq}@isp`, password: 'secret1', service_id: plan, reseller_id: resellerId, ...extra },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; username: string };
}

/** An auto-renew subscriber whose paid time ended yesterday. */
async function lapsedAutoRenew() {
  const sub = await mkSub(north, { auto_renew: true });
  await t.db
    .update(subscribers)
    .set({ expiryDate: daysFromToday(-1) })
    .where(eq(subscribers.id, sub.id));
  return sub;
}

function parseCsv(csv: string) {
  const [head, ...lines] = csv.trim().split('\n');
  expect(head).toBe('serial,pin,value,expires_at');
  return lines.map((l) => {
    const [serial, pin] = l.split(',');
    return { serial, pin };
  });
}

async function mkBatch(body: Record<string, unknown>, tok = admin) {
  const res = await api.post('/api/cards/batches', body, { token: tok });
  if (res.status !== 201) throw new Error(`batch failed ${res.status} ${JSON.stringify(res.body)}`);
  return { batch: res.body.data, cards: parseCsv(res.body.csv as string) };
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  const mkReseller = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await api.post('/api/resellers', { name, balance: 1000, currency: 'USD', ...extra }, { token: admin });
    expect(res.status).toBe(201);
    return res.body.data.id as number;
  };
  north = await mkReseller('north');
  northChild = await mkReseller('north-child', { parent_id: north });
  south = await mkReseller('south');
  const mkPlan = async (name: string, price: number) => {
    const p = await api.post('/api/services', { name, price, duration_days: 30, currency: 'USD' }, { token: admin });
    expect(p.status).toBe(201);
    return p.body.data.id as number;
  };
  plan = await mkPlan('home', 10);
  bigPlan = await mkPlan('fiber', 25);
  for (const r of [north, northChild, south])
    for (const p of [plan, bigPlan])
      expect(
        (
          await api.post(
            `/api/resellers/${r}/service-limits`,
            { service_id: p, max_subscribers: null },
            { token: admin },
          )
        ).status,
      ).toBe(200);
});
afterAll(() => t.close());

describe('batches', () => {
  it('makes a money batch: serials and PINs once in the CSV, PINs stored only hashed', async () => {
    const { batch, cards: made } = await mkBatch({ count: 25, value: 5, prefix: 'TOP' });
    expect(batch).toMatchObject({
      kind: 'money',
      value: 5,
      count: 25,
      currency: 'USD',
      status: 'active',
      reseller_id: null,
    });
    expect(made).toHaveLength(25);
    expect(new Set(made.map((c) => c.pin)).size).toBe(25);
    expect(made[0].serial).toBe(`TOP-${batch.id}-000001`);
    for (const c of made) expect(c.pin).toMatch(/^\d{14}$/);
    const rows = await t.db.select().from(cards).where(eq(cards.batchId, batch.id));
    expect(rows).toHaveLength(25);
    const stored = JSON.stringify(rows);
    for (const c of made) expect(stored).not.toContain(c.pin);

    const detail = await api.get(`/api/cards/batches/${batch.id}`, { token: admin });
    expect(detail.status).toBe(200);
    expect(detail.body.data.cards).toEqual({ active: 25, suspended: 0, used: 0 });
    expect(JSON.stringify(detail.body)).not.toContain(made[0].pin);

    const list = await api.get('/api/cards/batches', { token: admin });
    expect(list.body.data.map((b: { id: number }) => b.id)).toContain(batch.id);

    const page = await api.get(`/api/cards/batches/${batch.id}/cards?limit=10`, { token: admin });
    expect(page.body.data).toHaveLength(10);
    expect(page.body.pagination.total).toBe(25);

    const csv = await api.get(`/api/cards/batches/${batch.id}/csv`, { token: admin });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.text.trim().split('\n')).toHaveLength(26);
    expect(csv.text).toContain(`TOP-${batch.id}-000025,active`);
    expect(csv.text).not.toContain(made[0].pin);
  });

  it('refuses bad input with a 400 naming the field and writes nothing', async () => {
    const before = (await t.db.select({ n: count() }).from(cardBatches))[0].n;
    const bad: [Record<string, unknown>, string][] = [
      [{ count: 0, value: 5 }, 'count'],
      [{ count: 100_001, value: 5 }, 'count'],
      [{ count: 5 }, 'value'],
      [{ count: 5, value: 5, service_id: plan }, 'value'],
      [{ count: 5, value: 5.001 }, 'value'],
      [{ count: 5, value: 5, prefix: 'a-b' }, 'prefix'],
      [{ count: 5, service_id: 999999 }, 'service_id'],
      [{ count: 5, value: 5, expires_at: 'soon' }, 'expires_at'],
    ];
    for (const [body, field] of bad) {
      const res = await api.post('/api/cards/batches', body, { token: admin });
      expect([res.status, body]).toEqual([400, body]);
      expect(res.body.message).toContain(field);
    }
    expect((await t.db.select({ n: count() }).from(cardBatches))[0].n).toBe(before);
  });

  it("a reseller's batch is charged to its balance at creation (ledger row); short balance is 402 and nothing made", async () => {
    const before = (await t.db.select().from(resellers).where(eq(resellers.id, south)))[0].balance;
    const southTok = token('reseller', { resellerId: south, permissions: [] });
    const { batch } = await mkBatch({ count: 4, value: 2.5 }, southTok);
    expect(batch.reseller_id).toBe(south);
    const after = (await t.db.select().from(resellers).where(eq(resellers.id, south)))[0].balance;
    expect(before - after).toBe(1000);
    const debit = await t.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.resellerId, south), eq(transactions.type, 'reseller_debit')));
    expect(debit.map((d) => d.amount)).toContain(-1000);

    const batches = (await t.db.select({ n: count() }).from(cardBatches))[0].n;
    const tooMany = await api.post('/api/cards/batches', { count: 100_000, value: 100 }, { token: southTok });
    expect(tooMany.status).toBe(402);
    expect((await t.db.select({ n: count() }).from(cardBatches))[0].n).toBe(batches);
    expect((await t.db.select().from(resellers).where(eq(resellers.id, south)))[0].balance).toBe(after);

    // Another reseller neither sees nor touches it.
    const northTok = token('reseller', { resellerId: north, permissions: [] });
    expect((await api.get(`/api/cards/batches/${batch.id}`, { token: northTok })).status).toBe(403);
    const northList = await api.get('/api/cards/batches', { token: northTok });
    expect(northList.body.data.map((b: { id: number }) => b.id)).not.toContain(batch.id);
  });

  it('cards_reseller_charge = redemption: nothing charged at creation, each card at its redemption (402 when short)', async () => {
    expect((await api.put('/api/settings', { cards_reseller_charge: 'redemption' }, { token: admin })).status).toBe(
      200,
    );
    const poor = (await api.post('/api/resellers', { name: 'poor', balance: 3, currency: 'USD' }, { token: admin }))
      .body.data.id as number;
    await api.post(
      `/api/resellers/${poor}/service-limits`,
      { service_id: plan, max_subscribers: null },
      { token: admin },
    );
    const poorTok = token('reseller', { resellerId: poor, permissions: [] });
    const { batch, cards: made } = await mkBatch({ count: 2, value: 2 }, poorTok);
    expect(batch.charge_mode).toBe('redemption');
    const balance = async () => (await t.db.select().from(resellers).where(eq(resellers.id, poor)))[0].balance;
    expect(await balance()).toBe(300);
    const sub = await mkSub(poor);
    const first = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(first.status).toBe(200);
    expect(await balance()).toBe(100);
    const second = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[1].pin }, { token: admin });
    expect([second.status, second.body.message]).toEqual([402, 'insufficient reseller balance']);
    expect(await balance()).toBe(100);
    expect((await t.db.select().from(cards).where(eq(cards.serial, made[1].serial)))[0].status).toBe('active');
    expect((await row(sub.id)).walletBalance).toBe(200);
    await api.put('/api/settings', { cards_reseller_charge: 'creation' }, { token: admin });
  });

  it('suspends and releases a batch and a card; a missing one is 404', async () => {
    const { batch, cards: made } = await mkBatch({ count: 3, value: 1 });
    const sub = await mkSub();
    const s = await api.post(`/api/cards/batches/${batch.id}/suspend`, {}, { token: admin });
    expect(s.body.data.status).toBe('suspended');
    const refused = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect([refused.status, refused.body.message]).toEqual([409, 'card is suspended']);
    await api.post(`/api/cards/batches/${batch.id}/release`, {}, { token: admin });

    const [first] = await t.db.select().from(cards).where(eq(cards.serial, made[1].serial));
    expect((await api.post(`/api/cards/${first.id}/suspend`, {}, { token: admin })).body.data.status).toBe('suspended');
    const r2 = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[1].pin }, { token: admin });
    expect(r2.status).toBe(409);
    expect((await api.post(`/api/cards/${first.id}/release`, {}, { token: admin })).body.data.status).toBe('active');
    const ok = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[1].pin }, { token: admin });
    expect(ok.status).toBe(200);
    expect((await api.post(`/api/cards/${first.id}/suspend`, {}, { token: admin })).status).toBe(409);
    expect((await api.get(`/api/cards/batches/999999`, { token: admin })).status).toBe(404);
    expect((await api.get(`/api/cards/999999`, { token: admin })).status).toBe(404);
  });
});

describe('redeem', () => {
  it('a batch suspended while a redemption waits for its row refuses the card (409), nothing credited', async () => {
    const { batch, cards: made } = await mkBatch({ count: 1, value: 4 });
    const sub = await mkSub();
    // The batch's suspend holds its row and commits while the redemption waits: before, the
    // redemption read the batch as active without waiting and credited a suspended card.
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(cardBatches).where(eq(cardBatches.id, batch.id)).for('update'),
      (tx) => tx.update(cardBatches).set({ status: 'suspended' }).where(eq(cardBatches.id, batch.id)),
      () => api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin }),
    );
    expect([res.status, res.body.message]).toEqual([409, 'card is suspended']);
    expect(await t.db.select().from(transactions).where(eq(transactions.reference, made[0].serial))).toEqual([]);
    const [card] = await t.db.select().from(cards).where(eq(cards.serial, made[0].serial));
    expect(card.status).toBe('active');
  });

  it('a money card credits the wallet with one prepaid_card ledger row, then pays open invoices oldest first', async () => {
    const sub = await mkSub();
    const mkInv = async (amount: number, issue: string) => {
      const inv = await api.post(
        '/api/invoices',
        { subscriber_id: sub.id, items: [{ description: 'x', qty: 1, unit_price: amount }] },
        { token: admin },
      );
      expect(inv.status).toBe(201);
      await t.pool.query('update invoices set issue_date = $2 where id = $1', [inv.body.data.id, issue]);
      return inv.body.data.id as number;
    };
    const newer = await mkInv(4, daysFromToday(-1));
    const older = await mkInv(3, daysFromToday(-5));
    const { cards: made } = await mkBatch({ count: 1, value: 5 });
    const res = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ kind: 'money', amount: 5, serial: made[0].serial, wallet_balance: 0 });
    expect(res.body.data.paid_invoices).toEqual([
      { invoice_id: older, amount: 3 },
      { invoice_id: newer, amount: 2 },
    ]);
    const ledger = await t.db.select().from(transactions).where(eq(transactions.subscriberId, sub.id));
    const cardRows = ledger.filter((l) => l.method === 'prepaid_card');
    expect(cardRows).toHaveLength(1);
    expect(cardRows[0]).toMatchObject({ type: 'wallet_credit', amount: 500, reference: made[0].serial });
    expect((await row(sub.id)).walletBalance).toBe(0);
    const [card] = await t.db.select().from(cards).where(eq(cards.serial, made[0].serial));
    expect(card).toMatchObject({ status: 'used', usedBySubscriberId: sub.id, transactionId: cardRows[0].id });

    const again = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect([again.status, again.body.message]).toEqual([409, 'card already used']);
  });

  it('a plan card renews a lapsed subscriber on its plan (restored: not blocked, expiry moved)', async () => {
    const sub = await mkSub();
    await t.db
      .update(subscribers)
      .set({ expiryDate: daysFromToday(-2) })
      .where(eq(subscribers.id, sub.id));
    await api.put(`/api/subscribers/${sub.id}`, { full_name: 'Lapsed' }, { token: admin });
    expect((await row(sub.id)).blockedReason).toBe('expired');
    const { cards: made } = await mkBatch({ count: 1, service_id: bigPlan });
    const res = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ kind: 'plan', amount: 25, service_id: bigPlan });
    expect(res.body.data.renewal).toMatchObject({ renewed: true });
    const after = await row(sub.id);
    expect(after.serviceId).toBe(bigPlan);
    expect(after.blockedReason).toBeNull();
    expect(after.expiryDate).toBe(daysFromToday(30));
    expect(after.walletBalance).toBe(0);
    const ledger = await t.db.select().from(transactions).where(eq(transactions.subscriberId, sub.id));
    expect(ledger.filter((l) => l.method === 'prepaid_card')).toHaveLength(1);
  });

  it("a plan card onto another plan charges the days left's difference: an upgrade's invoice, a downgrade's wallet credit", async () => {
    const withDaysLeft = async (serviceId: number) => {
      const sub = await mkSub(north, { service_id: serviceId });
      await t.db
        .update(subscribers)
        .set({ expiryDate: daysFromToday(15) })
        .where(eq(subscribers.id, sub.id));
      return sub;
    };
    const redeem = async (subId: number, serviceId: number) => {
      const { cards: made } = await mkBatch({ count: 1, service_id: serviceId });
      const res = await api.post(`/api/subscribers/${subId}/redeem-card`, { pin: made[0].pin }, { token: admin });
      expect(res.status).toBe(200);
      expect(res.body.data.renewal).toMatchObject({ renewed: true, expiry_date: daysFromToday(45) });
      return t.db.select().from(invoices).where(eq(invoices.subscriberId, subId)).orderBy(invoices.id);
    };
    // home (10.00 / 30 days) with 15 days left onto fiber (25.00): those days cost 12.50 on fiber
    // against 5.00 paid on home, so 7.50 is owed (before, they passed to fiber for nothing). The
    // card's 25.00 pays the oldest invoice first, so the renewal's keeps 7.50 open.
    const up = await withDaysLeft(plan);
    const upInvoices = await redeem(up.id, bigPlan);
    expect(upInvoices.map((i) => [i.kind, i.total, i.paidAmount, i.status])).toEqual([
      ['service_change', 750, 750, 'paid'],
      ['renewal', 2500, 1750, 'partial'],
    ]);
    expect(await row(up.id)).toMatchObject({ serviceId: bigPlan, walletBalance: 0 });
    // fiber with 15 days left onto home: 12.50 paid, 5.00 worth on home, 7.50 back to the wallet
    // (before, lost).
    const down = await withDaysLeft(bigPlan);
    const downInvoices = await redeem(down.id, plan);
    expect(downInvoices.map((i) => [i.kind, i.total, i.status])).toEqual([['renewal', 1000, 'paid']]);
    expect(await row(down.id)).toMatchObject({ serviceId: plan, walletBalance: 750 });
    const credits = await t.db.select().from(transactions).where(eq(transactions.subscriberId, down.id));
    const walletSide = credits.filter((c) => c.type === 'wallet_credit' || c.type === 'plan_change_credit');
    expect(walletSide.map((c) => [c.type, c.method, c.amount])).toEqual([
      ['wallet_credit', 'prepaid_card', 1000],
      ['plan_change_credit', null, -750],
    ]);
  });

  it('a plan card whose renewal is refused (renewed today) leaves the plan as it was and its money in the wallet', async () => {
    const sub = await mkSub();
    expect((await api.post(`/api/subscribers/${sub.id}/renew`, {}, { token: admin })).status).toBe(200);
    const before = await row(sub.id);
    const { cards: made } = await mkBatch({ count: 1, service_id: bigPlan });
    const res = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.renewal).toMatchObject({ renewed: false, message: 'already renewed today' });
    const after = await row(sub.id);
    expect(after).toMatchObject({ serviceId: plan, expiryDate: before.expiryDate, walletBalance: 2500 });
    expect(before.serviceId).toBe(plan);
  });

  it('a money card for an expired auto-renew subscriber whose wallet now covers the price renews it', async () => {
    const sub = await lapsedAutoRenew();
    const { cards: made } = await mkBatch({ count: 1, value: 10 });
    const res = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.renewal).toMatchObject({ renewed: true });
    const after = await row(sub.id);
    expect(after.expiryDate > today()).toBe(true);
    expect(after.walletBalance).toBe(0);
  });

  it('a money card renews only when the wallet pays the renewal invoice whole, default tax included', async () => {
    await withDefaultTax(api, 10, async () => {
      const sub = await lapsedAutoRenew();
      const { cards: made } = await mkBatch({ count: 2, value: 10 });
      const first = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
      expect(first.status).toBe(200);
      // 10.00 covers the price, not the 11.00 the renewal invoice asks: no renewal on credit.
      expect(first.body.data.renewal).toBeNull();
      expect(await row(sub.id)).toMatchObject({ expiryDate: daysFromToday(-1), walletBalance: 1000 });
      const second = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[1].pin }, { token: admin });
      expect(second.body.data.renewal).toMatchObject({ renewed: true });
      const after = await row(sub.id);
      expect(after.expiryDate > today()).toBe(true);
      expect(after.walletBalance).toBe(900);
      expect(await renewalInvoices(t, sub.id)).toMatchObject([{ status: 'paid', total: 1100, paidAmount: 1100 }]);
    });
  });

  it('a plan card whose plan was repriced in another currency since is refused (409) and stays unused (active)', async () => {
    const p = await api.post(
      '/api/services',
      { name: 'repriced', price: 10, duration_days: 30, currency: 'USD' },
      { token: admin },
    );
    const { batch, cards: made } = await mkBatch({ count: 1, service_id: p.body.data.id });
    expect(batch.currency).toBe('USD');
    expect(
      (await api.put(`/api/services/${p.body.data.id}`, { currency: 'JPY', price: 1500 }, { token: admin })).status,
    ).toBe(200);
    const sub = await mkSub();
    const res = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect([res.status, res.body.message]).toEqual([
      409,
      "the card's plan is now priced in JPY; the card was issued in USD",
    ]);
    const [card] = await t.db.select().from(cards).where(eq(cards.batchId, batch.id));
    expect(card.status).toBe('active');
    expect((await row(sub.id)).walletBalance).toBe(0);
    expect(await t.db.select().from(transactions).where(eq(transactions.subscriberId, sub.id))).toEqual([]);
  });

  it('a plan-card batch is priced by its plan as held in its transaction, not before a currency change', async () => {
    const p = await api.post(
      '/api/services',
      { name: 'repriced-batch', price: 10, duration_days: 30, currency: 'USD' },
      { token: admin },
    );
    const [before] = await t.db.select().from(resellers).where(eq(resellers.id, north));
    // A plan PUT holding the plan's row commits a change to JPY while the batch waits for it.
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(services).where(eq(services.id, p.body.data.id)).for('update'),
      (tx) => tx.update(services).set({ currency: 'JPY', price: 1500 }).where(eq(services.id, p.body.data.id)),
      () =>
        api.post('/api/cards/batches', { count: 3, service_id: p.body.data.id, reseller_id: north }, { token: admin }),
    );
    // The USD reseller cannot buy JPY cards: refused, nothing charged (before: 30.00 USD for cards
    // no redemption would take).
    expect([res.status, res.body.message]).toEqual([409, 'reseller balance is not in JPY']);
    const [after] = await t.db.select().from(resellers).where(eq(resellers.id, north));
    expect(after.balance).toBe(before.balance);
    expect(await t.db.select().from(cardBatches).where(eq(cardBatches.serviceId, p.body.data.id))).toEqual([]);
  });

  it('50 concurrent redemptions of one PIN: exactly one succeeds, one ledger row', async () => {
    const subs = await Promise.all(Array.from({ length: 5 }, () => mkSub()));
    const { cards: made } = await mkBatch({ count: 1, value: 7 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api.post(`/api/subscribers/${subs[i % 5].id}/redeem-card`, { pin: made[0].pin }, { token: admin }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s !== 200 && s !== 409)).toEqual([]);
    const rows = await t.db.select().from(transactions).where(eq(transactions.reference, made[0].serial));
    expect(rows).toHaveLength(1);
  });

  it("a reseller's card redeems only in its tree (child yes, other tree 403), in the operator's batches anywhere", async () => {
    const northTok = token('reseller', { resellerId: north, permissions: [] });
    const { cards: made } = await mkBatch({ count: 2, value: 1 }, northTok);
    const other = await mkSub(south);
    const refused = await api.post(`/api/subscribers/${other.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect([refused.status, refused.body.message]).toEqual([403, "card belongs to another reseller's tree"]);
    expect((await t.db.select().from(cards).where(eq(cards.serial, made[0].serial)))[0].status).toBe('active');
    const child = await mkSub(northChild);
    const ok = await api.post(`/api/subscribers/${child.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(ok.status).toBe(200);
  });

  it('permission subscribers.refill_quota and the tree are required', async () => {
    const sub = await mkSub(south);
    const { cards: made } = await mkBatch({ count: 1, value: 1 });
    const without = token('user', { permissions: ['subscribers.view'] });
    expect(
      (await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: without })).status,
    ).toBe(403);
    const northStaff = token('reseller', { resellerId: north, permissions: ['subscribers.refill_quota'] });
    expect(
      (await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: northStaff })).status,
    ).toBe(403);
    expect((await api.post(`/api/subscribers/999999/redeem-card`, { pin: made[0].pin }, { token: admin })).status).toBe(
      404,
    );
    expect((await api.post(`/api/subscribers/${sub.id}/redeem-card`, {}, { token: admin })).status).toBe(400);
    expect((await t.db.select().from(cards).where(eq(cards.serial, made[0].serial)))[0].status).toBe('active');
  });

  it('guessing: 5 wrong PINs lock the subscriber out (429, recorded), a manager lifts it', async () => {
    const sub = await mkSub();
    const { cards: made } = await mkBatch({ count: 1, value: 2 });
    for (let i = 0; i < 5; i++) {
      const r = await api.post(
        `/api/subscribers/${sub.id}/redeem-card`,
        { pin: `0000${i}0000${i}0000` },
        { token: admin },
      );
      expect([r.status, r.body.message]).toEqual([400, 'invalid PIN']);
    }
    const locked = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(locked.status).toBe(429);
    const tries = await t.db.select().from(cardRedeemAttempts).where(eq(cardRedeemAttempts.subscriberId, sub.id));
    expect(tries.filter((a) => !a.ok)).toHaveLength(6);
    const listed = await api.get(`/api/cards/attempts?subscriber_id=${sub.id}`, { token: admin });
    expect(listed.body.data).toHaveLength(6);

    const noPerm = token('user', { permissions: ['subscribers.view'] });
    expect((await api.post('/api/cards/lockouts/lift', { subscriber_id: sub.id }, { token: noPerm })).status).toBe(403);
    const lift = await api.post('/api/cards/lockouts/lift', { subscriber_id: sub.id }, { token: admin });
    expect(lift.status).toBe(200);
    const ok = await api.post(`/api/subscribers/${sub.id}/redeem-card`, { pin: made[0].pin }, { token: admin });
    expect(ok.status).toBe(200);
  });

  it('guessing from one address over many subscribers is stopped too (20 per address)', async () => {
    const subs = await Promise.all(Array.from({ length: 5 }, () => mkSub()));
    let n = 0;
    for (const s of subs)
      for (let i = 0; i < 4; i++) {
        n += 1;
        const r = await api.post(
          `/api/subscribers/${s.id}/redeem-card`,
          { pin: `9${String(n).padStart(13, '0')}` },
          { token: admin },
        );
        expect(r.status).toBe(400);
      }
    const fresh = await mkSub();
    const r = await api.post(`/api/subscribers/${fresh.id}/redeem-card`, { pin: '12345678901234' }, { token: admin });
    expect(r.status).toBe(429);
    const lift = await api.post('/api/cards/lockouts/lift', { address: '127.0.0.1' }, { token: admin });
    expect(lift.body.data.cleared).toBeGreaterThan(0);
    const r2 = await api.post(`/api/subscribers/${fresh.id}/redeem-card`, { pin: '12345678901234' }, { token: admin });
    expect(r2.status).toBe(400);
    await api.post('/api/cards/lockouts/lift', { address: '127.0.0.1' }, { token: admin });
  });
});
