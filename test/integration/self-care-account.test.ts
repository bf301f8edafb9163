/**
 * Self-care reads and the auto-renew switch (issue 40, docs/self-care.md): account, usage,
 * invoices (detail, PDF, paying online through the Stripe double), payments and notifications,
 * each exactly the signed-in subscriber's; the write runs the operator's action with the
 * subscriber as actor.
 */
import { and, eq } from 'drizzle-orm';
import { auditLog, dailyUsage, invoices, notifications, radacct, subscribers } from '../../shared/db/schema';
import { StripeDouble } from '../sim/stripe-double';
import { admin, selfCareWorld, type SelfCareWorld } from './self-care-fixtures';

const WEBHOOK_SECRET = 'whsec_self_care';
let w: SelfCareWorld;
let stripe: StripeDouble;
let me: { id: number; username: string; password: string };
let other: { id: number; username: string; password: string };
let tok: string;
let myInvoice: number;
let otherInvoice: number;

const today = new Date().toISOString().slice(0, 10);
const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

async function invoiceFor(subscriberId: number, price: number): Promise<number> {
  const res = await w.api.post(
    '/api/invoices',
    { subscriber_id: subscriberId, items: [{ description: 'Router', qty: 1, unit_price: price }] },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`invoice: ${res.status} ${res.text}`);
  return res.body.data.id;
}

beforeAll(async () => {
  w = await selfCareWorld();
  stripe = new StripeDouble('sk_test_self_care');
  await stripe.start();
  me = await w.mkSub({ phone: '5552001', full_name: 'Me Myself' });
  other = await w.mkSub({ phone: '5552002' });
  await w.t.db
    .update(subscribers)
    .set({ expiryDate: daysFromToday(12) })
    .where(eq(subscribers.id, me.id));
  tok = await w.signIn(me.username, me.password);
  myInvoice = await invoiceFor(me.id, 25);
  otherInvoice = await invoiceFor(other.id, 40);
  await w.setSettings({ operator_name: 'Fibre Co', operator_phone: '+1 555 0000', how_to_pay: 'Cash at the shop' });
});
afterAll(async () => {
  await stripe?.stop();
  await w?.t.close();
});

describe('account', () => {
  it('shows plan, expiry, days left, wallet, auto-renew and the operator', async () => {
    const res = await w.api.get('/api/my/account', { token: tok });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: me.id,
      username: me.username,
      full_name: 'Me Myself',
      plan: { id: w.plan, name: 'home', price: 10, renewal_total: 10, currency: 'USD', duration_days: 30 },
      expiry_date: daysFromToday(12),
      days_left: 12,
      blocked_reason: null,
      wallet_balance: 0,
      auto_renew: false,
      operator: { name: 'Fibre Co', phone: '+1 555 0000', how_to_pay: 'Cash at the shop' },
    });
    expect(res.text).not.toContain(me.password);
    expect(res.text).not.toContain('password');
  });

  it('toggles auto-renew through the operator action, audited with the subscriber as actor', async () => {
    const res = await w.api.put('/api/my/account', { auto_renew: true }, { token: tok });
    expect(res.status).toBe(200);
    expect(res.body.data.auto_renew).toBe(true);
    const [row] = await w.t.db.select().from(subscribers).where(eq(subscribers.id, me.id));
    expect(row.autoRenew).toBe(true);
    const [audit] = await w.t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'subscriber.update'), eq(auditLog.entityId, me.id)));
    expect(audit).toMatchObject({ actorType: 'subscriber', actorSubscriberId: me.id, managerId: null });
    expect(audit.details).toEqual({ autoRenew: [false, true] });
    // The operator's audit list shows who.
    const list = await w.api.get(`/api/audit?target_type=subscriber&target_id=${me.id}`, { token: admin });
    expect(list.body.data[0]).toMatchObject({ actor_type: 'subscriber', subscriber_id: me.id, manager_id: null });
  });

  it('the switch can be turned off', async () => {
    await w.setSettings({ self_care_auto_renew: false });
    const res = await w.api.put('/api/my/account', { auto_renew: false }, { token: tok });
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('auto-renew is turned off in self-care');
    await w.setSettings({ self_care_auto_renew: true });
  });
});

