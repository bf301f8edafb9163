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

it('the renew confirmations state the price with tax, as the invoices then charge it', async () => {
  const tax = await http(t.baseUrl, 'PUT', '/api/settings', { token: adminApi, body: { default_tax_rate: 7.5 } });
  expect(tax.status).toBe(200);
  await post(`/api/resellers/${reseller}/balance`, { amount: 500 }, 200);
  const plan = (await http(t.baseUrl, 'GET', '/api/services', { token: adminApi })).body.data.find(
    (p: { name: string }) => p.name === 'Home 20M',
  ).id as number;
  const made = async (username: string, own?: number) =>
    post('/api/subscribers', {
      username,
      password: 'secret3',
      service_id: plan,
      reseller_id: reseller,
      ...(own === undefined ? {} : { price: own, override_price: true }),
    });
  const single = await made('taxed@north');
  const bulkA = await made('bulk-a@north');
  const bulkB = await made('bulk-b@north', 30);
  // The API says what renewing will invoice: 20 USD and 7.5% of it.
  const view = await http(t.baseUrl, 'GET', `/api/subscribers/${single}`, { token: adminApi });
  expect(view.body.data.renewal).toEqual({ price: 20, tax_rate: 7.5, tax_amount: 1.5, total: 21.5 });

  const page = await signedIn('admin', 'change-me-now');
  await page.goto(`${t.baseUrl}/#/subscribers/${single}`);
  await page.getByRole('heading', { name: 'taxed@north' }).waitFor();
  await page.getByRole('button', { name: 'Renew', exact: true }).click();
  const dialog = page.getByRole('dialog');
  const said = ((await dialog.locator('p').first().textContent()) ?? '').replace(/[\u2066-\u2069]/g, '');
  expect(said).toBe(
    'Renew taxed@north on Home 20M for 21.50\u00a0USD with tax (20.00\u00a0USD and 1.50\u00a0USD tax at 7.5%)? ' +
      'The reseller balance is debited 20.00\u00a0USD and an invoice of 21.50\u00a0USD is created.',
  );
  await dialog.getByRole('button', { name: 'Yes, renew' }).click();
  await page.getByText('Renewed', { exact: true }).waitFor();
  const invoicesOf = async (id: number) =>
    (await http(t.baseUrl, 'GET', `/api/invoices?subscriber_id=${id}`, { token: adminApi })).body.data as {
      total: number;
      tax_amount: number;
    }[];
  expect((await invoicesOf(single)).map((i) => [i.total, i.tax_amount])).toEqual([[21.5, 1.5]]);

  // Bulk: 21.50 + 32.25 USD, summed in cents.
  await page.goto(`${t.baseUrl}/#/subscribers?search=bulk-`);
  await page.getByRole('checkbox', { name: 'Select bulk-a@north' }).check();
  await page.getByRole('checkbox', { name: 'Select bulk-b@north' }).check();
  await page.locator('#bulk-action').selectOption('renew');
  const warning =
    'Each renewal debits the reseller balance its price and creates an invoice; the 2 invoices total 53.75\u00a0USD, tax included.';
  const bare = async (text: Promise<string | null>) => ((await text) ?? '').replace(/[\u2066-\u2069]/g, '');
  expect(await bare(page.locator('.bulk .warning').textContent())).toBe(warning);
  await page.getByRole('button', { name: 'Run renew on 2' }).click();
  const ask = page.getByRole('dialog');
  expect(await bare(ask.getByText('Each renewal').textContent())).toBe(warning);
  await ask.getByRole('button', { name: 'Yes, renew' }).click();
  await page.locator('.job-status', { hasText: 'done' }).waitFor({ timeout: 60_000 });
  const charged = [...(await invoicesOf(bulkA)), ...(await invoicesOf(bulkB))].map((i) => i.total);
  expect(charged.sort()).toEqual([21.5, 32.25]);
  expect(pageProblems).toEqual([]);
  await page.context().close();
});
