/**
 * Self-care writes (issue 40, docs/self-care.md): renew, data top-up, card, plan change and
 * password, each through the operators' action with the subscriber as audit actor.
 */
import { and, eq, sql } from 'drizzle-orm';
import { behindAWriter } from '../helpers/row-locks';
import { systemAuth } from '../../shared/auth/claims';
import { decrypt } from '../../shared/auth/secrets';
import { auditLog, invoices, onlineCheckouts, radcheck, subscribers } from '../../shared/db/schema';
import { StripeDouble } from '../sim/stripe-double';
import { admin, selfCareWorld, type SelfCareWorld } from './self-care-fixtures';

let w: SelfCareWorld;
let stripe: StripeDouble;
const GB = 1024 ** 3;
const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const row = async (id: number) => (await w.t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const audits = (action: string, id: number) =>
  w.t.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.action, action), eq(auditLog.entityId, id)));

async function fund(id: number, amount: number) {
  const res = await w.api.post(`/api/subscribers/${id}/add-balance`, { amount }, { token: admin });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  w = await selfCareWorld();
  stripe = new StripeDouble('sk_test_sc_actions');
  await stripe.start();
});
afterAll(async () => {
  await stripe?.stop();
  await w?.t.close();
});

describe('renew', () => {
  it('from the wallet when it covers the price, as the subscriber; not twice a day', async () => {
    const sub = await w.mkSub();
    await w.t.db
      .update(subscribers)
      .set({ expiryDate: daysFromToday(3) })
      .where(eq(subscribers.id, sub.id));
    await fund(sub.id, 10);
    const tok = await w.signIn(sub.username, sub.password);
    const res = await w.api.post('/api/my/renew', {}, { token: tok });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ renewed: true, expiry_date: daysFromToday(33) });
    const after = await row(sub.id);
    expect(after.walletBalance).toBe(0);
    const [inv] = await w.t.db.select().from(invoices).where(eq(invoices.id, res.body.data.invoice_id));
    expect(inv).toMatchObject({ subscriberId: sub.id, status: 'paid', total: 1000 });
    expect(await audits('subscriber.renew', sub.id)).toMatchObject([
      { actorType: 'subscriber', actorSubscriberId: sub.id, managerId: null },
    ]);
    const again = await w.api.post('/api/my/renew', {}, { token: tok });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('already renewed today');
  });

  it('a checkout for the price when the wallet falls short', async () => {
    const sub = await w.mkSub();
    const tok = await w.signIn(sub.username, sub.password);
    expect((await w.api.post('/api/my/renew', {}, { token: tok })).status).toBe(409);
    await w.setSettings({
      payment_provider: 'stripe',
      stripe_secret_key: 'sk_test_sc_actions',
      stripe_webhook_secret: 'whsec_sc_actions',
      stripe_api_base_url: stripe.baseUrl,
      allow_private_targets: true,
    });
    const res = await w.api.post('/api/my/renew', {}, { token: tok });
    expect(res.status).toBe(200);
    expect(res.body.data.renewed).toBe(false);
    const [c] = await w.t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.subscriberId, sub.id));
    expect(c).toMatchObject({ purpose: 'renewal', amount: 1000, url: res.body.data.url });

    // Online payment turned off in self-care: no checkout, the wallet is all there is.
    const other = await w.mkSub();
    await w.setSettings({ self_care_payments: false });
    try {
      const off = await w.api.post('/api/my/renew', {}, { token: await w.signIn(other.username, other.password) });
      expect([off.status, off.body.message]).toEqual([402, 'wallet balance does not cover the price']);
      expect(await w.t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.subscriberId, other.id))).toEqual([]);
    } finally {
      await w.setSettings({ self_care_payments: true });
    }
  });
});

