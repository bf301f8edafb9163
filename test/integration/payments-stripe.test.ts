/**
 * Issue 27, online payment with Stripe Checkout against a local double (test/sim/stripe-double.ts)
 * through the official `stripe` package: settings (secret encrypted at rest), the receipt's checkout
 * and its redirect, the webhook verified with stripe.webhooks.constructEvent (forged or missing
 * signature: 400, nothing written), exactly once under retries and concurrency, a webhook racing the
 * redirect, an amount that no longer fits going to the wallet (reported), an overdue-suspended
 * subscriber restored, and the reconciliation list. Issue 43: an event is matched to its checkout by
 * the provider's session id only, what arrived is checked against what was asked (short: booked as
 * received, no renewal; another currency: nothing booked), every mismatch is listed for the operator,
 * and the return page is found by an unguessable reference and sends the public pages' headers.
 */
import { and, count, eq } from 'drizzle-orm';
import {
  invoicePayments,
  invoices,
  onlineCheckouts,
  paymentEvents,
  settings,
  subscribers,
  transactions,
} from '../../shared/db/schema';
import { settleEvent } from '../../services/payments/settle';
import { systemAuth } from '../../shared/auth/claims';
import { publicUrl } from '../../shared/public-links';
import { adminToken, client, http, startTestApp, token, type TestApp } from '../helpers/app';
import { StripeDouble, type StripeEvent } from '../sim/stripe-double';
import { renewalInvoices, withDefaultTax } from '../helpers/renewals';

const SECRET_KEY = 'sk_test_double_0123456789';
const WEBHOOK_SECRET = 'whsec_test_double_secret';

let t: TestApp;
let api: ReturnType<typeof client>;
let stripe: StripeDouble;
const admin = adminToken();
let north: number;
let south: number;
let plan: number;
let seq = 0;
let hook: string;

const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const subRow = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const invRow = async (id: number) => (await t.db.select().from(invoices).where(eq(invoices.id, id)))[0];
const eventCount = async () => (await t.db.select({ n: count() }).from(paymentEvents))[0].n;

async function mkSub(resellerId = north) {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `pay${seq}@isp`, password: 'secret1', service_id: plan, reseller_id: resellerId },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; username: string };
}

async function mkInvoice(subscriberId: number, amount: number) {
  const res = await api.post(
    '/api/invoices',
    { subscriber_id: subscriberId, items: [{ description: 'service', qty: 1, unit_price: amount }] },
    { token: admin },
  );
  expect(res.status).toBe(201);
  const id = res.body.data.id as number;
  const row = await invRow(id);
  const tokenParam = new URL(publicUrl(id, row.publicTokenNonce!)).searchParams.get('token')!;
  return { id, token: tokenParam };
}

/** The receipt's Pay link: 303 to the provider's page. */
async function payButton(inv: { id: number; token: string }) {
  const res = await fetch(
    `${t.baseUrl}/api/payments/checkout/invoice/${inv.id}?token=${encodeURIComponent(inv.token)}`,
    { redirect: 'manual' },
  );
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

async function receiptPage(inv: { id: number; token: string }) {
  return http(t.baseUrl, 'GET', `/api/invoices/public/${inv.id}?token=${encodeURIComponent(inv.token)}`);
}

async function checkoutOf(invoiceId: number) {
  return (await t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.invoiceId, invoiceId)))[0];
}

const checkoutById = async (id: number) =>
  (await t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.id, id)))[0];

/** Where the provider sends the payer back: the checkout's success URL as this server gave it. */
/** A renewal checkout for the subscriber, as self-care and the portal make one, and its row. */
async function renewalCheckout(subscriberId: number) {
  const { id } = await t.app.broker.call<{ id: number; url: string }, { purpose: 'renewal'; subscriberId: number }>(
    'payments.checkout',
    { purpose: 'renewal', subscriberId },
  );
  return checkoutById(id);
}

const returnPath = (c: { providerSessionId: string | null }) =>
  new URL(stripe.sessions.get(c.providerSessionId!)!.success_url).pathname;

const deliver = (event: StripeEvent) => StripeDouble.deliver(hook, event, WEBHOOK_SECRET);
const outcomeOf = (res: { body: Record<string, unknown> }) => (res.body.data as { outcome: string }).outcome;

/** Minor units the ledger holds from card payments of a subscriber (invoice payments and wallet credits). */
async function cardLedger(subscriberId: number) {
  const rows = await t.db
    .select()
    .from(transactions)
    .where(and(eq(transactions.subscriberId, subscriberId), eq(transactions.method, 'card')));
  return rows.reduce((n, r) => n + r.amount, 0);
}

