/**
 * Issue 27, the recharge-card form of the captive portal in a real Chromium, as a lapsed
 * subscriber's browser in the walled garden sees it (TRUST_PROXY; X-Forwarded-For stands for the
 * address the router redirected): a wrong PIN is refused on the page and recorded, a plan card
 * renews the subscriber and the page shows access restored, with no operator; the form passes the
 * page's own Content-Security-Policy; the form says it in Arabic right-to-left too.
 */
import { eq } from 'drizzle-orm';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { findChromium } from '../../services/pdf-renderer/chromium';
import { cardRedeemAttempts, outbox, subscribers } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { openSession } from './portal-fixtures';

jest.setTimeout(60_000);

const ADDRESS = '10.64.2.9';
let t: TestApp;
let api: ReturnType<typeof client>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const admin = adminToken();
const problems: string[] = [];
let sub: { id: number; username: string };
let plan: number;

const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const row = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];

beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: '1' } });
  api = client(t.baseUrl);
  const r = await api.post('/api/resellers', { name: 'garden', balance: 500, currency: 'USD' }, { token: admin });
  const p = await api.post(
    '/api/services',
    { name: 'home 20', price: 15, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  plan = p.body.data.id;
  await api.post(
    `/api/resellers/${r.body.data.id}/service-limits`,
    { service_id: plan, max_subscribers: null },
    { token: admin },
  );
  const s = await api.post(
    '/api/subscribers',
    { username: 'lapsed@garden', password: 'secret1', service_id: plan, reseller_id: r.body.data.id },
    { token: admin },
  );
  sub = s.body.data;
  await t.db
    .update(subscribers)
    .set({ expiryDate: daysFromToday(-3) })
    .where(eq(subscribers.id, sub.id));
  await api.put(`/api/subscribers/${sub.id}`, { full_name: 'Lapsed In Garden' }, { token: admin });
  expect((await row(sub.id)).blockedReason).toBe('expired');
  await openSession(t, sub.username, ADDRESS);
  await api.put('/api/settings', { operator_name: 'Garden Net', language: 'en' }, { token: admin });

  browser = await chromium.launch({
    executablePath: findChromium(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  context = await browser.newContext({ extraHTTPHeaders: { 'X-Forwarded-For': ADDRESS } });
  page = await context.newPage();
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
});
afterAll(async () => {
  await browser?.close();
  await t.close();
});

describe('the recharge-card form in Chromium', () => {
  it('a wrong PIN is refused on the page and recorded; nothing changes', async () => {
    await page.goto(`${t.baseUrl}/portal`);
    await expect(page.locator('#access').getAttribute('data-reason')).resolves.toBe('expired');
    await page.fill('#pin', '1111 2222 3333 44');
    const [response] = await Promise.all([page.waitForNavigation(), page.click('#redeem button')]);
    expect(response?.status()).toBe(400);
    await expect(page.locator('#redeem-result').getAttribute('data-ok')).resolves.toBe('false');
    await expect(page.locator('#redeem-result').innerText()).resolves.toContain('invalid PIN');
    const tries = await t.db.select().from(cardRedeemAttempts).where(eq(cardRedeemAttempts.subscriberId, sub.id));
    expect(tries).toMatchObject([{ ok: false, address: ADDRESS, managerId: null, reason: 'invalid PIN' }]);
    expect((await row(sub.id)).blockedReason).toBe('expired');
  });

  it('a plan card typed with its spaces renews the lapsed subscriber: the page shows access restored', async () => {
    const b = await api.post('/api/cards/batches', { count: 1, service_id: plan }, { token: admin });
    expect(b.status).toBe(201);
    const pin = (b.body.csv as string).trim().split('\n')[1].split(',')[1];
    await page.goto(`${t.baseUrl}/portal`);
    await page.fill('#pin', pin.replace(/(\d{4})(?=\d)/g, '$1 '));
    const [response] = await Promise.all([page.waitForNavigation(), page.click('#redeem button')]);
    expect(response?.status()).toBe(200);
    await expect(page.locator('#redeem-result').innerText()).resolves.toBe('Card accepted: home 20.');
    await expect(page.locator('#access').getAttribute('data-reason')).resolves.toBeNull();
    await expect(page.locator('#access').innerText()).resolves.toContain('Your internet access is active.');
    const after = await row(sub.id);
    expect(after.blockedReason).toBeNull();
    expect(after.expiryDate).toBe(daysFromToday(30));
    // The session in the garden is dropped so that the next one is normal.
    const events = await t.db.select().from(outbox);
    expect(events.some((e) => (e.payload as { reason?: string }).reason === 'renew')).toBe(true);
    // The form submitted and the page styled under its own policy (a refused answer logs its status, not this).
    expect(problems.filter((m) => /Content Security Policy|Refused/i.test(m))).toEqual([]);
  });

  it('the same card again is refused on the page (used once)', async () => {
    const b = await api.post('/api/cards/batches', { count: 1, value: 3 }, { token: admin });
    const pin = (b.body.csv as string).trim().split('\n')[1].split(',')[1];
    await page.goto(`${t.baseUrl}/portal`);
    await page.fill('#pin', pin);
    await Promise.all([page.waitForNavigation(), page.click('#redeem button')]);
    await expect(page.locator('#redeem-result').innerText()).resolves.toBe('Card accepted: 3 USD.');
    await page.fill('#pin', pin);
    const [again] = await Promise.all([page.waitForNavigation(), page.click('#redeem button')]);
    expect(again?.status()).toBe(409);
    await expect(page.locator('#redeem-result').innerText()).resolves.toContain('card already used');
  });

  it('in Arabic the form is laid out right to left', async () => {
    await api.put('/api/settings', { language: 'ar' }, { token: admin });
    await page.goto(`${t.baseUrl}/portal`);
    await expect(page.locator('body').getAttribute('dir')).resolves.toBe('rtl');
    await expect(page.locator('#redeem button').innerText()).resolves.toBe('اشحن');
    await api.put('/api/settings', { language: 'en' }, { token: admin });
  });
});
