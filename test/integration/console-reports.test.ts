/**
 * The console's dashboard and Reports pages (docs/reports.md) in a real Chromium: an admin opens the
 * dashboard (tiles with the day's money, charts drawn), follows a tile to its filtered list, opens
 * the revenue report, sees its rows and totals and downloads its CSV. axe-core finds no serious or
 * critical violation and the pages raise no script error.
 */
import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { http, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, axeScan, openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';

jest.setTimeout(120_000);

let t: TestApp;
let browser: Browser;
let page: Page;
let adminApi: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  ({ t, browser, adminApi } = await startConsoleApp());
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function call(method: string, path: string, body?: unknown) {
  const res = await http(t.baseUrl, method, path, { token: adminApi, body });
  expect(res.status).toBeLessThan(300);
  return res.body.data;
}

it('shows the dashboard with its tiles and charts, and the revenue report with its CSV', async () => {
  const plan = await call('POST', '/api/services', { name: 'Home', price: 20, duration_days: 30, currency: 'USD' });
  const reseller = await call('POST', '/api/resellers', { name: 'Shop', balance: 100, currency: 'USD' });
  await call('POST', `/api/resellers/${reseller.id}/service-limits`, { service_id: plan.id });
  const sub = await call('POST', '/api/subscribers', {
    username: 'dash@board',
    password: 'secret1',
    service_id: plan.id,
    reseller_id: reseller.id,
  });
  const inv = await call('POST', '/api/invoices', {
    subscriber_id: sub.id,
    items: [{ description: 'x', qty: 1, unit_price: 123.45 }],
  });
  await call('POST', `/api/invoices/${inv.id}/payment`, { amount: inv.total, method: 'card' });

  page = await openConsole(browser, t.baseUrl, pageProblems);
  await signInOn(page, 'admin', ADMIN_PASSWORD);
  await page.getByRole('link', { name: 'Dashboard' }).click();
  const received = page.getByRole('link', { name: /Received today/ });
  await received.waitFor();
  expect(await received.textContent()).toContain('123.45');
  // Payments per day, online per hour, subscribers per month: each drawn.
  await page.locator('figure.chart canvas').nth(2).waitFor();
  expect(await page.locator('figure.chart').count()).toBe(3);
  expect(await page.getByRole('link', { name: /^1 Subscribers/ }).count()).toBe(1);
  await axeScan(page, 'dashboard');

  await page.getByRole('link', { name: /Active/ }).click();
  await page.waitForURL(/#\/subscribers\?status=active/);
  await page.getByRole('link', { name: 'dash@board' }).waitFor();

  await page.getByRole('link', { name: 'Reports', exact: true }).click();
  // The method in words, the amount in the one money format.
  await page.getByRole('cell', { name: 'Card', exact: true }).first().waitFor();
  const amount = await page.getByRole('row').filter({ hasText: 'Card' }).first().textContent();
  expect(amount?.replace(/[\u2066-\u2069]/g, '')).toContain('123.45\u00a0USD');
  expect(await page.getByRole('listitem').filter({ hasText: '123.45' }).count()).toBeGreaterThan(0);
  await axeScan(page, 'reports');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click(),
  ]);
  const text = fs.readFileSync((await download.path())!, 'utf8');
  // The byte order mark first, so that Excel reads the file as UTF-8.
  expect(text.split('\r\n')[0]).toBe('\ufeffperiod,key,name,currency,amount,count');
  expect(text).toContain(',card,card,USD,123.45,1');

  await page.getByLabel('Report').selectOption('aging');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.waitForURL(/name=aging/);
  await page.getByText('Nothing here yet.').waitFor();
  expect(pageProblems).toEqual([]);
});
