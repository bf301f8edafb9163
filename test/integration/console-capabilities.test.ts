/**
 * What the API could do and the console did not show (issue 39), in a real Chromium against the
 * real application: a plan's fair-use tiers added, changed and removed; a manager edited and its
 * password reset, with its reseller by name; a card batch made (its PINs saved once), printed in
 * part, exported, suspended and released, a card suspended, redeemed on the subscriber page, and a
 * lockout lifted; an import uploaded as a dry run, reported, then run for real; the settings in
 * sections with the installed languages, a logo upload and the operator's name in the header; form
 * errors in the field's own words; a quick-pay's two payments in the audit trail; and no page that
 * asks for a missing file (the favicon among them). axe-core finds no serious or critical
 * violation and the pages raise no script error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { Browser, Download, Page } from 'playwright-core';
import { cardBatches, cards, managers, services, settings, subscribers } from '../../shared/db/schema';
import { http, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, axeScan, openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'import', 'csv');
const PNG_1PX = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

let t: TestApp;
let browser: Browser;
let page: Page;
let adminApi: string;
let resellerId: number;
let aliId: number;
const pageProblems: string[] = [];
/** Every response of 400 or more the pages were given for a file (not an API answer). */
const missingFiles: string[] = [];

async function post(path: string, body: unknown) {
  return http(t.baseUrl, 'POST', path, { token: adminApi, body });
}

async function downloaded(start: () => Promise<unknown>): Promise<{ name: string; body: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download') as Promise<Download>, start()]);
  const file = await download.path();
  return { name: download.suggestedFilename(), body: fs.readFileSync(String(file)) };
}

async function go(hash: string, heading: string | RegExp): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

