/**
 * The console's webhooks page (docs/webhooks.md) in a real Chromium: an admin creates an endpoint
 * with its events' checkboxes and sees the secret once, the endpoint receives a signed event that
 * the secret verifies, the endpoint's page lists the delivery and redelivers it. axe-core finds no
 * serious or critical violation and the page raises no script error.
 */
import { eq } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { verifySignature } from '../../services/webhooks/signing';
import { webhookDeliveries, webhooks } from '../../shared/db/schema';
import { http, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, axeScan, openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';
import { waitFor } from '../helpers/wait';

jest.setTimeout(120_000);

let t: TestApp;
let rx: Receiver;
let browser: Browser;
let page: Page;
let adminApi: string;
const pageProblems: string[] = [];

beforeAll(async () => {
  rx = await startReceiver();
  ({ t, browser, adminApi } = await startConsoleApp());
  const allow = await http(t.baseUrl, 'PUT', '/api/settings', {
    token: adminApi,
    body: { allow_private_targets: true },
  });
  expect(allow.status).toBe(200);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await rx?.close();
});

it('creates an endpoint, shows the secret once, lists its deliveries and redelivers one', async () => {
  page = await openConsole(browser, t.baseUrl, pageProblems);
  await signInOn(page, 'admin', ADMIN_PASSWORD);
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByText('No webhook yet.').waitFor();
  await axeScan(page, 'webhooks, empty');

  await page.getByRole('button', { name: 'New webhook' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('URL *').fill(`${rx.base}/console`);
  await dialog.getByLabel('Description').fill('CRM');
  await dialog.getByLabel('subscriber.created').check();
  await dialog.getByLabel('invoice.paid').check();
  await axeScan(page, 'new webhook dialog');
  await dialog.getByRole('button', { name: 'New webhook' }).click();
  const secret = (await dialog.locator('code.secret').textContent()) ?? '';
  expect(secret).toMatch(/^whsec_/);
  await dialog.getByRole('button', { name: 'Close' }).click();
  const link = page.getByRole('link', { name: `${rx.base}/console` });
  await link.waitFor();
  expect(await page.content()).not.toContain(secret);
  const [row] = await t.db.select().from(webhooks);
  expect(row).toMatchObject({ events: ['invoice.paid', 'subscriber.created'], description: 'CRM', enabled: true });

  const plan = await http(t.baseUrl, 'POST', '/api/services', {
    token: adminApi,
    body: { name: 'Home', price: 20, duration_days: 30, currency: 'USD' },
  });
  const reseller = await http(t.baseUrl, 'POST', '/api/resellers', {
    token: adminApi,
    body: { name: 'Shop', balance: 100, currency: 'USD' },
  });
  await http(t.baseUrl, 'POST', `/api/resellers/${reseller.body.data.id}/service-limits`, {
    token: adminApi,
    body: { service_id: plan.body.data.id },
  });
  const sub = await http(t.baseUrl, 'POST', '/api/subscribers', {
    token: adminApi,
    body: {
      username: 'web@hook',
      password: 'pppoe-pass',
      service_id: plan.body.data.id,
      reseller_id: reseller.body.data.id,
    },
  });
  expect(sub.status).toBe(201);
  await waitFor('the event at the receiver', () => rx.on('/console').length === 1);
  const [first] = rx.on('/console');
  expect(verifySignature(String(first.headers['x-webhook-signature']), first.body, secret)).toBe(true);
  const [delivery] = await waitFor('the delivery recorded', async () => {
    const rows = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, row.id));
    return rows[0]?.status === 'succeeded' && rows;
  });

  await link.click();
  await page.getByRole('heading', { name: `${rx.base}/console` }).waitFor();
  const line = page.getByRole('row').filter({ hasText: 'subscriber.created' });
  await line.getByText('succeeded').waitFor();
  await axeScan(page, 'webhook deliveries');
  await line.getByRole('button', { name: `Redeliver ${delivery.id}` }).click();
  await page
    .getByRole('dialog')
    .getByRole('button', { name: `Yes, redeliver ${delivery.id}` })
    .click();
  await page.getByRole('status').getByText('Delivered').waitFor();
  expect(rx.on('/console')).toHaveLength(2);
  expect(rx.on('/console')[1].body).toBe(first.body);
  await line.getByText('2 attempts').waitFor();
  expect(pageProblems).toEqual([]);
});
