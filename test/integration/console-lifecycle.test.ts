/**
 * The console's part of the lifecycle (issue 24) in a real Chromium: auto-renew on the new
 * subscriber form, the detail and its edit form, the list (column and filters) and the bulk action
 * set_auto_renew; why access is blocked, in words; the subscriber's notifications (expiry reminders)
 * from GET /api/notifications, or the API's error when the server has no such route. In English and
 * in Arabic; axe-core finds no serious or critical violation and the page raises no script error.
 */
import { eq, inArray, sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { notifications, subscribers } from '../../shared/db/schema';
import { http, type TestApp } from '../helpers/app';

/** 2026-12-01 in the console's one date format, isolated and unbroken (docs/console.md). */
const DEC_1 = '\u2068Dec\u00a01,\u00a02026\u2069';
import { ADMIN_PASSWORD, axeScan, openConsole, SIGN_IN, signInOn, startConsoleApp } from '../helpers/console-browser';

jest.setTimeout(120_000);

let t: TestApp;
let browser: Browser;
let page: Page;
let adminApi: string;
let planId: number;
let resellerId: number;
const pageProblems: string[] = [];

/** Signs the admin in on a fresh page. */
async function signIn(words = SIGN_IN.en): Promise<void> {
  await page?.context().close();
  page = await openConsole(browser, t.baseUrl, pageProblems);
  await signInOn(page, 'admin', ADMIN_PASSWORD, words);
}

/** The text of the definition beside a label of the record. */
const valueOf = (label: string) => page.locator(`dl.kv dt:text-is("${label}") + dd`).first().textContent();

const autoRenewOf = async (id: number) =>
  (await t.db.select({ a: subscribers.autoRenew }).from(subscribers).where(eq(subscribers.id, id)))[0].a;

async function createByApi(username: string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await http(t.baseUrl, 'POST', '/api/subscribers', {
    token: adminApi,
    body: { username, password: 'pppoe-pass', service_id: planId, reseller_id: resellerId, ...extra },
  });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

beforeAll(async () => {
  ({ t, browser, adminApi } = await startConsoleApp());
  const plan = await http(t.baseUrl, 'POST', '/api/services', {
    token: adminApi,
    body: { name: 'Home 20M', price: 20, duration_days: 30, currency: 'USD' },
  });
  planId = plan.body.data.id;
  const reseller = await http(t.baseUrl, 'POST', '/api/resellers', {
    token: adminApi,
    body: { name: 'North shop', balance: 500, currency: 'USD' },
  });
  resellerId = reseller.body.data.id;
  const limit = await http(t.baseUrl, 'POST', `/api/resellers/${resellerId}/service-limits`, {
    token: adminApi,
    body: { service_id: planId, max_subscribers: null },
  });
  expect(limit.status).toBe(200);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('console: auto-renew, blocked access and notifications', () => {
  let aliId: number;

  it('creates a subscriber with auto-renew, shows it, and turns it off in the edit form', async () => {
    await signIn();
    await page.evaluate('location.hash = "#/subscribers"');
    await page.getByRole('link', { name: 'New subscriber' }).click();
    await page.getByLabel('Username').fill('ali@north');
    await page.getByLabel('Password').fill('pppoe-pass');
    await page.getByLabel('Plan *').selectOption({ label: `Home 20M (#${planId})` });
    await page.getByLabel('Reseller').selectOption({ label: `North shop (#${resellerId})` });
    await page.getByLabel('Renew automatically from the wallet at expiry').check();
    await page.getByRole('button', { name: 'Create subscriber' }).click();
    await page.getByRole('heading', { name: 'ali@north' }).waitFor();
    aliId = Number(/#\/subscribers\/(\d+)/.exec(page.url())?.[1]);
    expect(await autoRenewOf(aliId)).toBe(true);

    await expect(valueOf('Auto-renew from the wallet')).resolves.toBe('yes');
    await expect(valueOf('Access blocked')).resolves.toBe('not blocked');
    await expect(page.locator('.page-head .badge.auto-renew').textContent()).resolves.toBe('Auto-renew');

    await page.getByText('Edit the record').click();
    const box = page.getByLabel('Renew automatically from the wallet at expiry');
    await expect(box.isChecked()).resolves.toBe(true);
    await box.uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved').waitFor();
    await page.locator('dl.kv dt:text-is("Auto-renew from the wallet") + dd:text-is("no")').waitFor();
    expect(await autoRenewOf(aliId)).toBe(false);
    await expect(page.locator('.page-head .badge.auto-renew').count()).resolves.toBe(0);
  });

  it('says why access is blocked, in words, on the detail and in the list', async () => {
    // blocked_reason is kept by the system from the subscriber's state (shared/access/blocked.ts):
    // each state is written here with its reason, as the sweep would, so a sync keeps it.
    await t.db
      .update(subscribers)
      .set({ expiryDate: '2020-01-01', blockedReason: 'expired' })
      .where(eq(subscribers.id, aliId));
    await page.reload();
    await page.getByRole('heading', { name: 'ali@north' }).waitFor();
    // Waits for the reloaded detail: a read straight after the reload could meet the page before its data.
    await page.locator('dl.kv dt:text-is("Access blocked") + dd:text-is("expired")').waitFor();
    await expect(valueOf('Access blocked')).resolves.toBe('expired');
    await expect(page.locator('.page-head .badge.blocked').textContent()).resolves.toBe('Blocked: expired');

    // Within its paid time, but the daily quota of a plan without fair-use tiers is used up.
    await t.db
      .update(subscribers)
      .set({ expiryDate: '2099-01-01', fupLevel: 1, blockedReason: 'quota' })
      .where(eq(subscribers.id, aliId));
    await page.reload();
    await page.getByRole('heading', { name: 'ali@north' }).waitFor();
    await page.locator('dl.kv dt:text-is("Access blocked") + dd:text-is("quota used up")').waitFor();
    await expect(valueOf('Access blocked')).resolves.toBe('quota used up');
    await expect(page.locator('.page-head .badge.blocked').textContent()).resolves.toBe('Blocked: quota used up');

    // The list: the Blocked filter (a reason), the badge, and the auto-renew column.
    await createByApi('bob@north', { auto_renew: true });
    await page.getByRole('link', { name: 'Subscribers' }).click();
    await page.getByRole('link', { name: 'bob@north' }).waitFor();
    await page.getByLabel('Blocked', { exact: true }).selectOption({ label: 'quota used up' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/blocked_reason=quota/);
    // The URL changes before the filtered list arrives: wait for the row it drops, then read.
    await page.getByRole('link', { name: 'bob@north' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'ali@north' }).waitFor();
    await expect(page.getByRole('link', { name: 'bob@north' }).count()).resolves.toBe(0);
    await page.getByText('Blocked: quota used up').waitFor();

    await page.getByLabel('Blocked', { exact: true }).selectOption({ label: 'not blocked' });
    await page.getByLabel('Auto-renew', { exact: true }).selectOption({ label: 'yes' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/blocked=false/);
    await page.getByRole('link', { name: 'ali@north' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'bob@north' }).waitFor();
    await expect(page.getByRole('link', { name: 'ali@north' }).count()).resolves.toBe(0);
    const headers = await page.locator('main table thead th').allTextContents();
    const column = headers.indexOf('Auto-renew');
    expect(column).toBeGreaterThan(0);
    await expect(page.locator(`main table tbody tr td:nth-child(${column + 1})`).allTextContents()).resolves.toEqual([
      'yes',
    ]);
    await axeScan(page, 'subscribers (lifecycle filters)');
  });

  it('sets auto-renew on the selected subscribers with the bulk action', async () => {
    const ids = [
      await createByApi('bulk-a@north'),
      await createByApi('bulk-b@north'),
      await createByApi('bulk-c@north'),
    ];
    await page.goto(`${t.baseUrl}/#/subscribers?search=bulk-`);
    await page.getByRole('link', { name: 'bulk-c@north' }).waitFor();
    await page.getByRole('button', { name: 'Select all 3 matching' }).click();
    await page.getByText('3 selected').waitFor();
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'Set auto-renew' });
    await expect(page.getByLabel('Renew automatically from the wallet at expiry').isChecked()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Run set auto-renew on 3' }).click();
    await page.locator('.job-status', { hasText: 'done' }).waitFor();
    expect(await page.locator('.job p').first().textContent()).toMatch(/done,\s*3 succeeded, 0 failed/);
    const rows = await t.db.select({ a: subscribers.autoRenew }).from(subscribers).where(inArray(subscribers.id, ids));
    expect(rows.map((r) => r.a)).toEqual([true, true, true]);
    // The list reloads after the job: each row now reads yes.
    await expect(page.locator('main table tbody tr').count()).resolves.toBe(3);
  });

  it("lists the subscriber's notifications, or the API's error without the route", async () => {
    await t.db.insert(notifications).values([
      {
        subscriberId: aliId,
        kind: 'expiry_reminder',
        ruleDays: 3,
        expiryDate: '2026-12-01',
        provider: 'telegram',
        recipient: '+15550001',
        message: 'Your plan ends on 2026-12-01',
        status: 'sent',
        sentAt: new Date(),
      },
      {
        subscriberId: aliId,
        kind: 'expiry_reminder',
        ruleDays: 1,
        expiryDate: '2026-12-01',
        provider: 'telegram',
        recipient: '+15550001',
        message: 'Your plan ends on 2026-12-01',
        status: 'failed',
        error: 'chat not found',
      },
    ]);
    const section = page.getByRole('region', { name: 'Notifications' });
    // A server without the route answers the gateway's 404 for a path never declared: the section
    // says so, with the API's words, and the rest of the page lives on.
    await page.route('**/api/notifications?*', (route) =>
      route.fulfill({ status: 404, json: { success: false, message: 'not found' } }),
    );
    await page.goto(`${t.baseUrl}/#/subscribers/${aliId}`);
    await section.getByText('Notifications are not available on this server.').waitFor();
    await expect(section.getByRole('alert').textContent()).resolves.toBe('Not found: not found.');
    await page.getByRole('heading', { name: 'Bandwidth rules' }).waitFor();
    await page.unroute('**/api/notifications?*');

    const direct = await http(t.baseUrl, 'GET', `/api/notifications?subscriber_id=${aliId}`, { token: adminApi });
    await page.reload();
    await page.getByRole('heading', { name: 'Notifications' }).waitFor();
    if (direct.status === 200) {
      // The route serves the rows written above.
      await section.getByRole('cell', { name: 'chat not found' }).waitFor();
    } else {
      // No route yet (404), or its service away: the section says so in the API's words, the page lives on.
      await section.getByRole('alert').waitFor();
      if (direct.status === 404) {
        await section.getByText('Notifications are not available on this server.').waitFor();
        await expect(section.getByRole('alert').textContent()).resolves.toContain('Not found');
      }
      await page.getByRole('heading', { name: 'Bandwidth rules' }).waitFor();
      // The same rows as the route's answer (its documented shape), to check how they are drawn.
      const { rows } = await t.db.execute(
        sql`select id, subscriber_id, kind, rule_days, expiry_date::text, provider, recipient, message, status, error,
                created_at, sent_at from notifications where subscriber_id = ${aliId} order by id desc`,
      );
      await page.route('**/api/notifications?*', (route) =>
        route.fulfill({
          json: { success: true, data: rows, pagination: { page: 1, limit: 20, total: rows.length } },
        }),
      );
      await page.reload();
      await section.getByRole('cell', { name: 'chat not found' }).waitFor();
    }
    const cells = await section
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    expect(cells).toHaveLength(2);
    const byStatus = Object.fromEntries(cells.map((c) => [c[4], c]));
    expect(byStatus.failed).toEqual([
      expect.any(String),
      'Expiry reminder',
      '1',
      DEC_1,
      'failed',
      '—',
      'chat not found',
    ]);
    expect(byStatus.sent.slice(1, 5)).toEqual(['Expiry reminder', '3', DEC_1, 'sent']);
    await expect(section.getByRole('columnheader').allTextContents()).resolves.toEqual([
      'Date',
      'Kind',
      'Days before expiry',
      'Expiry date',
      'Status',
      'Sent at',
      'Error',
    ]);
    await axeScan(page, 'subscriber (lifecycle)');
  });

  it('reads auto-renew, the blocked reason and the notifications heading in Arabic', async () => {
    const res = await http(t.baseUrl, 'PUT', '/api/settings', { token: adminApi, body: { language: 'ar' } });
    expect(res.status).toBe(200);
    await signIn(SIGN_IN.ar);
    await page.evaluate(`location.hash = "#/subscribers/${aliId}"`);
    await page.getByRole('heading', { name: 'السجل' }).waitFor();
    await expect(valueOf('التجديد التلقائي من المحفظة')).resolves.toBe('لا');
    await expect(valueOf('الوصول محظور')).resolves.toBe('الحصة مستنفدة');
    await page.getByRole('heading', { name: 'الإشعارات' }).waitFor();
    await page.getByText('محظور: الحصة مستنفدة').waitFor();
    await axeScan(page, 'subscriber (lifecycle, rtl)');
    expect(pageProblems).toEqual([]);
  });
});