beforeAll(async () => {
  ({ t, browser, adminApi } = await startConsoleApp());
  const reseller = await post('/api/resellers', { name: 'North shop', balance: 1000, currency: 'USD' });
  resellerId = reseller.body.data.id;
  const plan = await post('/api/services', { name: 'Home', price: 20, duration_days: 30, currency: 'USD' });
  await post(`/api/resellers/${resellerId}/service-limits`, { service_id: plan.body.data.id });
  const ali = await post('/api/subscribers', {
    username: 'ali@north',
    password: 'pppoe-pass',
    service_id: plan.body.data.id,
    reseller_id: resellerId,
  });
  expect(ali.status).toBe(201);
  aliId = ali.body.data.id;
  page = await openConsole(browser, t.baseUrl, pageProblems);
  page.on('response', (res) => {
    const url = new URL(res.url());
    if (res.status() >= 400 && !url.pathname.startsWith('/api/')) missingFiles.push(`${res.status()} ${url.pathname}`);
  });
  await signInOn(page, 'admin', ADMIN_PASSWORD);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('capabilities on screen', () => {
  it("adds, changes and removes a plan's fair-use tiers", async () => {
    await go('#/plans', 'Plans');
    await page.getByRole('button', { name: 'New plan' }).click();
    let dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name *').fill('Tiered');
    await dialog.getByLabel('Price *').fill('30');
    await dialog.getByLabel('Tier 1: after GB this month').fill('50');
    await dialog.getByLabel('Tier 1: rate limit (e.g. 2M/2M)').fill('2M/2M');
    await dialog.getByLabel('Tier 2: after GB this month').fill('80');
    await dialog.getByLabel('Tier 2: rate limit (e.g. 2M/2M)').fill('1M/1M');
    await axeScan(page, 'plan form with tiers');
    await dialog.getByRole('button', { name: 'New plan' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Tiered' });
    await row.getByText('Tier 1: 2M/2M after 50 GB').waitFor();
    await row.getByText('Tier 2: 1M/1M after 80 GB').waitFor();
    const tiersOf = async () =>
      (await t.db.select({ tiers: services.fupTiers }).from(services).where(eq(services.name, 'Tiered')))[0].tiers;
    expect(await tiersOf()).toEqual([
      { level: 1, threshold_gb: 50, rate_limit: '2M/2M' },
      { level: 2, threshold_gb: 80, rate_limit: '1M/1M' },
    ]);

    // Tier 2 cleared (removed), tier 1's rate changed.
    await row.getByRole('button', { name: 'Edit Tiered' }).click();
    dialog = page.getByRole('dialog');
    await expect(dialog.getByLabel('Tier 2: after GB this month').inputValue()).resolves.toBe('80');
    await dialog.getByLabel('Tier 1: rate limit (e.g. 2M/2M)').fill('3M/3M');
    await dialog.getByLabel('Tier 2: after GB this month').fill('');
    await dialog.getByLabel('Tier 2: rate limit (e.g. 2M/2M)').fill('');
    await dialog.getByRole('button', { name: 'Edit Tiered' }).click();
    await row.getByText('Tier 1: 3M/3M after 50 GB').waitFor();
    await expect(row.getByText(/^Tier 2/).count()).resolves.toBe(0);
    expect(await tiersOf()).toEqual([{ level: 1, threshold_gb: 50, rate_limit: '3M/3M' }]);

    // Half a tier is refused before the API is asked, and a rate the API refuses is named by its label.
    await row.getByRole('button', { name: 'Edit Tiered' }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Tier 3: after GB this month').fill('90');
    await dialog.getByRole('button', { name: 'Edit Tiered' }).click();
    await dialog.getByText('Tier 3 needs both its GB and its rate limit.').waitFor();
    await dialog.getByLabel('Tier 3: rate limit (e.g. 2M/2M)').fill('fast');
    await dialog.getByRole('button', { name: 'Edit Tiered' }).click();
    await dialog
      .getByRole('alert')
      .getByText('Fair-use tiers must be a rate such as 10M/20M, with no backtick or %{.')
      .waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await tiersOf()).toEqual([{ level: 1, threshold_gb: 50, rate_limit: '3M/3M' }]);
  });

  it("edits a manager, resets its password, shows its reseller's name; form errors name the field", async () => {
    const desk = await post('/api/managers', {
      username: 'desk',
      password: 'desk-pass-1',
      role: 'user',
      reseller_id: resellerId,
      permissions: ['subscribers.view'],
    });
    expect(desk.status).toBe(201);
    await go('#/managers', 'Managers');
    const row = page.getByRole('row').filter({ hasText: 'desk' });
    await row.getByRole('cell', { name: 'North shop', exact: true }).waitFor();

    await row.getByRole('button', { name: 'Reset the password of desk' }).click();
    let dialog = page.getByRole('dialog');
    await dialog.getByLabel('New password (8 or more)').fill('desk-pass-2');
    await dialog.getByRole('button', { name: 'Yes, reset the password of desk' }).click();
    await page.getByRole('status').getByText('Password of desk reset').waitFor();
    const login = (password: string) =>
      http(t.baseUrl, 'POST', '/api/auth/login', { body: { username: 'desk', password } });
    expect((await login('desk-pass-2')).status).toBe(200);
    expect((await login('desk-pass-1')).status).toBe(401);

    await row.getByRole('button', { name: 'Edit desk' }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('renew', { exact: true }).check();
    await dialog.getByLabel('Active (may sign in)').uncheck();
    await axeScan(page, 'edit manager');
    await dialog.getByRole('button', { name: 'Edit desk' }).click();
    await page.getByRole('status').getByText('Manager desk saved').waitFor();
    const [saved] = await t.db.select().from(managers).where(eq(managers.username, 'desk'));
    expect(saved).toMatchObject({ active: false, resellerId });
    expect([...saved.permissions].sort()).toEqual(['subscribers.renew', 'subscribers.view']);
    await row.getByRole('cell', { name: 'no', exact: true }).waitFor();

    // A reseller manager without its reseller: the API's `reseller_id is required ...` reads as the
    // field's own label, beside the field, and never as "Not allowed".
    await page.getByRole('button', { name: 'New manager' }).click();
    dialog = page.getByRole('dialog');
    await dialog.getByLabel('Username').fill('ab');
    await dialog.getByLabel('Password (8 or more)').fill('shop-pass-1');
    await dialog.getByLabel('Role').selectOption('reseller');
    await dialog.getByRole('button', { name: 'New manager' }).click();
    await dialog.locator('.field-error', { hasText: 'Username needs at least 3 characters.' }).waitFor();
    await dialog.getByRole('alert').getByText('Please check Username.').waitFor();
    await expect(dialog.getByLabel('Username').getAttribute('aria-invalid')).resolves.toBe('true');
    await dialog.getByLabel('Username').fill('shop2');
    await dialog.getByRole('button', { name: 'New manager' }).click();
    await dialog.locator('.field-error', { hasText: 'Reseller is required.' }).waitFor();
    await expect(dialog.getByLabel('Reseller').getAttribute('aria-invalid')).resolves.toBe('true');
    expect(await dialog.textContent()).not.toMatch(/Not allowed|reseller_id/);
    await axeScan(page, 'form errors');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await t.db.select().from(managers).where(eq(managers.username, 'shop2'))).toEqual([]);
  });

  it('makes a card batch, prints a part, exports, suspends and releases; redeems one; lifts a lockout', async () => {
    await go('#/cards', 'Prepaid cards');
    await page.getByText('No card batch yet.').waitFor();
    await page.getByRole('button', { name: 'New card batch' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Number of cards').fill('5');
    await dialog.getByLabel('Money value (leave empty for a plan card)').fill('10');
    await dialog.getByLabel('Serial prefix').fill('NC');
    await dialog.getByRole('button', { name: 'New card batch' }).click();
    await dialog.getByText(/Batch #\d+: 5 cards made\./).waitFor();
    const pins = await downloaded(() => dialog.getByRole('button', { name: 'Save the PINs (CSV)' }).click());
    const lines = pins.body.toString('utf8').trim().split('\n');
    expect(lines[0]).toBe('serial,pin,value,expires_at');
    expect(lines).toHaveLength(6);
    const [serial, pin] = lines[1].split(',');
    await dialog.getByRole('button', { name: 'Close' }).click();
    const [batch] = await t.db.select().from(cardBatches);
    expect(batch).toMatchObject({ count: 5, prefix: 'NC', status: 'active' });
    await page
      .getByRole('row')
      .filter({ hasText: '1–5' })
      .getByRole('link', { name: `Card batch #${batch.id}` })
      .waitFor();
    await axeScan(page, 'cards');

    await page.getByRole('link', { name: `Card batch #${batch.id}` }).click();
    await page.getByRole('heading', { name: `Card batch #${batch.id}`, level: 1 }).waitFor();
    await page.getByLabel('To card').fill('3');
    const sheet = await downloaded(() => page.getByRole('button', { name: 'Print cards' }).click());
    expect(sheet.body.subarray(0, 5).toString()).toBe('%PDF-');
    expect(sheet.name).toBe(`cards-batch-${batch.id}-1-3.pdf`);
    await page.locator('dt:text-is("Unprinted") + dd', { hasText: '4–5' }).waitFor();
    const [printed] = await t.db.select().from(cardBatches);
    expect(printed.printedRanges).toEqual([expect.objectContaining({ from: 1, to: 3 })]);
    await expect(page.getByLabel('From card').inputValue()).resolves.toBe('4');

    const csv = await downloaded(() => page.getByRole('button', { name: 'Download the CSV' }).click());
    expect(csv.body.toString('utf8').split('\n')[0]).toBe('serial,status,used_at,used_by_subscriber_id');

    await page.getByRole('button', { name: 'Suspend the batch' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, suspend the batch' }).click();
    await page.getByRole('button', { name: 'Release the batch' }).waitFor();
    expect((await t.db.select().from(cardBatches))[0].status).toBe('suspended');
    await page.getByRole('button', { name: 'Release the batch' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, release the batch' }).click();
    await page.getByRole('button', { name: 'Suspend the batch' }).waitFor();
    expect((await t.db.select().from(cardBatches))[0].status).toBe('active');

    const last = lines[5].split(',')[0];
    await page.getByRole('button', { name: `Suspend ${last}` }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: `Yes, suspend ${last.toLowerCase()}` })
      .click();
    await page.getByRole('button', { name: `Release ${last}` }).waitFor();
    expect((await t.db.select().from(cards).where(eq(cards.serial, last)))[0].status).toBe('suspended');
    await axeScan(page, 'card batch');

    // Redeemed on the subscriber's page: the wallet is credited, the card used by ali.
    await go(`#/subscribers/${aliId}`, 'ali@north');
    await page.getByRole('button', { name: 'Redeem a card' }).click();
    const redeem = page.getByRole('dialog');
    await redeem.getByLabel('Card PIN').fill(pin);
    await redeem.getByRole('button', { name: 'Redeem a card' }).click();
    await redeem.getByText(`Card ${serial} redeemed.`).waitFor();
    await redeem.getByText(/Wallet now .*10/).waitFor();
    const [used] = await t.db.select().from(cards).where(eq(cards.serial, serial));
    expect(used).toMatchObject({ status: 'used', usedBySubscriberId: aliId });
    await redeem.getByRole('button', { name: 'Close' }).click();

    // Five wrong PINs lock ali out; the cards page lifts it.
    for (let i = 0; i < 5; i++)
      expect((await post(`/api/subscribers/${aliId}/redeem-card`, { pin: `0000000000000${i}` })).status).toBe(400);
    expect((await post(`/api/subscribers/${aliId}/redeem-card`, { pin: '00000000000009' })).status).toBe(429);
    // The console says what the lockout's 429 means (not "wait a few seconds").
    await page.getByRole('button', { name: 'Redeem a card' }).click();
    await redeem.getByLabel('Card PIN').fill('00000000000008');
    await redeem.getByRole('button', { name: 'Redeem a card' }).click();
    await redeem
      .getByRole('alert')
      .getByText('Too many wrong PINs: a manager lifts the lockout on the Prepaid cards page.')
      .waitFor();
    await redeem.getByRole('button', { name: 'Cancel' }).click();
    await go('#/cards', 'Prepaid cards');
    const tries = page.getByRole('row').filter({ hasText: 'refused' });
    // The five wrong PINs and the two tries the lockout refused.
    await tries.nth(6).waitFor();
    await expect(tries.count()).resolves.toBe(7);
    await tries.first().getByRole('button', { name: 'Lift the lockout' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, lift the lockout' }).click();
    await page.getByRole('status').getByText('Lockout lifted: 7 tries cleared').waitFor();
    await page.getByRole('row').filter({ hasText: 'lifted' }).nth(6).waitFor();
    await expect(page.getByRole('button', { name: 'Lift the lockout' }).count()).resolves.toBe(0);
    expect((await post(`/api/subscribers/${aliId}/redeem-card`, { pin: '00000000000009' })).status).toBe(400);
    await axeScan(page, 'card tries');
  });

  it('uploads an import as a dry run, shows its report, then runs it for real', async () => {
    await go('#/imports', 'Imports');
    await expect(page.getByLabel('Dry run: write nothing, report what would happen').isChecked()).resolves.toBe(true);
    await page.getByLabel('subscribers.csv').setInputFiles(path.join(FIXTURES, 'subscribers.csv'));
    await page.getByLabel('history.csv').setInputFiles(path.join(FIXTURES, 'history.csv'));
    await axeScan(page, 'imports');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.getByRole('heading', { name: /^Import #\d+$/ }).waitFor();
    await page.locator('.job-status', { hasText: 'done' }).waitFor({ timeout: 60_000 });
    await page.getByText('dry run', { exact: false }).first().waitFor();
    await page.getByText('The totals reconcile to the cent.').waitFor();
    const subscribersRow = page
      .getByRole('row')
      .filter({ has: page.getByRole('cell', { name: 'Subscribers', exact: true }) });
    const [, read, imported, , skipped] = await subscribersRow.getByRole('cell').allTextContents();
    expect({ read, imported, skipped }).toEqual({ read: '10', imported: '5', skipped: '5' });
    await axeScan(page, 'import report');
    const alice = () => t.db.select().from(subscribers).where(eq(subscribers.username, 'alice'));
    expect(await alice()).toEqual([]);

    const dryRun = page.url();
    await page.getByRole('button', { name: 'Run it for real' }).click();
    await page.waitForURL((url) => url.toString() !== dryRun);
    await page.locator('.job-status', { hasText: 'done' }).waitFor({ timeout: 60_000 });
    await page.getByText('for real', { exact: false }).first().waitFor();
    expect(await alice()).toHaveLength(1);
  });

  it('groups the settings, offers the installed languages, uploads a logo and shows the operator name', async () => {
    await go('#/settings', 'Settings');
    await page.getByRole('heading', { name: 'Security', level: 2 }).waitFor();
    const sections = await page.locator('main h2').allTextContents();
    expect(sections).toEqual([
      'Company and branding',
      'Billing and tax',
      'Lifecycle and reminders',
      'Access and walled garden',
      'Chat',
      'Payments',
      'Self-care',
      'Security',
    ]);
    const languages = await page.getByLabel('Language').locator('option').allTextContents();
    expect(languages).toEqual(['English (en)', 'العربية (ar)']);

    await page
      .getByLabel('Logo (PNG')
      .setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: Buffer.alloc(300 * 1024) });
    await page.getByText('The logo is larger than 256 KB.').waitFor();
    await page.getByLabel('Logo (PNG').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG_1PX });
    const preview = page.getByRole('img', { name: 'The logo as documents show it' });
    await expect(preview.getAttribute('src')).resolves.toBe(`data:image/png;base64,${PNG_1PX.toString('base64')}`);
    await axeScan(page, 'settings');
    await page.getByRole('button', { name: 'Save company and branding' }).click();
    await page.getByRole('status').getByText('Settings saved').waitFor();
    const stored = async (key: string) => (await t.db.select().from(settings).where(eq(settings.key, key)))[0]?.value;
    expect(await stored('operator_logo_url')).toBe(`data:image/png;base64,${PNG_1PX.toString('base64')}`);

    await page.getByLabel('Default tax rate').fill('5');
    await page.getByRole('button', { name: 'Save billing and tax' }).click();
    // The status line still says "Settings saved" from the logo: the row is what tells.
    expect(await waitFor('the tax rate saved', async () => (await stored('default_tax_rate')) === 5)).toBe(true);

    await page.getByLabel('Operator name').fill('NetCo <North>');
    await page.getByRole('button', { name: 'Save company and branding' }).click();
    await page.locator('header .brand', { hasText: 'NetCo <North>' }).waitFor();
    expect(await stored('operator_name')).toBe('NetCo <North>');
  });

  it("shows a quick-pay's two payments as two payments in the audit trail", async () => {
    const items = [{ description: 'Install', qty: 1, unit_price: 30 }];
    const a = await post('/api/invoices', { subscriber_id: aliId, items });
    const b = await post('/api/invoices', { subscriber_id: aliId, items });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect((await post(`/api/invoices/quick-pay/${aliId}`, { amount: 60 })).status).toBe(200);
    await go('#/audit', 'Audit trail');
    const row = page.getByRole('row').filter({ hasText: 'payment.quick_pay' });
    await row.waitFor();
    const payments = row.locator('ol.records li');
    await expect(payments.count()).resolves.toBe(2);
    await expect(payments.first().textContent()).resolves.toContain(`Invoice ${a.body.data.id}`);
    await expect(payments.nth(1).textContent()).resolves.toContain(`Invoice ${b.body.data.id}`);
    await expect(row.locator('del').count()).resolves.toBe(0);
  });

  it('asks for no missing file on any page (the favicon is in the page)', async () => {
    const [batch] = await t.db.select().from(cardBatches);
    const pages: [string, string | RegExp][] = [
      ['#/subscribers', 'Subscribers'],
      [`#/subscribers/${aliId}`, 'ali@north'],
      ['#/subscribers/new', 'New subscriber'],
      ['#/invoices', 'Invoices'],
      ['#/resellers', 'Resellers'],
      ['#/plans', 'Plans'],
      ['#/cards', 'Prepaid cards'],
      [`#/cards/batches/${batch.id}`, `Card batch #${batch.id}`],
      ['#/imports', 'Imports'],
      ['#/nas', 'Access servers'],
      ['#/managers', 'Managers'],
      ['#/settings', 'Settings'],
      ['#/webhooks', 'Webhooks'],
      ['#/audit', 'Audit trail'],
      ['#/api-keys', 'API keys'],
      ['#/security', 'Two-factor sign-in'],
    ];
    await page.reload();
    for (const [hash, heading] of pages) await go(hash, heading);
    await expect(page.locator('link[rel=icon]').getAttribute('href')).resolves.toMatch(/^data:image\/svg\+xml,/);
    // Empty charts: a byte axis labels each value once.
    const labels = await page.evaluate(
      `import('/console/charts.js').then((charts) => charts.distinctLabels(['1 B', '1 B', '1 B', '0 B']))`,
    );
    expect(labels).toEqual(['1 B', '', '', '0 B']);
    expect(missingFiles).toEqual([]);
    expect(pageProblems).toEqual([]);
  });
});