beforeAll(async () => {
  stripe = new StripeDouble(SECRET_KEY);
  await stripe.start();
  t = await startTestApp();
  api = client(t.baseUrl);
  hook = `${t.baseUrl}/api/payments/webhook/stripe`;
  const mkReseller = async (name: string) => {
    const res = await api.post('/api/resellers', { name, balance: 1000, currency: 'USD' }, { token: admin });
    return res.body.data.id as number;
  };
  north = await mkReseller('north');
  south = await mkReseller('south');
  const p = await api.post(
    '/api/services',
    { name: 'home', price: 10, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  plan = p.body.data.id;
  for (const r of [north, south])
    await api.post(`/api/resellers/${r}/service-limits`, { service_id: plan, max_subscribers: null }, { token: admin });
});
afterAll(async () => {
  await t.close();
  await stripe.stop();
});

describe('settings and checkout', () => {
  it('without a provider the Pay button is refused (409) and no checkout is made', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 12);
    const res = await payButton(inv);
    expect(res.status).toBe(409);
    expect(await checkoutOf(inv.id)).toBeUndefined();
    const page = await receiptPage(inv);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('id="pay-link"');
  });

  it('a new stripe_api_base_url needs the secret key again, and a private address the allowing setting', async () => {
    const moved = await api.put('/api/settings', { stripe_api_base_url: 'http://127.0.0.1:9/' }, { token: admin });
    expect(moved.status).toBe(400);
    expect(moved.body.message).toBe(
      'stripe_secret_key must be given again in the same request when stripe_api_base_url changes',
    );
    const privateTarget = await api.put(
      '/api/settings',
      { stripe_api_base_url: 'http://127.0.0.1:9/', stripe_secret_key: 'sk_test_x', allow_private_targets: false },
      { token: admin },
    );
    expect(privateTarget.status).toBe(400);
    expect((await api.get('/api/settings', { token: admin })).body.data.stripe_api_base_url).not.toBe(
      'http://127.0.0.1:9/',
    );
  });

  it('stores the secret key and webhook secret encrypted and never shows them', async () => {
    const res = await api.put(
      '/api/settings',
      {
        payment_provider: 'stripe',
        stripe_secret_key: SECRET_KEY,
        stripe_webhook_secret: WEBHOOK_SECRET,
        stripe_api_base_url: stripe.baseUrl,
        // The double listens on loopback, which the address policy refuses by default.
        allow_private_targets: true,
      },
      { token: admin },
    );
    expect(res.status).toBe(200);
    const shown = await api.get('/api/settings', { token: admin });
    expect(JSON.stringify(shown.body)).not.toContain(SECRET_KEY);
    expect(JSON.stringify(shown.body)).not.toContain(WEBHOOK_SECRET);
    const rows = await t.db.select().from(settings);
    expect(JSON.stringify(rows)).not.toContain(SECRET_KEY);
    expect(JSON.stringify(rows)).not.toContain(WEBHOOK_SECRET);
  });

  it("the receipt's Pay button makes a checkout for the balance and redirects to it; a wrong token is 404", async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 12.5);
    await api.post(`/api/invoices/${inv.id}/payment`, { amount: 2.5 }, { token: admin });
    const res = await payButton(inv);
    expect(res.status).toBe(303);
    const c = await checkoutOf(inv.id);
    expect(c).toMatchObject({ provider: 'stripe', purpose: 'invoice', amount: 1000, currency: 'USD', status: 'open' });
    const session = stripe.sessions.get(c.providerSessionId!)!;
    expect(res.location).toBe(session.url);
    expect(session).toMatchObject({ amount_total: 1000, currency: 'usd', metadata: { checkout_id: String(c.id) } });
    expect(returnPath(c)).toMatch(/^\/api\/payments\/return\//);

    // The receipt page links to it; following the link again reuses the open checkout.
    const page = await receiptPage(inv);
    expect(page.text).toContain(`id="pay-link" href="/api/payments/checkout/invoice/${inv.id}?token=`);
    const again = await payButton(inv);
    expect(again.location).toBe(res.location);
    expect((await t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.invoiceId, inv.id))).length).toBe(1);
    // Paid in full: no link any more, and the checkout route says there is nothing to pay.
    await api.post(`/api/invoices/${inv.id}/payment`, { amount: 10 }, { token: admin });
    expect((await receiptPage(inv)).text).not.toContain('id="pay-link"');
    expect((await payButton(inv)).status).toBe(409);

    const wrong = await payButton({ id: inv.id, token: 'x'.repeat(43) });
    expect(wrong.status).toBe(404);
    const other = await mkInvoice(sub.id, 3);
    expect((await payButton({ id: other.id, token: inv.token })).status).toBe(404);
    expect(await checkoutOf(other.id)).toBeUndefined();
  });

  it("the Pay button checks the provider's address again: with allow_private_targets off, no checkout is made", async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 5);
    const sessions = stripe.sessions.size;
    expect((await api.put('/api/settings', { allow_private_targets: false }, { token: admin })).status).toBe(200);
    try {
      const res = await payButton(inv);
      expect(res.status).toBe(400);
      expect(res.text).toContain('stripe_api_base_url refused: a loopback, private or reserved address');
      expect(await checkoutOf(inv.id)).toBeUndefined();
      expect(stripe.sessions.size).toBe(sessions);
    } finally {
      await api.put('/api/settings', { allow_private_targets: true }, { token: admin });
    }
  });
});