describe('renew decides on the wallet under the row lock', () => {
  it('a wallet spent while the renewal waited for the row is 402 and renews nothing (no renewal on credit)', async () => {
    const sub = await w.mkSub();
    await fund(sub.id, 10);
    const before = await row(sub.id);
    const tok = await w.signIn(sub.username, sub.password);
    const res = await behindAWriter(
      w.t,
      (tx) => tx.execute(sql`select id from subscribers where id = ${sub.id} for update`),
      (tx) => tx.execute(sql`update subscribers set wallet_balance = 0 where id = ${sub.id}`),
      () => w.api.post('/api/my/renew', {}, { token: tok }),
    );
    expect([res.status, res.body.message]).toEqual([402, 'wallet balance does not cover the price']);
    expect(await row(sub.id)).toMatchObject({ expiryDate: before.expiryDate, lastRenewedOn: null, walletBalance: 0 });
    expect(await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id))).toEqual([]);
  });

  it('a tax rate raised while the renewal waited for the row is the one it decides with: 402, nothing owed', async () => {
    const sub = await w.mkSub();
    await fund(sub.id, 10);
    const before = await row(sub.id);
    const tok = await w.signIn(sub.username, sub.password);
    try {
      const res = await behindAWriter(
        w.t,
        (tx) => tx.execute(sql`select id from subscribers where id = ${sub.id} for update`),
        (tx) =>
          tx.execute(sql`insert into settings (key, value) values ('default_tax_rate', '10'::jsonb)
                         on conflict (key) do update set value = excluded.value`),
        () => w.api.post('/api/my/renew', {}, { token: tok }),
      );
      expect([res.status, res.body.message]).toEqual([402, 'wallet balance does not cover the price']);
      expect(await row(sub.id)).toMatchObject({ expiryDate: before.expiryDate, walletBalance: 1000 });
      expect(await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id))).toEqual([]);
    } finally {
      await w.setSettings({ default_tax_rate: 0 });
    }
  });

  it('with a default tax, a wallet holding the price alone gets a checkout for price and tax', async () => {
    const sub = await w.mkSub();
    await fund(sub.id, 10);
    await w.setSettings({
      default_tax_rate: 10,
      payment_provider: 'stripe',
      stripe_secret_key: 'sk_test_sc_actions',
      stripe_webhook_secret: 'whsec_sc_actions',
      stripe_api_base_url: stripe.baseUrl,
      allow_private_targets: true,
    });
    try {
      const tok = await w.signIn(sub.username, sub.password);
      const account = await w.api.get('/api/my/account', { token: tok });
      expect(account.body.data.plan).toMatchObject({ price: 10, renewal_total: 11, currency: 'USD' });
      const res = await w.api.post('/api/my/renew', {}, { token: tok });
      expect(res.status).toBe(200);
      expect(res.body.data.renewed).toBe(false);
      const [c] = await w.t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.subscriberId, sub.id));
      expect(c).toMatchObject({ purpose: 'renewal', amount: 1100 });
      expect((await row(sub.id)).walletBalance).toBe(1000);
    } finally {
      await w.setSettings({ default_tax_rate: 0 });
    }
  });
});

