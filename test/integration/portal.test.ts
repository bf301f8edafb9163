/**
 * GET /portal over HTTP: the subscriber is the one whose open session has the client address
 * (TRUST_PROXY here, so X-Forwarded-For stands for the address), nothing else selects one; the
 * page carries the console's security headers and the public rate limit.
 */
import { eq } from 'drizzle-orm';
import { addDays, todayUtc } from '../../shared/billing';
import { db } from '../../shared/db/client';
import { subscribers } from '../../shared/db/schema';
import { saveSettings } from '../../shared/settings';
import { client, startTestApp, type TestApp } from '../helpers/app';
import { seedReseller } from './documents-fixtures';
import { formatDate } from '../../shared/format';
import { openSession, seedPortalInvoices, seedPortalSubscriber, visibleText } from './portal-fixtures';

const PUBLIC_LIMIT = 5;
const BLOCKED_IP = '10.64.0.7';
const ACTIVE_IP = '10.64.0.8';
const SHARED_IP = '10.64.0.9';
const STOPPED_IP = '10.64.0.10';
const HOW_TO_PAY = 'Pay at any Skyline agent or by bank transfer to IBAN XX00 1234';

let t: TestApp;
let api: ReturnType<typeof client>;
let blocked: Awaited<ReturnType<typeof seedPortalSubscriber>>;
let active: Awaited<ReturnType<typeof seedPortalSubscriber>>;
let invoices: Awaited<ReturnType<typeof seedPortalInvoices>>;
const expired = addDays(todayUtc(), -3);
/** Each request group comes from its own address: the public limit counts per address. */
let nextClient = 0;
const freshClient = () => `198.51.100.${++nextClient}`;

const from = (address: string, path = '/portal') => api.get(path, { headers: { 'x-forwarded-for': address } });

beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: '1', PUBLIC_RATE_LIMIT_PER_MIN: String(PUBLIC_LIMIT) } });
  api = client(t.baseUrl);
  const reseller = await seedReseller(t, 'Portal reseller');
  // Expired three days ago, and the sweep has not run yet: blocked_reason is still null.
  blocked = await seedPortalSubscriber(t, reseller.id, { expiryDate: expired, price: 1750 });
  invoices = await seedPortalInvoices(t, blocked);
  await openSession(t, blocked.username, BLOCKED_IP);
  active = await seedPortalSubscriber(t, reseller.id, { expiryDate: addDays(todayUtc(), 20) });
  await openSession(t, active.username, ACTIVE_IP);
  await openSession(t, active.username, STOPPED_IP, true);
  await openSession(t, blocked.username, SHARED_IP);
  await openSession(t, active.username, SHARED_IP);
  await saveSettings(db(), {
    operator_name: 'Skyline Networks',
    operator_phone: '+964 770 000 1111',
    how_to_pay: HOW_TO_PAY,
    language: 'en',
  });
});
afterAll(() => t.close());

function expectNoSubscriberData(text: string): void {
  for (const secret of [
    blocked.username,
    active.username,
    invoices.pending.invoiceNumber,
    invoices.partial.invoiceNumber,
    '/api/invoices/public/',
  ]) {
    expect(text).not.toContain(secret);
  }
}