describe('webhook', () => {
  it('a forged, missing or stale signature is 400 and writes nothing', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 8);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const event = stripe.complete(c.providerSessionId!);
    const before = await eventCount();
    const forged = await StripeDouble.deliver(hook, event, 'whsec_someone_else');
    expect(forged.status).toBe(400);
    expect(forged.body.message).toBe('webhook signature missing or invalid');
    expect((await StripeDouble.deliver(hook, event, WEBHOOK_SECRET, { signature: null })).status).toBe(400);
    const stale = `t=${Math.floor(Date.now() / 1000) - 3600},v1=${'0'.repeat(64)}`;
    expect((await StripeDouble.deliver(hook, event, WEBHOOK_SECRET, { signature: stale })).status).toBe(400);
    // A body changed after it was signed.
    const signed = (await import('stripe')).default.webhooks.generateTestHeaderString({
      payload: event.payload,
      secret: WEBHOOK_SECRET,
    });
    const tampered = { ...event, payload: event.payload.replace('"amount_total": 800', '"amount_total": 1') };
    expect(tampered.payload).not.toBe(event.payload);
    expect((await StripeDouble.deliver(hook, tampered, WEBHOOK_SECRET, { signature: signed })).status).toBe(400);
    expect(await eventCount()).toBe(before);
    expect((await invRow(inv.id)).paidAmount).toBe(0);
    expect((await checkoutOf(inv.id)).status).toBe('open');
    expect((await http(t.baseUrl, 'POST', '/api/payments/webhook/paypal', { body: {} })).status).toBe(404);
  });

  it('retried and concurrent deliveries of one event pay once (method card, the payment intent as reference)', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 20);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const event = stripe.complete(c.providerSessionId!);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => StripeDouble.deliver(hook, event, WEBHOOK_SECRET)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(results.filter((r) => (r.body.data as { outcome: string }).outcome === 'paid')).toHaveLength(1);
    for (let i = 0; i < 3; i++) expect((await StripeDouble.deliver(hook, event, WEBHOOK_SECRET)).status).toBe(200);
    const pays = await t.db.select().from(invoicePayments).where(eq(invoicePayments.invoiceId, inv.id));
    const session = stripe.sessions.get(c.providerSessionId!)!;
    expect(pays).toHaveLength(1);
    expect(pays[0]).toMatchObject({ amount: 2000, method: 'card', reference: session.payment_intent });
    expect((await invRow(inv.id)).status).toBe('paid');
    expect(await checkoutOf(inv.id)).toMatchObject({
      status: 'paid',
      providerEventId: event.id,
      appliedAmount: 2000,
      walletAmount: 0,
    });
    const ledger = await t.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.invoiceId, inv.id), eq(transactions.method, 'card')));
    expect(ledger).toHaveLength(1);
  });

  it('a webhook that arrives before its session is stored is answered 503, and pays once when redelivered', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 6);
    let early: StripeEvent | undefined;
    let delivered: { status: number } | undefined;
    stripe.beforeCreateAnswer = async (s) => {
      stripe.beforeCreateAnswer = null;
      early = stripe.complete(s.id);
      delivered = await deliver(early);
    };
    const res = await payButton(inv);
    expect(res.status).toBe(303);
    // Not yet the checkout's session as far as this server knows: Stripe is asked to try again.
    expect(delivered?.status).toBe(503);
    expect(await checkoutOf(inv.id)).toMatchObject({ status: 'open', appliedAmount: null });
    expect((await invRow(inv.id)).paidAmount).toBe(0);
    const again = await deliver(early!);
    expect(again.status).toBe(200);
    expect(outcomeOf(again)).toBe('paid');
    const c = await checkoutOf(inv.id);
    expect(c).toMatchObject({ status: 'paid', appliedAmount: 600 });
    expect(c.providerSessionId).toMatch(/^cs_test_/);
    expect(c.url).toBe(res.location);
    expect((await invRow(inv.id)).status).toBe('paid');
    expect(await cardLedger(sub.id)).toBe(600);
    const back = await http(t.baseUrl, 'GET', returnPath(c));
    expect(back.text).toContain('data-status="paid"');
  });

  it('an amount that no longer fits (paid at the counter meanwhile) goes to the wallet and is reported', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 15);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const back = await http(t.baseUrl, 'GET', returnPath(c));
    expect(back.text).toContain('data-status="open"');
    expect((await api.post(`/api/invoices/${inv.id}/payment`, { amount: 10 }, { token: admin })).status).toBe(200);
    const res = await StripeDouble.deliver(hook, stripe.complete(c.providerSessionId!), WEBHOOK_SECRET);
    expect(res.status).toBe(200);
    const after = await checkoutOf(inv.id);
    expect(after).toMatchObject({ status: 'paid', appliedAmount: 500, walletAmount: 1000 });
    expect(after.note).toContain('credited to the wallet');
    expect((await subRow(sub.id)).walletBalance).toBe(1000);
    expect((await invRow(inv.id)).status).toBe('paid');
    const credit = await t.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.subscriberId, sub.id), eq(transactions.type, 'wallet_credit')));
    expect(credit).toMatchObject([{ amount: 1000, method: 'card' }]);
  });

  it('money that no longer fits its invoice pays what is still owed, oldest first, with itself only', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 15);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const owed = await mkInvoice(sub.id, 5);
    expect((await api.post(`/api/invoices/${inv.id}/payment`, { amount: 15 }, { token: admin })).status).toBe(200);
    const res = await deliver(stripe.complete(c.providerSessionId!));
    expect([res.status, outcomeOf(res)]).toEqual([200, 'paid']);
    expect(await invRow(owed.id)).toMatchObject({ status: 'paid', paidAmount: 500 });
    expect((await subRow(sub.id)).walletBalance).toBe(1000);
    expect((await checkoutById(c.id)).note).toContain(`which paid invoice ${owed.id} 5`);
  });

  it("a deleted subscriber's payment is booked, not refused; one removed for good is listed unmatched", async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 15);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    expect((await api.del(`/api/subscribers/${sub.id}`, { token: admin })).status).toBe(200);
    const res = await deliver(stripe.complete(c.providerSessionId!));
    expect([res.status, outcomeOf(res)]).toEqual([200, 'paid']);
    expect(await invRow(inv.id)).toMatchObject({ status: 'paid', paidAmount: 1500 });
    expect((await checkoutById(c.id)).note).toContain('the subscriber is deleted');

    // Deleted, with the invoice paid at the counter meanwhile and another still open: the money
    // goes to the wallet and the open invoice is left as it is (no 404 loop).
    const left = await mkSub();
    const first = await mkInvoice(left.id, 6);
    await payButton(first);
    const leftCheckout = await checkoutOf(first.id);
    const second = await mkInvoice(left.id, 4);
    expect((await api.post(`/api/invoices/${first.id}/payment`, { amount: 6 }, { token: admin })).status).toBe(200);
    expect((await api.del(`/api/subscribers/${left.id}`, { token: admin })).status).toBe(200);
    const excess = await deliver(stripe.complete(leftCheckout.providerSessionId!));
    expect([excess.status, outcomeOf(excess)]).toEqual([200, 'paid']);
    expect((await subRow(left.id)).walletBalance).toBe(600);
    expect(await invRow(second.id)).toMatchObject({ paidAmount: 0 });

    const gone = await mkSub();
    const goneInv = await mkInvoice(gone.id, 9);
    await payButton(goneInv);
    const goneCheckout = await checkoutOf(goneInv.id);
    expect((await api.del(`/api/subscribers/${gone.id}/permanent`, { token: admin })).status).toBe(200);
    const event = stripe.complete(goneCheckout.providerSessionId!);
    const again = await deliver(event);
    expect([again.status, outcomeOf(again)]).toEqual([200, 'unmatched']);
    const [row] = await t.db.select().from(paymentEvents).where(eq(paymentEvents.eventId, event.id));
    expect(row).toMatchObject({ outcome: 'unmatched' });
    expect(row.note).toContain('removed for good');
  });

  it('money that fits no invoice and not the wallet is a mismatch, not paid', async () => {
    const sub = await mkSub();
    const res = await api.post(
      '/api/invoices',
      { subscriber_id: sub.id, currency: 'EUR', items: [{ description: 'service', qty: 1, unit_price: 7 }] },
      { token: admin },
    );
    expect(res.status).toBe(201);
    const row = await invRow(res.body.data.id);
    const inv = { id: row.id, token: new URL(publicUrl(row.id, row.publicTokenNonce!)).searchParams.get('token')! };
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    expect((await api.post(`/api/invoices/${inv.id}/payment`, { amount: 7 }, { token: admin })).status).toBe(200);
    const paid = await deliver(stripe.complete(c.providerSessionId!));
    expect([paid.status, outcomeOf(paid)]).toEqual([200, 'mismatch']);
    const after = await checkoutById(c.id);
    expect(after).toMatchObject({ status: 'mismatch', appliedAmount: 0, walletAmount: 0 });
    expect(after.note).toContain('7 EUR received but not booked: the wallet holds USD');
    expect(after.note).not.toContain('credited');
    expect((await subRow(sub.id)).walletBalance).toBe(0);
  });

  it('an overdue-suspended subscriber is restored by the payment', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 9);
    await t.pool.query('update invoices set issue_date = $2, due_date = $2 where id = $1', [
      inv.id,
      daysFromToday(-10),
    ]);
    await api.put('/api/settings', { suspend_overdue_after_days: 2 }, { token: admin });
    await api.put(`/api/subscribers/${sub.id}`, { full_name: 'Late Payer' }, { token: admin });
    expect((await subRow(sub.id)).blockedReason).toBe('overdue');
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    expect((await StripeDouble.deliver(hook, stripe.complete(c.providerSessionId!), WEBHOOK_SECRET)).status).toBe(200);
    expect((await subRow(sub.id)).blockedReason).toBeNull();
    await api.put('/api/settings', { suspend_overdue_after_days: null }, { token: admin });
  });

  it('an expired session marks the checkout expired; other event types are acknowledged and ignored', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 4);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    expect((await StripeDouble.deliver(hook, stripe.expire(c.providerSessionId!), WEBHOOK_SECRET)).status).toBe(200);
    expect((await checkoutOf(inv.id)).status).toBe('expired');
    const other = stripe.event('customer.created', { id: 'cus_1', object: 'customer' });
    const res = await StripeDouble.deliver(hook, other, WEBHOOK_SECRET);
    expect(res.status).toBe(200);
    expect((res.body.data as { outcome: string }).outcome).toBe('ignored');
  });
});