describe('data top-up', () => {
  it('an offered size, paid from the wallet, adds the extra quota', async () => {
    const sub = await w.mkSub();
    const tok = await w.signIn(sub.username, sub.password);
    await w.setSettings({ self_care_data_topups: [{ gb: 5, price: 3 }] });
    const offers = await w.api.get('/api/my/topup-data', { token: tok });
    expect(offers.body.data).toEqual([{ gb: 5, price: 3, currency: 'USD' }]);
    const notOffered = await w.api.post('/api/my/topup-data', { gb: 7 }, { token: tok });
    expect(notOffered.status).toBe(400);
    const short = await w.api.post('/api/my/topup-data', { gb: 5 }, { token: tok });
    expect(short.status).toBe(402);
    expect(short.body.message).toBe('wallet balance does not cover the price');
    expect((await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id))).length).toBe(0);
    await fund(sub.id, 4);
    const ok = await w.api.post('/api/my/topup-data', { gb: 5 }, { token: tok });
    expect(ok.status).toBe(200);
    const after = await row(sub.id);
    expect(after.extraQuotaBytes).toBe(5 * GB);
    expect(after.walletBalance).toBe(100);
    const [inv] = await w.t.db.select().from(invoices).where(eq(invoices.id, ok.body.data.invoice_id));
    expect(inv).toMatchObject({ status: 'paid', total: 300, subscriberId: sub.id });
    expect(await audits('subscriber.topup_data', sub.id)).toMatchObject([{ actorType: 'subscriber' }]);
  });

  it('two bought at once from a wallet that pays one: one is added and paid, the other 402 with nothing left behind', async () => {
    const sub = await w.mkSub();
    const tok = await w.signIn(sub.username, sub.password);
    await w.setSettings({ self_care_data_topups: [{ gb: 5, price: 3 }] });
    await fund(sub.id, 4);
    const both = await Promise.all([1, 2].map(() => w.api.post('/api/my/topup-data', { gb: 5 }, { token: tok })));
    expect(both.map((r) => [r.status, r.body.message]).sort()).toEqual([
      [200, undefined],
      [402, 'wallet balance does not cover the price'],
    ]);
    expect(await row(sub.id)).toMatchObject({ extraQuotaBytes: 5 * GB, walletBalance: 100 });
    const bills = await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id));
    expect(bills.map((b) => [b.status, b.total])).toEqual([['paid', 300]]);
  });
});

describe('recharge card', () => {
  it('a money card credits my wallet; a wrong PIN is refused', async () => {
    const sub = await w.mkSub();
    const tok = await w.signIn(sub.username, sub.password);
    const made = await w.api.post('/api/cards/batches', { count: 1, value: 7 }, { token: admin });
    expect(made.status).toBe(201);
    const pin = (made.body.csv as string).trim().split('\n')[1].split(',')[1];
    const wrong = await w.api.post('/api/my/redeem-card', { pin: '0000-0000-0000' }, { token: tok });
    expect(wrong.status).toBe(400);
    const ok = await w.api.post('/api/my/redeem-card', { pin }, { token: tok });
    expect(ok.status).toBe(200);
    expect(ok.text).not.toContain(pin);
    expect((await row(sub.id)).walletBalance).toBe(700);
    const [redeemed] = await w.t.db.select().from(auditLog).where(eq(auditLog.action, 'card.redeem'));
    expect(redeemed).toMatchObject({ actorType: 'subscriber', actorSubscriberId: sub.id });
    const used = await w.api.post('/api/my/redeem-card', { pin }, { token: tok });
    expect(used.status).toBe(409);
  });
});