describe('GET /portal', () => {
  it('finds an IPv6 client by its session: the address itself, or inside the WAN or delegated prefix', async () => {
    const reseller = await seedReseller(t, 'Portal v6 reseller');
    const v6 = await seedPortalSubscriber(t, reseller.id, { expiryDate: expired, price: 1750 });
    await openSession(t, v6.username, null, false, {
      framedipv6address: '2001:db8:f0::2',
      framedipv6prefix: '2001:db8:f1::/64',
      delegatedipv6prefix: '2001:db8:f200::/56',
    });
    for (const address of ['2001:db8:f0::2', '2001:db8:f1::abcd', '2001:DB8:F200:12::1']) {
      const res = await from(address);
      expect(res.status).toBe(200);
      expect(visibleText(res.text)).toContain(v6.username);
    }
    const outside = await from('2001:db8:f300::1');
    expectNoSubscriberData(visibleText(outside.text));
    expect(visibleText(outside.text)).not.toContain(v6.username);
  });

  it('shows a blocked subscriber its username, the reason, its open invoices with balances and receipt links', async () => {
    const res = await from(BLOCKED_IP);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const text = visibleText(res.text);
    expect(text).toContain('Skyline Networks');
    expect(text).toContain('+964 770 000 1111');
    expect(text).toContain(blocked.username);
    expect(text).toContain('Your internet access is blocked');
    expect(text).toContain(`Your subscription expired on ${formatDate(expired, 'en')}.`);
    // The subscriber's own price overrides the plan's 10.00.
    expect(text).toContain('Renewal price 17.50 USD');
    expect(text).toContain(HOW_TO_PAY);
    expect(text).toContain(`${invoices.pending.invoiceNumber} Mar 15, 2025 Pending 25.00 USD`);
    expect(text).toContain(`${invoices.partial.invoiceNumber} Mar 15, 2025 Partially paid 74.50 USD`);
    expect(text).not.toContain(invoices.paid.invoiceNumber);

    const links = [...res.text.matchAll(/href="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(links).toHaveLength(2);
    for (const [i, inv] of [invoices.pending, invoices.partial].entries()) {
      const link = new URL(links[i]);
      expect(link.origin).toBe('http://billing.test');
      expect(link.pathname).toBe(`/api/invoices/public/${inv.id}`);
      const receipt = await from(freshClient(), link.pathname + link.search);
      expect(receipt.status).toBe(200);
      expect(receipt.text).toContain(inv.invoiceNumber);
    }
  });

  it('reads the reason billing recorded: quota, then overdue', async () => {
    for (const [reason, words] of [
      ['quota', 'Your data quota is used up.'],
      ['overdue', 'An invoice is overdue.'],
    ] as const) {
      await t.db
        .update(subscribers)
        .set({ blockedReason: reason, expiryDate: addDays(todayUtc(), 5) })
        .where(eq(subscribers.id, blocked.id));
      const text = visibleText((await from(BLOCKED_IP)).text);
      expect(text).toContain('Your internet access is blocked');
      expect(text).toContain(words);
      expect(text).not.toContain('expired on');
    }
    await t.db
      .update(subscribers)
      .set({ blockedReason: null, expiryDate: expired })
      .where(eq(subscribers.id, blocked.id));
  });

  it('tells a subscriber whose access is not blocked so, with its paid-until date', async () => {
    const text = visibleText((await from(ACTIVE_IP)).text);
    expect(text).toContain(active.username);
    expect(text).toContain(`Your internet access is active. Paid until ${formatDate(active.expiryDate, 'en')}`);
    expect(text).not.toContain('blocked');
    expect(text).toContain('You have no open invoices.');
    expect(text).toContain('Renewal price 10.00 USD');
  });

  it('sends the security headers of the console and keeps the page out of every cache', async () => {
    const res = await from(BLOCKED_IP);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it("gives an address without an open session the generic page: branding, how to pay, nobody's data", async () => {
    for (const address of [freshClient(), STOPPED_IP, SHARED_IP, 'not-an-address']) {
      const res = await from(address);
      expect(res.status).toBe(200);
      const text = visibleText(res.text);
      expect(text).toContain('Skyline Networks');
      expect(text).toContain(HOW_TO_PAY);
      expect(text).toContain('This connection is not linked to a subscription');
      expectNoSubscriberData(res.text);
    }
  });

  it('lets no query parameter select a subscriber', async () => {
    const query = `?username=${encodeURIComponent(blocked.username)}&id=${blocked.id}&ip=${BLOCKED_IP}`;
    const res = await from(freshClient(), `/portal${query}`);
    expect(res.status).toBe(200);
    expectNoSubscriberData(res.text);
  });

  it(`answers 429 after ${PUBLIC_LIMIT} requests a minute from one address`, async () => {
    const address = freshClient();
    for (let i = 0; i < PUBLIC_LIMIT; i++) expect((await from(address)).status).toBe(200);
    const res = await from(address);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ success: false, message: 'too many requests' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await from(freshClient())).status).toBe(200);
  });
});