describe('what was paid (issue 43, finding 1)', () => {
  it('a renewal paid 0.01 of its 10.00 renews nothing: the cent goes to the wallet and the checkout is underpaid', async () => {
    const sub = await mkSub();
    const before = await subRow(sub.id);
    const invoicesBefore = (await t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id))).length;
    const c = await renewalCheckout(sub.id);
    const { id } = c;
    expect(c).toMatchObject({ purpose: 'renewal', amount: 1000, currency: 'USD', status: 'open' });
    const res = await deliver(stripe.complete(c.providerSessionId!, { amount: 1 }));
    expect(res.status).toBe(200);
    const after = await subRow(sub.id);
    expect(after.expiryDate).toBe(before.expiryDate);
    expect(after.walletBalance).toBe(before.walletBalance + 1);
    expect(outcomeOf(res)).toBe('underpaid');
    expect((await t.db.select().from(invoices).where(eq(invoices.subscriberId, sub.id))).length).toBe(invoicesBefore);
    expect(await cardLedger(sub.id)).toBe(1);
    const closed = await checkoutById(id);
    expect(closed).toMatchObject({ status: 'underpaid', appliedAmount: 0, walletAmount: 1 });
    expect(closed.note).toContain('0.01 USD of 10.00 USD');
    const listed = await api.get('/api/payments/online?status=underpaid&limit=500', { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((r: { id: number }) => r.id)).toContain(id);
  });

  it('a renewal checkout asks what the renewal invoice will (price and default tax), and paid so renews with the invoice paid whole', async () => {
    await withDefaultTax(api, 10, async () => {
      const sub = await mkSub();
      const before = await subRow(sub.id);
      const c = await renewalCheckout(sub.id);
      expect(c).toMatchObject({ purpose: 'renewal', amount: 1100, currency: 'USD' });
      expect(outcomeOf(await deliver(stripe.complete(c.providerSessionId!)))).toBe('paid');
      const after = await subRow(sub.id);
      expect(after.expiryDate > before.expiryDate).toBe(true);
      expect(after.walletBalance).toBe(0);
      expect(await renewalInvoices(t, sub.id)).toMatchObject([{ status: 'paid', total: 1100, paidAmount: 1100 }]);
    });
  });

  it('a renewal paid beside an invoice that blocks access pays that invoice first, then renews only if the rest covers it', async () => {
    /** A subscriber with a 4.00 invoice overdue for 10 days. */
    const owing = async () => {
      const sub = await mkSub();
      const inv = await mkInvoice(sub.id, 4);
      await t.db
        .update(invoices)
        .set({ status: 'overdue', dueDate: daysFromToday(-10) })
        .where(eq(invoices.id, inv.id));
      return { ...sub, overdue: inv.id };
    };
    const pay = async (sub: { id: number }) => {
      const c = await renewalCheckout(sub.id);
      expect(outcomeOf(await deliver(stripe.complete(c.providerSessionId!)))).toBe('paid');
      return checkoutById(c.id);
    };
    // Suspension off (the default): the invoice blocks nothing, the money renews.
    const unblocked = await owing();
    await pay(unblocked);
    expect(await invRow(unblocked.overdue)).toMatchObject({ status: 'overdue', paidAmount: 0 });
    expect(await renewalInvoices(t, unblocked.id)).toMatchObject([{ status: 'paid', total: 1000 }]);

    expect((await api.put('/api/settings', { suspend_overdue_after_days: 3 }, { token: admin })).status).toBe(200);
    try {
      // The checkout asks for the renewal and the blocking balance; one made before the invoice
      // blocked asks for the renewal alone, which then pays the invoice and renews nothing.
      const covered = await owing();
      const shortSub = await mkSub();
      const early = await renewalCheckout(shortSub.id);
      const inv = await mkInvoice(shortSub.id, 4);
      await t.db
        .update(invoices)
        .set({ status: 'overdue', dueDate: daysFromToday(-10) })
        .where(eq(invoices.id, inv.id));
      const short = { ...shortSub, overdue: inv.id };
      const coveredCheckout = await pay(covered);
      expect(coveredCheckout).toMatchObject({ amount: 1400, status: 'paid' });
      expect(outcomeOf(await deliver(stripe.complete(early.providerSessionId!)))).toBe('paid');
      expect(early.amount).toBe(1000);
      for (const [sub, c] of [
        [covered, coveredCheckout],
        [short, await checkoutById(early.id)],
      ] as const) {
        expect(await invRow(sub.overdue)).toMatchObject({ status: 'paid', paidAmount: 400 });
        expect(c.note).toMatch(new RegExp(`which paid invoice ${sub.overdue} 4($|;)`));
      }
      expect(await renewalInvoices(t, covered.id)).toMatchObject([{ status: 'paid', total: 1000 }]);
      expect((await subRow(covered.id)).walletBalance).toBe(0);
      expect(await renewalInvoices(t, short.id)).toEqual([]);
      expect((await subRow(short.id)).walletBalance).toBe(600);
      const [shortCheckout] = await t.db
        .select()
        .from(onlineCheckouts)
        .where(eq(onlineCheckouts.subscriberId, short.id));
      expect(shortCheckout).toMatchObject({ renewalDue: false });
      expect(shortCheckout.note).toMatch(/renewal not made: wallet balance does not cover the price$/);
    } finally {
      await api.put('/api/settings', { suspend_overdue_after_days: null }, { token: admin });
    }
  });

  it('a renewal paid in full after its price rose renews nothing: the money waits in the wallet, no invoice owed', async () => {
    const sub = await mkSub();
    const before = await subRow(sub.id);
    const c = await renewalCheckout(sub.id);
    expect(c.amount).toBe(1000);
    await t.db.update(subscribers).set({ overridePrice: true, price: 1200 }).where(eq(subscribers.id, sub.id));
    expect(outcomeOf(await deliver(stripe.complete(c.providerSessionId!)))).toBe('paid');
    const after = await subRow(sub.id);
    expect(after.expiryDate).toBe(before.expiryDate);
    expect(after.walletBalance).toBe(1000);
    expect(await renewalInvoices(t, sub.id)).toEqual([]);
  });

  it('an invoice checkout paid short books what arrived as a partial payment and leaves the rest owed', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 20);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const res = await deliver(stripe.complete(c.providerSessionId!, { amount: 500 }));
    expect(res.status).toBe(200);
    expect(await invRow(inv.id)).toMatchObject({ status: 'partial', paidAmount: 500 });
    expect(await checkoutById(c.id)).toMatchObject({ status: 'underpaid', appliedAmount: 500, walletAmount: 0 });
    expect(outcomeOf(res)).toBe('underpaid');
    expect((await subRow(sub.id)).walletBalance).toBe(0);
    expect(await cardLedger(sub.id)).toBe(500);
    // What is still owed can be paid online: a new checkout for the remaining 15.00.
    expect((await payButton(inv)).status).toBe(303);
    const open = await t.db
      .select()
      .from(onlineCheckouts)
      .where(and(eq(onlineCheckouts.invoiceId, inv.id), eq(onlineCheckouts.status, 'open')));
    expect(open).toMatchObject([{ amount: 1500 }]);
  });

  it('events of other sessions naming the checkout do not touch it, are listed for the operator, and the genuine one pays', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 50);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const byReference = stripe.foreignSession({ amount: 1, currency: 'usd', clientReferenceId: String(c.id) });
    const byMetadata = stripe.foreignSession({ amount: 1, currency: 'usd', metadata: { checkout_id: String(c.id) } });
    const expiry = stripe.foreignSession({ amount: 1, currency: 'usd', clientReferenceId: String(c.id) });
    const answers = [
      await deliver(stripe.complete(byReference.id)),
      await deliver(stripe.complete(byMetadata.id)),
      await deliver(stripe.expire(expiry.id)),
    ];
    expect(await invRow(inv.id)).toMatchObject({ status: 'pending', paidAmount: 0 });
    expect(await checkoutById(c.id)).toMatchObject({ status: 'open', appliedAmount: null, providerEventId: null });
    expect(await cardLedger(sub.id)).toBe(0);
    expect(answers.map((r) => [r.status, outcomeOf(r)])).toEqual(Array(3).fill([200, 'unmatched']));

    const seen = await api.get('/api/payments/events?outcome=unmatched&limit=500', { token: admin });
    expect(seen.status).toBe(200);
    const mine = seen.body.data.filter((e: { session_id: string }) =>
      [byReference.id, byMetadata.id].includes(e.session_id),
    );
    expect(mine).toHaveLength(2);
    for (const e of mine) {
      expect(e).toMatchObject({ outcome: 'unmatched', checkout_id: null, amount: 0.01, currency: 'USD' });
      expect(e.note).toContain(`checkout ${c.id}`);
    }
    const northTok = token('reseller', { resellerId: north, permissions: [] });
    expect((await api.get('/api/payments/events', { token: northTok })).status).toBe(403);

    const genuine = await deliver(stripe.complete(c.providerSessionId!));
    expect(outcomeOf(genuine)).toBe('paid');
    expect(await invRow(inv.id)).toMatchObject({ status: 'paid', paidAmount: 5000 });
    expect(await cardLedger(sub.id)).toBe(5000);
  });

  it('a payment in another currency books nothing and is recorded as a mismatch', async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 7);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const event = stripe.complete(c.providerSessionId!, { currency: 'eur' });
    const res = await deliver(event);
    expect(res.status).toBe(200);
    const after = await checkoutById(c.id);
    expect(after).toMatchObject({ status: 'mismatch', appliedAmount: 0, walletAmount: 0 });
    expect(after.note).toContain('7.00 EUR');
    expect(await invRow(inv.id)).toMatchObject({ status: 'pending', paidAmount: 0 });
    expect((await subRow(sub.id)).walletBalance).toBe(0);
    expect(await cardLedger(sub.id)).toBe(0);
    expect(outcomeOf(res)).toBe('mismatch');
    const seen = await api.get('/api/payments/events?outcome=mismatch&limit=500', { token: admin });
    expect(seen.body.data.find((e: { event_id: string }) => e.event_id === event.id)).toMatchObject({
      checkout_id: c.id,
      amount: 7,
      currency: 'EUR',
    });
  });
});