describe('wallet money pays what the subscriber owes', () => {
  it('renew while an overdue invoice blocks access: refused unless the wallet pays both, then pays it first and restores', async () => {
    const sub = await w.mkSub();
    await w.t.db
      .update(subscribers)
      .set({ expiryDate: daysFromToday(3) })
      .where(eq(subscribers.id, sub.id));
    const inv = await w.api.post(
      '/api/invoices',
      { subscriber_id: sub.id, items: [{ description: 'install', qty: 1, unit_price: 4 }], tax_rate: 0 },
      { token: admin },
    );
    expect(inv.status).toBe(201);
    await w.t.pool.query('update invoices set issue_date = $2, due_date = $2 where id = $1', [
      inv.body.data.id,
      daysFromToday(-10),
    ]);
    expect((await w.api.put('/api/settings', { suspend_overdue_after_days: 2 }, { token: admin })).status).toBe(200);
    try {
      await w.api.put(`/api/subscribers/${sub.id}`, { full_name: 'Late' }, { token: admin });
      expect((await row(sub.id)).blockedReason).toBe('overdue');
      const tok = await w.signIn(sub.username, sub.password);
      // 10.00 covers the renewal alone: before, it renewed and the subscriber stayed blocked. Now
      // the renewal goes to a checkout for both (online payment is configured here).
      await fund(sub.id, 10);
      const short = await w.api.post('/api/my/renew', {}, { token: tok });
      expect([short.status, short.body.data.renewed]).toEqual([200, false]);
      const [c] = await w.t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.subscriberId, sub.id));
      expect(c).toMatchObject({ purpose: 'renewal', amount: 1400 });
      expect(await row(sub.id)).toMatchObject({ walletBalance: 1000, expiryDate: daysFromToday(3) });
      // The renewal itself decides the same under the row lock: 402, nothing paid.
      const direct = await w.t.app.broker
        .call('subscribers.renewFromWallet', { id: sub.id }, { meta: { auth: systemAuth('test') } })
        .catch((err: { code: number; message: string }) => [err.code, err.message]);
      expect(direct).toEqual([402, 'wallet balance does not cover the price']);
      expect((await w.t.db.select().from(invoices).where(eq(invoices.id, inv.body.data.id)))[0].paidAmount).toBe(0);
      await fund(sub.id, 4);
      const ok = await w.api.post('/api/my/renew', {}, { token: tok });
      expect(ok.status).toBe(200);
      expect(await row(sub.id)).toMatchObject({
        walletBalance: 0,
        expiryDate: daysFromToday(33),
        blockedReason: null,
      });
      const [paid] = await w.t.db.select().from(invoices).where(eq(invoices.id, inv.body.data.id));
      expect(paid.status).toBe('paid');
    } finally {
      await w.api.put('/api/settings', { suspend_overdue_after_days: null }, { token: admin });
    }
  });
});

describe('a deactivated account', () => {
  it('buys nothing: renew, top-up, card and plan change are 409, the wallet untouched; its invoices can still be read', async () => {
    await w.setSettings({ self_care_data_topups: [{ gb: 5, price: 3 }] });
    const sub = await w.mkSub();
    await fund(sub.id, 50);
    const tok = await w.signIn(sub.username, sub.password);
    expect((await w.api.post(`/api/subscribers/${sub.id}/deactivate`, {}, { token: admin })).status).toBe(200);
    const made = await w.api.post('/api/cards/batches', { count: 1, value: 7 }, { token: admin });
    const pin = (made.body.csv as string).trim().split('\n')[1].split(',')[1];
    const other = await w.api.post(
      '/api/services',
      { name: 'open-to-all', price: 15, duration_days: 30, currency: 'USD', self_service: true },
      { token: admin },
    );
    const limit = { service_id: other.body.data.id, max_subscribers: null };
    expect((await w.api.post(`/api/resellers/${w.reseller}/service-limits`, limit, { token: admin })).status).toBe(200);
    const tries = [
      await w.api.post('/api/my/renew', {}, { token: tok }),
      await w.api.post('/api/my/topup-data', { gb: 5 }, { token: tok }),
      await w.api.post('/api/my/redeem-card', { pin }, { token: tok }),
      await w.api.post('/api/my/change-plan', { service_id: other.body.data.id }, { token: tok }),
    ];
    // Before, each went through: a renewal charged wallet and reseller for time RADIUS refused.
    for (const res of tries)
      expect([res.status, res.body.message]).toEqual([409, 'your account is deactivated: ask your provider']);
    expect(await row(sub.id)).toMatchObject({ walletBalance: 5000, status: 'inactive', extraQuotaBytes: 0 });
    expect(await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id))).toEqual([]);
    expect((await w.api.get('/api/my/account', { token: tok })).body.data.status).toBe('inactive');
    expect((await w.api.get('/api/my/invoices', { token: tok })).status).toBe(200);
    // Out of the other tests' plan lists.
    const closed = { self_service: false };
    expect((await w.api.put(`/api/services/${other.body.data.id}`, closed, { token: admin })).status).toBe(200);
  });
});

