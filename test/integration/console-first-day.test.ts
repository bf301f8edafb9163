/**
 * Issue 39 in Chromium: a desk account with only `invoices.pay` sees the payment buttons and not
 * consolidate, new invoice or send; its new-subscriber form offers only the plans its reseller may
 * sell; an admin's form names the default reseller; invoices show the subscriber's username and the
 * reseller's name instead of ids.
 */
import type { Browser, Page } from 'playwright-core';
import { http, type TestApp } from '../helpers/app';
import { openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';

jest.setTimeout(120_000);

let t: TestApp;
let browser: Browser;
let adminApi: string;
let reseller: number;
let subscriber: number;
let invoice: number;
const pageProblems: string[] = [];

async function post(path: string, body: Record<string, unknown>, status = 201) {
  const res = await http(t.baseUrl, 'POST', path, { token: adminApi, body });
  expect(res.status).toBe(status);
  return res.body.data.id as number;
}

beforeAll(async () => {
  ({ t, browser, adminApi } = await startConsoleApp());
  reseller = await post('/api/resellers', { name: 'North Shop', balance: 100, currency: 'USD' });
  const sold = await post('/api/services', { name: 'Home 20M', price: 20, duration_days: 30 });
  await post('/api/services', { name: 'Business 100M', price: 90, duration_days: 30 });
  await post(`/api/resellers/${reseller}/service-limits`, { service_id: sold }, 200);
  subscriber = await post('/api/subscribers', {
    username: 'desk@north',
    password: 'secret1',
    service_id: sold,
    reseller_id: reseller,
  });
  invoice = await post('/api/invoices', {
    subscriber_id: subscriber,
    items: [{ description: 'Fee', qty: 1, unit_price: 5 }],
  });
  const desk = await http(t.baseUrl, 'POST', '/api/managers', {
    token: adminApi,
    body: {
      username: 'desk1',
      password: 'long-enough-1',
      role: 'reseller',
      reseller_id: reseller,
      permissions: ['subscribers.view', 'subscribers.create', 'invoices.pay'],
    },
  });
  expect(desk.status).toBe(201);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function signedIn(username: string, password: string): Promise<Page> {
  const page = await openConsole(browser, t.baseUrl, pageProblems);
  await signInOn(page, username, password);
  return page;
}

it('a desk account with invoices.pay pays but sees no consolidate, new invoice or send', async () => {
  const page = await signedIn('desk1', 'long-enough-1');
  await page.goto(`${t.baseUrl}/#/subscribers/${subscriber}`);
  await page.getByRole('heading', { name: 'desk@north' }).waitFor();
  await page.getByRole('button', { name: 'Quick pay' }).waitFor();
  for (const hidden of ['Consolidate', 'New invoice'])
    expect(await page.getByRole('button', { name: hidden }).count()).toBe(0);

  await page.goto(`${t.baseUrl}/#/invoices/${invoice}`);
  await page.getByRole('button', { name: 'Record payment' }).waitFor();
  for (const hidden of ['Send by chat', 'New public link', 'Void invoice', 'Delete invoice'])
    expect(await page.getByRole('button', { name: hidden }).count()).toBe(0);
  // Names, not ids: the subscriber by username, the reseller by name.
  await page.getByRole('link', { name: 'desk@north' }).first().waitFor();
  await page.getByText('North Shop').first().waitFor();
  expect(pageProblems).toEqual([]);
  await page.context().close();
});

it("the desk account's new-subscriber form offers only the plans its reseller may sell", async () => {
  const page = await signedIn('desk1', 'long-enough-1');
  await page.goto(`${t.baseUrl}/#/subscribers/new`);
  const plan = page.locator('select[name="service_id"]');
  await plan.waitFor();
  const offered = await plan.locator('option').allTextContents();
  expect(offered.filter((o) => o !== '—')).toEqual([expect.stringContaining('Home 20M')]);
  expect(pageProblems).toEqual([]);
  await page.context().close();
});

it("an admin's form says an empty reseller means the default reseller, and creating makes it", async () => {
  const page = await signedIn('admin', 'change-me-now');
  await page.goto(`${t.baseUrl}/#/subscribers/new`);
  await page.getByText('Empty: the default reseller of direct subscribers (Direct subscribers)').waitFor();
  await page.getByLabel('Username').fill('walkin@isp');
  await page.getByLabel('Password').fill('secret2');
  const plans = await page.locator('select[name="service_id"]').locator('option').allTextContents();
  await page
    .locator('select[name="service_id"]')
    .selectOption({ label: plans.find((o) => o.includes('Business 100M'))! });
  await page.getByRole('button', { name: 'Create subscriber' }).click();
  await page.getByRole('heading', { name: 'walkin@isp' }).waitFor();
  const settings = await http(t.baseUrl, 'GET', '/api/settings', { token: adminApi });
  const made = await http(t.baseUrl, 'GET', '/api/subscribers?search=walkin', { token: adminApi });
  expect(made.body.data[0].reseller_id).toBe(settings.body.data.default_reseller_id);
  expect(pageProblems).toEqual([]);
  await page.context().close();
});
