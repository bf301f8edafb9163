/**
 * The captive portal in a real Chromium, as a blocked subscriber's browser sees it: the gateway
 * trusts the proxy (TRUST_PROXY), and the browser's X-Forwarded-For stands for the address the
 * router redirected. The page's one inline style must pass its own Content-Security-Policy, its
 * receipt links must open, and an Arabic operator gets a right-to-left page.
 */
import { formatDate } from '../../shared/format';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { findChromium } from '../../services/pdf-renderer/chromium';
import { addDays, todayUtc } from '../../shared/billing';
import { db } from '../../shared/db/client';
import { saveSettings } from '../../shared/settings';
import { startTestApp, type TestApp } from '../helpers/app';
import { seedReseller } from './documents-fixtures';
import { openSession, seedPortalInvoices, seedPortalSubscriber } from './portal-fixtures';

jest.setTimeout(60_000);

const ADDRESS = '10.64.1.7';
const PUBLIC_BASE_URL = 'http://billing.test';

let t: TestApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let sub: Awaited<ReturnType<typeof seedPortalSubscriber>>;
let invoices: Awaited<ReturnType<typeof seedPortalInvoices>>;
const expired = addDays(todayUtc(), -1);
/** Script errors and policy refusals the page reports: none is expected. */
const problems: string[] = [];

/** A computed style property of the element, read in the page (the tests compile without the DOM lib). */
function computed(locator: Locator, property: string): Promise<string> {
  type View = { getComputedStyle(el: unknown): Record<string, string> };
  return locator.evaluate((el, p) => (globalThis as unknown as View).getComputedStyle(el)[p], property);
}

beforeAll(async () => {
  t = await startTestApp({ env: { TRUST_PROXY: '1' } });
  const reseller = await seedReseller(t, 'Portal browser reseller');
  sub = await seedPortalSubscriber(t, reseller.id, { expiryDate: expired, blockedReason: 'expired' });
  invoices = await seedPortalInvoices(t, sub);
  await openSession(t, sub.username, ADDRESS);
  await saveSettings(db(), {
    operator_name: 'Skyline Networks',
    how_to_pay: 'Pay at any Skyline agent',
    language: 'en',
  });

  browser = await chromium.launch({
    executablePath: findChromium(),
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  context = await browser.newContext({ extraHTTPHeaders: { 'X-Forwarded-For': ADDRESS } });
  // Receipt links carry PUBLIC_BASE_URL: this name is the test app.
  await context.route(`${PUBLIC_BASE_URL}/**`, (route) =>
    route.continue({ url: route.request().url().replace(PUBLIC_BASE_URL, t.baseUrl) }),
  );
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

describe('the captive portal in Chromium', () => {
  it("shows the blocked subscriber's account, reason and open invoices, styled under its own policy", async () => {
    const response = await page.goto(`${t.baseUrl}/portal`);
    expect(response?.status()).toBe(200);
    await expect(page.locator('#username').innerText()).resolves.toBe(sub.username);
    const notice = page.locator('#access');
    await expect(notice.innerText()).resolves.toBe(
      `Your internet access is blocked\nYour subscription expired on ${formatDate(expired, 'en')}.`,
    );
    // The inline style applied: its hash is in the Content-Security-Policy.
    await expect(computed(notice, 'backgroundColor')).resolves.toBe('rgb(254, 243, 242)');
    const rows = await page.locator('#invoices tbody tr').allInnerTexts();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toContain(invoices.pending.invoiceNumber);
    expect(rows[0]).toContain('25.00 USD');
    expect(rows[1]).toContain(invoices.partial.invoiceNumber);
    expect(rows[1]).toContain('74.50 USD');
    await expect(page.locator('#how-to-pay').innerText()).resolves.toContain('Pay at any Skyline agent');
    expect(problems).toEqual([]);
  });

  it("opens an invoice's receipt from its link", async () => {
    await page.goto(`${t.baseUrl}/portal`);
    await page.getByRole('link', { name: 'View invoice' }).first().click();
    await page.waitForURL(`${PUBLIC_BASE_URL}/api/invoices/public/${invoices.pending.id}?token=*`);
    await expect(page.locator('.invoice-number').innerText()).resolves.toBe(invoices.pending.invoiceNumber);
  });

  it('lays the page out right to left in Arabic', async () => {
    await saveSettings(db(), { language: 'ar' });
    try {
      await page.goto(`${t.baseUrl}/portal`);
      await expect(page.locator('html').getAttribute('dir')).resolves.toBe('rtl');
      await expect(computed(page.locator('body'), 'direction')).resolves.toBe('rtl');
      await expect(page.locator('#access').innerText()).resolves.toContain('تم إيقاف اتصالك بالإنترنت');
      // The first column (the invoice number) sits at the right edge, the last at the left.
      const first = await page.locator('#invoices th').first().boundingBox();
      const last = await page.locator('#invoices th').last().boundingBox();
      expect(first!.x).toBeGreaterThan(last!.x);
      // Numbers and dates stay left to right inside the right-to-left page.
      await expect(computed(page.locator('#username bdi'), 'direction')).resolves.toBe('ltr');
      expect(problems).toEqual([]);
    } finally {
      await saveSettings(db(), { language: 'en' });
    }
  });
});