describe('usage', () => {
  it('today, month, 30 days, the live session and the last ones: mine only', async () => {
    const started = new Date(Date.now() - 3_600_000);
    await w.t.db.insert(radacct).values([
      {
        acctsessionid: 'a1',
        acctuniqueid: 'sc-a1',
        username: me.username,
        nasipaddress: '192.0.2.1',
        acctstarttime: new Date(Date.now() - 86_400_000),
        acctstoptime: new Date(Date.now() - 80_000_000),
        framedipaddress: '10.0.0.5',
      },
      {
        acctsessionid: 'a2',
        acctuniqueid: 'sc-a2',
        username: me.username,
        nasipaddress: '192.0.2.1',
        acctstarttime: started,
        framedipaddress: '10.0.0.6',
        callingstationid: 'AA:BB:CC:DD:EE:FF',
      },
      {
        acctsessionid: 'b1',
        acctuniqueid: 'sc-b1',
        username: other.username,
        nasipaddress: '192.0.2.1',
        acctstarttime: started,
        framedipaddress: '10.0.0.99',
      },
    ]);
    // Counters as the usage rollup keeps them (the sessions above carry no octets to add).
    await w.t.db
      .update(subscribers)
      .set({ dailyQuotaUsed: 5 * 1024 ** 3, monthlyQuotaUsed: 40 * 1024 ** 3, usageDay: today })
      .where(eq(subscribers.id, me.id));
    await w.t.db.insert(dailyUsage).values([
      { subscriberId: me.id, date: daysFromToday(-1), downloadBytes: 1000, uploadBytes: 10 },
      { subscriberId: me.id, date: daysFromToday(-40), downloadBytes: 9, uploadBytes: 9 },
      { subscriberId: other.id, date: today, downloadBytes: 7777, uploadBytes: 77 },
    ]);
    await w.t.db
      .insert(dailyUsage)
      .values({ subscriberId: me.id, date: today, downloadBytes: 2000, uploadBytes: 20 })
      .onConflictDoUpdate({
        target: [dailyUsage.subscriberId, dailyUsage.date],
        set: { downloadBytes: 2000, uploadBytes: 20 },
      });
    const res = await w.api.get('/api/my/usage', { token: tok });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      today: { used_bytes: 5 * 1024 ** 3, quota_bytes: null },
      month: { used_bytes: 40 * 1024 ** 3, quota_bytes: 100 * 1024 ** 3, extra_bytes: 0 },
      fup: { level: 0 },
      daily: [
        { date: daysFromToday(-1), download_bytes: 1000, upload_bytes: 10 },
        { date: today, download_bytes: 2000, upload_bytes: 20 },
      ],
      session: { online: true, ip_address: '10.0.0.6', mac_address: 'AA:BB:CC:DD:EE:FF', since: started.toISOString() },
      last_sessions: [{ ip_address: '10.0.0.5', upload_bytes: 0, download_bytes: 0 }],
    });
    expect(res.text).not.toContain('10.0.0.99');
    expect(res.text).not.toContain('7777');
  });

  it('the last ten sessions, newest first; one without a start time only after the dated ones', async () => {
    const session = (username: string, key: string, ip: string, daysAgo: number | null, open = false) => ({
      acctsessionid: key,
      acctuniqueid: `sc-${key}`,
      username,
      nasipaddress: '192.0.2.1',
      acctstarttime: daysAgo === null ? null : new Date(Date.now() - daysAgo * 86_400_000 - 60_000),
      acctstoptime: open ? null : new Date(),
      framedipaddress: ip,
    });
    const long = await w.mkSub();
    await w.t.db
      .insert(radacct)
      .values([
        session(long.username, 'l-live', '10.1.0.99', 0, true),
        session(long.username, 'l-none', '10.1.0.98', null),
        ...Array.from({ length: 13 }, (_, i) => session(long.username, `l${i + 1}`, `10.1.0.${i + 1}`, i + 1)),
      ]);
    const longRes = await w.api.get('/api/my/usage', { token: await w.signIn(long.username, long.password) });
    expect(longRes.status).toBe(200);
    expect(longRes.body.data.session).toMatchObject({ online: true, ip_address: '10.1.0.99' });
    expect(longRes.body.data.last_sessions.map((s: { ip_address: string }) => s.ip_address)).toEqual(
      Array.from({ length: 10 }, (_, i) => `10.1.0.${i + 1}`),
    );

    const short = await w.mkSub();
    await w.t.db
      .insert(radacct)
      .values([
        session(short.username, 's-none', '10.2.0.98', null),
        session(short.username, 's1', '10.2.0.1', 1),
        session(short.username, 's2', '10.2.0.2', 2),
      ]);
    const shortRes = await w.api.get('/api/my/usage', { token: await w.signIn(short.username, short.password) });
    expect(shortRes.body.data.session.online).toBe(false);
    expect(shortRes.body.data.last_sessions.map((s: { ip_address: string }) => s.ip_address)).toEqual([
      '10.2.0.1',
      '10.2.0.2',
      '10.2.0.98',
    ]);
  });
});

