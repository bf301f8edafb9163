/**
 * The console's Ledger and Live sessions pages and a subscriber's closed sessions
 * (docs/ledger-and-sessions.md) in a real Chromium: the ledger shows the filter's totals and rows
 * with names, filters by type and downloads the CSV; the sessions page lists the open session and
 * disconnects a selection through the bulk action (a disconnect queued in the outbox); the
 * subscriber's page lists its closed session. axe-core finds no serious or critical violation and
 * the pages raise no script error.
 */
import type { Browser, Page } from 'playwright-core';
import type { Tx } from '../../shared/db/client';
import { recordTransaction } from '../../shared/ledger';
import { encrypt } from '../../shared/auth/secrets';
import { parseEncryptionKey } from '../../shared/config';
import { TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, axeScan, openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

jest.setTimeout(120_000);

let t: TestApp;
let browser: Browser;
let page: Page;
let subscriberId = 0;
const pageProblems: string[] = [];

beforeAll(async () => {
  ({ t, browser } = await startConsoleApp());
  const reseller = await seedReseller(t.db, { name: 'North Resale' });
  const plan = await seedPlan(t.db, { price: 1500 });
  subscriberId = (await seedSubscriber(t.db, { resellerId: reseller.id, serviceId: plan.id, username: 'omar@isp' })).id;
  // The subscriber's page shows the password: it must decrypt.
  await t.pool.query(`update subscribers set password_enc = $2 where id = $1`, [
    subscriberId,
    encrypt('pppoe-pass', parseEncryptionKey(TEST_ENCRYPTION_KEY)),
  ]);
  await t.db.transaction(async (tx) => {
    for (const [type, amount, method] of [
      ['invoice_payment', 2550, 'cash'],
      ['invoice_payment', 1000, 'card'],
      ['renewal', -1500, null],
    ] as const)
      await recordTransaction(tx as unknown as Tx, {
        type,
        amount,
        currency: 'USD',
        subscriberId,
        username: 'omar@isp',
        resellerId: reseller.id,
        method,
      });
  });
  await t.pool.query(`insert into nas (nasname, shortname, secret) values ('10.20.0.1', 'tower-east', 's')`);
  await t.pool.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, callingstationid,
        acctstarttime, acctupdatetime, acctstoptime, acctinputoctets, acctoutputoctets, acctterminatecause)
     values ('live-1', 'live-1', 'omar@isp', '10.20.0.1', '100.64.5.5', 'AA:00:00:00:00:05', now() - interval '2 hours',
        now() - interval '1 minute', null, 2048, 4096, null),
       ('old-1', 'old-1', 'omar@isp', '10.20.0.1', '100.64.5.6', 'AA:00:00:00:00:05', now() - interval '3 days',
        now() - interval '2 days', now() - interval '2 days', 1024, 8192, 'Lost-Carrier')`,
  );
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

it('shows the ledger with its totals, filters it and downloads its CSV', async () => {
  page = await openConsole(browser, t.baseUrl, pageProblems);
  await signInOn(page, 'admin', ADMIN_PASSWORD);
  await page.getByRole('link', { name: 'Ledger' }).click();
  const totals = page.locator('table').filter({ hasText: 'Totals of the filter' });
  await totals.getByRole('row').filter({ hasText: 'USD' }).waitFor();
  const totalsText = await totals.textContent();
  // Amounts in the one money format, each isolated for right-to-left text (docs/console.md).
  const plain = totalsText!
    .replace(/[\u2066-\u2069]/g, '')
    .replace(/\u00a0/g, ' ')
    .replace(/\u2212/g, '-');
  expect(plain).toContain('USD335.50 USD-15.00 USD20.50 USD');
  const rows = page.locator('table').filter({ hasText: 'Subscriber' }).last().getByRole('row');
  expect(await rows.count()).toBe(4);
  await rows.filter({ hasText: 'renewal' }).getByRole('link', { name: 'omar@isp' }).waitFor();
  await rows.filter({ hasText: 'renewal' }).getByText('North Resale').waitFor();
  await axeScan(page, 'ledger');

  await page.getByText('Filters').click();
  await page.getByLabel('Type').selectOption('renewal');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.waitForURL(/type=renewal/);
  await page.locator('table').last().getByRole('row').nth(1).filter({ hasText: 'renewal' }).waitFor();
  // The newest row is the renewal before the filter too: wait for the other rows to go.
  await page.locator('table').last().getByRole('row').nth(2).waitFor({ state: 'detached' });
  expect(await page.locator('table').last().getByRole('row').count()).toBe(2);

  await page.getByRole('button', { name: 'Download CSV' }).click();
  const link = page.getByRole('link', { name: 'Save the CSV' });
  await link.waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  expect(download.suggestedFilename()).toBe('transactions.csv');
  const stream = await download.createReadStream();
  let csv = '';
  for await (const chunk of stream) csv += String(chunk);
  const lines = csv.trim().split('\r\n');
  expect(lines).toHaveLength(2);
  expect(lines[1]).toContain(',renewal,-15,USD,');
  expect(lines[1]).toContain(',omar@isp,');
});

it('lists the live session, refreshes, and disconnects a selection through the bulk action', async () => {
  await page.getByRole('link', { name: 'Live sessions' }).click();
  // The sessions page first: until it renders, the ledger's own omar@isp row still matches.
  await page.getByText('Refreshes every 10 seconds.').waitFor();
  const row = page.getByRole('row').filter({ hasText: 'omar@isp' });
  await row.waitFor();
  const text = await row.textContent();
  expect(text).toContain('tower-east');
  expect(text).toContain('100.64.5.5');
  expect(text).toContain('AA:00:00:00:00:05');
  expect(text).toContain('2h 0m');
  await axeScan(page, 'live sessions');

  await row.getByRole('checkbox').check();
  await page.getByRole('button', { name: 'Disconnect selected (1)' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('The selected subscribers are disconnected now.').waitFor();
  await dialog.getByRole('button', { name: 'Disconnect selected (1)' }).click();
  await page.getByText('Disconnected 1, failed 0').waitFor();
  const { rows } = await t.pool.query(`select payload from outbox where event = 'subscriber.disconnect'`);
  expect(rows.map((r) => r.payload.subscriber_id)).toContain(subscriberId);
});

it("shows the subscriber's closed sessions on its page", async () => {
  await page.getByRole('row').filter({ hasText: 'omar@isp' }).getByRole('link', { name: 'omar@isp' }).click();
  const closed = page.locator('section[aria-labelledby="h-closed-sessions"]');
  const row = closed.getByRole('row').filter({ hasText: 'Lost-Carrier' });
  await row.waitFor();
  expect(await row.textContent()).toContain('100.64.5.6');
  expect(await closed.getByRole('row').count()).toBe(2);
  await axeScan(page, 'subscriber with closed sessions');
  expect(pageProblems).toEqual([]);
});