describe('the return page (issue 43, finding 11)', () => {
  it("is found by the checkout's unguessable reference, not its id, and sends the public pages' headers", async () => {
    const sub = await mkSub();
    const inv = await mkInvoice(sub.id, 5);
    await payButton(inv);
    const c = await checkoutOf(inv.id);
    const session = stripe.sessions.get(c.providerSessionId!)!;
    const path = returnPath(c);
    const ref = path.slice('/api/payments/return/'.length);
    expect(ref).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(session.cancel_url).toBe(`${session.success_url}?cancelled=1`);
    expect((await http(t.baseUrl, 'GET', `/api/payments/return/${c.id}`)).status).toBe(404);

    const page = await fetch(`${t.baseUrl}${path}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-status="open"');
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const rule of ["default-src 'none'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"])
      expect(csp).toContain(rule);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('private, no-store');
    expect(page.headers.get('x-robots-tag')).toBe('noindex');
  });
});

describe('reconciliation', () => {
  it('GET /api/payments/online lists checkouts by date and status, a reseller its tree only', async () => {
    const southSub = await mkSub(south);
    const inv = await mkInvoice(southSub.id, 3);
    await payButton(inv);
    const today = new Date().toISOString().slice(0, 10);
    const all = await api.get(`/api/payments/online?from=${today}&to=${today}&limit=500`, { token: admin });
    expect(all.status).toBe(200);
    const ids = all.body.data.map((c: { invoice_id: number }) => c.invoice_id);
    expect(ids).toContain(inv.id);
    const paid = await api.get('/api/payments/online?status=paid&limit=500', { token: admin });
    expect(paid.body.data.every((c: { status: string }) => c.status === 'paid')).toBe(true);
    expect(paid.body.data.length).toBeGreaterThan(2);
    expect(paid.body.data[0]).toHaveProperty('provider_reference');
    const yesterday = daysFromToday(-1);
    const none = await api.get(`/api/payments/online?from=${yesterday}&to=${yesterday}`, { token: admin });
    expect(none.body.data).toEqual([]);
    const northTok = token('reseller', { resellerId: north, permissions: [] });
    const mine = await api.get('/api/payments/online?limit=500', { token: northTok });
    expect(mine.body.data.map((c: { invoice_id: number }) => c.invoice_id)).not.toContain(inv.id);
    expect((await api.get('/api/payments/online?status=lost', { token: admin })).status).toBe(400);
  });
});

describe('a renewal paid online whose renewal did not run (the process stopped after the payment committed)', () => {
  /** The provider's event settled as the webhook settles it, without the webhook's own renewal try. */
  async function paidWithoutRenewal(subscriberId: number) {
    const c = await renewalCheckout(subscriberId);
    const settled = await settleEvent('stripe', {
      eventId: `evt_${c.providerSessionId}`,
      kind: 'paid',
      type: 'checkout.session.completed',
      checkoutId: c.id,
      sessionId: c.providerSessionId,
      amount: c.amount,
      currency: c.currency,
      reference: `pi_${c.id}`,
    });
    expect(settled).toMatchObject({ outcome: 'paid', renewSubscriberId: subscriberId });
    expect(await checkoutById(c.id)).toMatchObject({ status: 'paid', renewalDue: true });
    return c;
  }
  const sweep = () =>
    t.app.broker.call<Record<string, number>, { grace_seconds: number }>('payments.retryRenewals', {
      grace_seconds: 0,
    });
  const renewFor = (subscriberId: number, checkoutId: number) =>
    t.app.broker.call(
      'subscribers.renewFromWallet',
      { id: subscriberId, checkout_id: checkoutId },
      { meta: { auth: systemAuth('online-payment') } },
    );

  it('the sweep makes the renewal', async () => {
    const sub = await mkSub();
    const before = await subRow(sub.id);
    const c = await paidWithoutRenewal(sub.id);
    expect(await subRow(sub.id)).toMatchObject({ expiryDate: before.expiryDate, walletBalance: 1000 });
    expect((await sweep()).renewed).toBeGreaterThanOrEqual(1);
    const after = await subRow(sub.id);
    expect(after.expiryDate > before.expiryDate).toBe(true);
    expect(after.walletBalance).toBe(0);
    expect(await renewalInvoices(t, sub.id)).toMatchObject([{ status: 'paid', total: 1000, paidAmount: 1000 }]);
    expect(await checkoutById(c.id)).toMatchObject({ renewalDue: false, note: null });
  });

  it('renews once for two tries at once (a first try whose answer was lost), with the wallet holding two periods', async () => {
    const sub = await mkSub();
    const c = await paidWithoutRenewal(sub.id);
    await t.db.update(subscribers).set({ walletBalance: 2000 }).where(eq(subscribers.id, sub.id));
    const tries = await Promise.allSettled([renewFor(sub.id, c.id), renewFor(sub.id, c.id)]);
    expect(tries.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const refused = tries.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect([refused.reason.code, refused.reason.message]).toEqual([409, "this payment's renewal is already made"]);
    expect(await renewalInvoices(t, sub.id)).toHaveLength(1);
    expect((await subRow(sub.id)).walletBalance).toBe(1000);
    await sweep();
    expect(await renewalInvoices(t, sub.id)).toHaveLength(1);
  });

  it('a reseller balance short is retried after a pause, and renews once topped up', async () => {
    const broke = (
      await api.post('/api/resellers', { name: 'broke', balance: 1000, currency: 'USD' }, { token: admin })
    ).body.data.id as number;
    await api.post(
      `/api/resellers/${broke}/service-limits`,
      { service_id: plan, max_subscribers: null },
      { token: admin },
    );
    const sub = await mkSub(broke);
    const c = await paidWithoutRenewal(sub.id);
    await t.pool.query(`update resellers set balance = 0 where id = $1`, [broke]);
    await sweep();
    const tried = await checkoutById(c.id);
    expect(tried).toMatchObject({ renewalDue: true, note: null });
    expect(tried.renewalTriedAt).not.toBeNull();
    await t.pool.query(`update resellers set balance = 5000 where id = $1`, [broke]);
    await sweep();
    expect(await renewalInvoices(t, sub.id)).toEqual([]);
    await t.pool.query(`update online_checkouts set renewal_tried_at = now() - interval '6 minutes' where id = $1`, [
      c.id,
    ]);
    await sweep();
    expect(await renewalInvoices(t, sub.id)).toMatchObject([{ status: 'paid', total: 1000 }]);
    expect(await checkoutById(c.id)).toMatchObject({ renewalDue: false, note: null });
  });

  it('a subscriber renewed today already, a wallet spent meanwhile: none made, the note says why; after three days the sweep gives up', async () => {
    const today = await mkSub();
    const c0 = await paidWithoutRenewal(today.id);
    await t.db
      .update(subscribers)
      .set({ lastRenewedOn: daysFromToday(0) })
      .where(eq(subscribers.id, today.id));
    const spent = await mkSub();
    const c1 = await paidWithoutRenewal(spent.id);
    await t.db.update(subscribers).set({ walletBalance: 0 }).where(eq(subscribers.id, spent.id));
    const late = await mkSub();
    const c2 = await paidWithoutRenewal(late.id);
    await t.pool.query(`update online_checkouts set completed_at = now() - interval '4 days' where id = $1`, [c2.id]);
    await sweep();
    expect(await checkoutById(c0.id)).toMatchObject({
      renewalDue: false,
      note: 'renewal not made: already renewed today',
    });
    expect(await checkoutById(c1.id)).toMatchObject({
      renewalDue: false,
      note: 'renewal not made: wallet balance does not cover the price',
    });
    expect(await checkoutById(c2.id)).toMatchObject({
      renewalDue: false,
      note: 'renewal not made within 3 days of the payment: renew by hand',
    });
    for (const s of [today, spent, late]) expect(await renewalInvoices(t, s.id)).toEqual([]);
    expect((await subRow(today.id)).walletBalance).toBe(1000);
    expect((await subRow(late.id)).walletBalance).toBe(1000);
  });
});