describe('plan change', () => {
  const mk = async (name: string, price: number, selfService: boolean, days = 30) => {
    const p = await w.api.post(
      '/api/services',
      { name, price, duration_days: days, currency: 'USD', self_service: selfService },
      { token: admin },
    );
    expect(p.status).toBe(201);
    expect(p.body.data.self_service).toBe(selfService);
    await w.api.post(
      `/api/resellers/${w.reseller}/service-limits`,
      { service_id: p.body.data.id, max_subscribers: null },
      { token: admin },
    );
    return p.body.data.id as number;
  };

  it('only to self-service plans, with the proration shown first', async () => {
    const fast = await mk('fast', 20, true);
    const hidden = await mk('staff', 1, false);
    const sub = await w.mkSub();
    await w.t.db
      .update(subscribers)
      .set({ expiryDate: daysFromToday(15) })
      .where(eq(subscribers.id, sub.id));
    const tok = await w.signIn(sub.username, sub.password);
    const plans = await w.api.get('/api/my/plans', { token: tok });
    expect(plans.body.data.map((p: { id: number; current: boolean }) => [p.id, p.current])).toEqual([
      [w.plan, true],
      [fast, false],
    ]);
    for (const id of [hidden, w.plan, 999999]) {
      expect((await w.api.get(`/api/my/change-plan?service_id=${id}`, { token: tok })).status).toBe(403);
      expect((await w.api.post('/api/my/change-plan', { service_id: id }, { token: tok })).status).toBe(403);
    }
    const quote = await w.api.get(`/api/my/change-plan?service_id=${fast}`, { token: tok });
    expect(quote.status).toBe(200);
    expect(quote.body.data).toMatchObject({ subscriber_id: sub.id, service_id: fast, days_remaining: 15 });
    const due = quote.body.data.net_amount_due as number;
    expect(due).toBeGreaterThan(0);
    const moved = await w.api.post('/api/my/change-plan', { service_id: fast }, { token: tok });
    expect(moved.status).toBe(200);
    expect(moved.body.data.plan).toMatchObject({ id: fast, name: 'fast' });
    const bills = await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id));
    expect(bills.map((b) => [b.amount, b.status])).toEqual([[Math.round(due * 100), 'pending']]);
    expect(await audits('subscriber.change_service', sub.id)).toMatchObject([{ actorType: 'subscriber' }]);

    // A price of its own set by the operator stays with a move: the subscriber cannot take it to another plan.
    const discounted = await w.mkSub({ override_price: true, price: 5 });
    const own = await w.signIn(discounted.username, discounted.password);
    for (const res of [
      await w.api.get(`/api/my/change-plan?service_id=${fast}`, { token: own }),
      await w.api.post('/api/my/change-plan', { service_id: fast }, { token: own }),
    ])
      expect([res.status, res.body.message]).toEqual([
        409,
        'your price is set by your provider: ask them to change your plan',
      ]);
    expect(await row(discounted.id)).toMatchObject({ serviceId: w.plan, price: 500 });
  });

  it('an upgrade is paid from the wallet when it holds the money (before, left pending beside it)', async () => {
    const dearer = await mk('dearer', 40, true);
    const sub = await w.mkSub();
    await w.t.db
      .update(subscribers)
      .set({ expiryDate: daysFromToday(15) })
      .where(eq(subscribers.id, sub.id));
    await fund(sub.id, 50);
    const tok = await w.signIn(sub.username, sub.password);
    const quote = await w.api.get(`/api/my/change-plan?service_id=${dearer}`, { token: tok });
    const due = Math.round((quote.body.data.net_amount_due as number) * 100);
    expect(due).toBe(1500);
    expect((await w.api.post('/api/my/change-plan', { service_id: dearer }, { token: tok })).status).toBe(200);
    const bills = await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id));
    expect(bills.map((b) => [b.kind, b.total, b.status])).toEqual([['service_change', due, 'paid']]);
    expect((await row(sub.id)).walletBalance).toBe(5000 - due);
  });

  it('only while at most one period of the current plan is left: a 7-day and a 30-day plan cannot be looped for credit', async () => {
    const weekly = await mk('weekly', 7, true, 7);
    const monthly = await mk('monthly', 100, true);
    const sub = await w.mkSub({ service_id: monthly });
    await w.t.db
      .update(subscribers)
      .set({ expiryDate: daysFromToday(30) })
      .where(eq(subscribers.id, sub.id));
    const tok = await w.signIn(sub.username, sub.password);
    // 30 days of 30 left: down to weekly credits 100.00 - 30.00.
    const down = await w.api.post('/api/my/change-plan', { service_id: weekly }, { token: tok });
    expect(down.status).toBe(200);
    expect((await row(sub.id)).walletBalance).toBe(7000);
    // Now 30 days are left of a 7-day plan: back up was priced on 7 of them (16.33 owed), and down
    // again credited 70.00 once more, 53.67 gained a round.
    const refusal = 'your plan can change once at most one period of it is left: 30 days are left of a 7-day plan';
    for (const res of [
      await w.api.get(`/api/my/change-plan?service_id=${monthly}`, { token: tok }),
      await w.api.post('/api/my/change-plan', { service_id: monthly }, { token: tok }),
    ])
      expect([res.status, res.body.message]).toEqual([409, refusal]);
    expect(await row(sub.id)).toMatchObject({ serviceId: weekly, walletBalance: 7000 });
    expect(await w.t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id))).toEqual([]);
    // An operator still may, seeing the quote.
    const byOperator = await w.api.post(
      `/api/subscribers/${sub.id}/change-service`,
      { service_id: monthly, charge_difference: true },
      { token: admin },
    );
    expect(byOperator.status).toBe(200);
  });
});