describe('a username taken again', () => {
  it("shows none of the earlier holder's sessions, open or closed", async () => {
    const earlier = await w.mkSub();
    await w.t.db.insert(radacct).values([
      {
        acctsessionid: 'x1',
        acctuniqueid: `reuse-${earlier.id}-1`,
        username: earlier.username,
        nasipaddress: '192.0.2.1',
        acctstarttime: new Date(Date.now() - 86_400_000),
        acctstoptime: new Date(),
        framedipaddress: '10.3.0.1',
      },
      {
        acctsessionid: 'x2',
        acctuniqueid: `reuse-${earlier.id}-2`,
        username: earlier.username,
        nasipaddress: '192.0.2.1',
        acctstarttime: new Date(Date.now() - 3_600_000),
        framedipaddress: '10.3.0.2',
      },
    ]);
    expect((await w.api.del(`/api/subscribers/${earlier.id}`, { token: admin })).status).toBe(200);
    const now = await w.mkSub({ username: earlier.username });
    const res = await w.api.get('/api/my/usage', { token: await w.signIn(now.username, now.password) });
    expect(res.status).toBe(200);
    expect(res.body.data.session).toMatchObject({ online: false, ip_address: null });
    expect(res.body.data.last_sessions).toEqual([]);
  });
});

describe('invoices', () => {
  it('lists and reads mine; another subscriber’s is not found by id, PDF or payment', async () => {
    const list = await w.api.get('/api/my/invoices', { token: tok });
    expect(list.status).toBe(200);
    expect(list.body.data.map((i: { id: number }) => i.id)).toEqual([myInvoice]);
    expect(list.body.pagination).toEqual({ page: 1, limit: 50, total: 1 });
    const one = await w.api.get(`/api/my/invoices/${myInvoice}`, { token: tok });
    expect(one.body.data).toMatchObject({
      id: myInvoice,
      total: 25,
      balance: 25,
      status: 'pending',
      items: [{ description: 'Router', qty: 1, unit_price: 25, amount: 25 }],
      payments: [],
    });
    for (const path of [
      `/api/my/invoices/${otherInvoice}`,
      `/api/my/invoices/${otherInvoice}/pdf`,
      '/api/my/invoices/999999',
    ]) {
      const res = await w.api.get(path, { token: tok });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('invoice not found');
    }
    const pay = await w.api.post(`/api/my/invoices/${otherInvoice}/pay`, {}, { token: tok });
    expect(pay.status).toBe(404);
  });

  it('the PDF of mine', async () => {
    const res = await w.api.get(`/api/my/invoices/${myInvoice}/pdf`, { token: tok });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
  }, 60_000);

  it('pays mine online through the checkout, and the payment shows in the history', async () => {
    const off = await w.api.post(`/api/my/invoices/${myInvoice}/pay`, {}, { token: tok });
    expect(off.status).toBe(409);
    expect(off.body.message).toBe('online payment is not configured');
    await w.setSettings({
      payment_provider: 'stripe',
      stripe_secret_key: 'sk_test_self_care',
      stripe_webhook_secret: WEBHOOK_SECRET,
      stripe_api_base_url: stripe.baseUrl,
      allow_private_targets: true,
    });
    const pay = await w.api.post(`/api/my/invoices/${myInvoice}/pay`, {}, { token: tok });
    expect(pay.status).toBe(200);
    const session = [...stripe.sessions.values()].find((s) => s.url === pay.body.data.url)!;
    expect(session.amount_total).toBe(2500);
    const event = stripe.complete(session.id);
    expect(
      (await StripeDouble.deliver(`${w.t.baseUrl}/api/payments/webhook/stripe`, event, WEBHOOK_SECRET)).status,
    ).toBe(200);
    const [inv] = await w.t.db.select().from(invoices).where(eq(invoices.id, myInvoice));
    expect(inv.status).toBe('paid');
    const history = await w.api.get('/api/my/payments', { token: tok });
    expect(history.body.data).toMatchObject([{ invoice_id: myInvoice, amount: 25, currency: 'USD' }]);
    expect(history.body.pagination.total).toBe(1);
    const nothing = await w.api.post(`/api/my/invoices/${myInvoice}/pay`, {}, { token: tok });
    expect(nothing.status).toBe(409);
  });
});

describe('notifications', () => {
  it('mine, newest first', async () => {
    await w.t.db.insert(notifications).values([
      {
        subscriberId: me.id,
        kind: 'expiry_reminder',
        ruleDays: 3,
        expiryDate: today,
        message: 'first',
        status: 'sent',
      },
      {
        subscriberId: me.id,
        kind: 'expiry_reminder',
        ruleDays: 1,
        expiryDate: today,
        message: 'second',
        status: 'sent',
      },
      {
        subscriberId: other.id,
        kind: 'expiry_reminder',
        ruleDays: 1,
        expiryDate: today,
        message: 'not mine',
        status: 'sent',
      },
    ]);
    const res = await w.api.get('/api/my/notifications', { token: tok });
    expect(res.status).toBe(200);
    expect(res.body.data.map((n: { message: string }) => n.message)).toEqual(['second', 'first']);
    expect(res.body.pagination.total).toBe(2);
  });
});
