/**
 * Issue 27, the portal's Pay link end to end against the Stripe double: a lapsed subscriber in the
 * walled garden follows it (303 to the checkout for its renewal price), Stripe's completed event
 * arrives, the wallet is credited (method card, the payment intent as reference) and the renewal
 * runs through the subscribers unit: access restored and its garden session dropped, no operator.
 */
import { and, eq } from 'drizzle-orm';
import { onlineCheckouts, outbox, subscribers, transactions } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { StripeDouble } from '../sim/stripe-double';
import { openSession } from './portal-fixtures';

const ADDRESS = '10.64.3.4';
const WEBHOOK_SECRET = 'whsec_portal_double';
let t: TestApp;
let api: ReturnType<typeof client>;
let stripe: StripeDouble;
const admin = adminToken();
let sub: { id: number; username: string };

const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const row = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const portal = (path: string) =>
  fetch(`${t.baseUrl}${path}`, { headers: { 'X-Forwarded-For': ADDRESS }, redirect: 'manual' });

beforeAll(async () => {
  stripe = new StripeDouble('sk_test_portal');
  await stripe.start();
  t = await startTestApp({ env: { TRUST_PROXY: '1' } });
  api = client(t.baseUrl);
  const r = await api.post('/api/resellers', { name: 'garden', balance: 500, currency: 'USD' }, { token: admin });
  const p = await api.post(
    '/api/services',
    { name: 'home', price: 12, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  await api.post(
    `/api/resellers/${r.body.data.id}/service-limits`,
    { service_id: p.body.data.id, max_subscribers: null },
    { token: admin },
  );
  const s = await api.post(
    '/api/subscribers',
    { username: 'lapsed@pay', password: 'secret1', service_id: p.body.data.id, reseller_id: r.body.data.id },
    { token: admin },
  );
  sub = s.body.data;
  await t.db
    .update(subscribers)
    .set({ expiryDate: daysFromToday(-2) })
    .where(eq(subscribers.id, sub.id));
  await api.put(`/api/subscribers/${sub.id}`, { full_name: 'Lapsed Payer' }, { token: admin });
  await openSession(t, sub.username, ADDRESS);
});
afterAll(async () => {
  await t.close();
  await stripe.stop();
});

describe('the portal Pay link', () => {
  it('without a provider the portal shows no Pay link', async () => {
    const page = await (await portal('/portal')).text();
    expect(page).toContain('id="redeem"');
    expect(page).not.toContain('id="pay-online"');
  });

  it('pays the renewal online and restores the lapsed subscriber', async () => {
    await api.put(
      '/api/settings',
      {
        payment_provider: 'stripe',
        stripe_secret_key: 'sk_test_portal',
        stripe_webhook_secret: WEBHOOK_SECRET,
        stripe_api_base_url: stripe.baseUrl,
        // The double listens on loopback, which the address policy refuses by default.
        allow_private_targets: true,
      },
      { token: admin },
    );
    expect((await row(sub.id)).blockedReason).toBe('expired');
    const page = await (await portal('/portal')).text();
    expect(page).toContain('id="pay-online" href="/portal/pay"');
    const go = await portal('/portal/pay');
    expect(go.status).toBe(303);
    const [c] = await t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.subscriberId, sub.id));
    expect(c).toMatchObject({ purpose: 'renewal', amount: 1200, currency: 'USD', invoiceId: null });
    expect(go.headers.get('location')).toBe(stripe.sessions.get(c.providerSessionId!)!.url);

    const event = stripe.complete(c.providerSessionId!);
    const res = await StripeDouble.deliver(`${t.baseUrl}/api/payments/webhook/stripe`, event, WEBHOOK_SECRET);
    expect(res.status).toBe(200);
    const after = await row(sub.id);
    expect(after.blockedReason).toBeNull();
    expect(after.expiryDate).toBe(daysFromToday(30));
    expect(after.walletBalance).toBe(0);
    const credit = await t.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.subscriberId, sub.id), eq(transactions.type, 'wallet_credit')));
    expect(credit).toMatchObject([
      { amount: 1200, method: 'card', reference: stripe.sessions.get(c.providerSessionId!)!.payment_intent },
    ]);
    const events = await t.db.select().from(outbox);
    expect(events.some((e) => (e.payload as { reason?: string }).reason === 'renew')).toBe(true);
    // A retry of the event renews nothing more.
    expect((await StripeDouble.deliver(`${t.baseUrl}/api/payments/webhook/stripe`, event, WEBHOOK_SECRET)).status).toBe(
      200,
    );
    expect((await row(sub.id)).expiryDate).toBe(daysFromToday(30));
    const back = await portal(new URL(stripe.sessions.get(c.providerSessionId!)!.success_url).pathname);
    expect(await back.text()).toContain('data-status="paid"');
  });

  it('an address with no session gets a 404 from the Pay link', async () => {
    const res = await fetch(`${t.baseUrl}/portal/pay`, {
      headers: { 'X-Forwarded-For': '10.99.0.1' },
      redirect: 'manual',
    });
    expect(res.status).toBe(404);
  });
});