describe('password', () => {
  it('checks the current one, applies the create rules, ends every earlier token and disconnects', async () => {
    const sub = await w.mkSub();
    const tok = await w.signIn(sub.username, sub.password);
    const second = await w.signIn(sub.username, sub.password);
    const wrong = await w.api.post(
      '/api/my/password',
      { current_password: 'nope', new_password: 'brand-new-1' },
      { token: tok },
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('current_password is incorrect');
    const tooLong = await w.api.post(
      '/api/my/password',
      { current_password: sub.password, new_password: 'x'.repeat(129) },
      { token: tok },
    );
    expect(tooLong.status).toBe(400);
    const ok = await w.api.post(
      '/api/my/password',
      { current_password: sub.password, new_password: 'brand-new-1' },
      { token: tok },
    );
    expect(ok.status).toBe(200);
    expect(ok.text).not.toContain('brand-new-1');
    expect(decrypt((await row(sub.id)).passwordEnc)).toBe('brand-new-1');
    const check = await w.t.db.select().from(radcheck).where(eq(radcheck.username, sub.username));
    expect(check.some((c) => c.attribute === 'NT-Password')).toBe(true);
    for (const old of [tok, second]) {
      const res = await w.api.get('/api/my/account', { token: old });
      expect(res.body.message).toBe('token revoked');
    }
    expect((await w.api.get('/api/my/account', { token: ok.body.data.token })).status).toBe(200);
    expect((await w.api.post('/api/my/login', { username: sub.username, password: sub.password })).status).toBe(401);
    expect((await w.api.post('/api/my/login', { username: sub.username, password: 'brand-new-1' })).status).toBe(200);
    const [update] = await audits('subscriber.update', sub.id);
    expect(update).toMatchObject({ actorType: 'subscriber', actorSubscriberId: sub.id });
    expect(JSON.stringify(update.details)).not.toContain('brand-new-1');
    expect(await audits('subscriber.disconnect', sub.id)).toMatchObject([{ actorType: 'subscriber' }]);
  });
});
