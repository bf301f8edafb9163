/**
 * The operator console in a real Chromium (playwright-core and the system browser, as the PDF
 * renderer uses), against the real application: an admin sets up a reseller and a plan, a reseller
 * manager runs a subscriber's life (create, renew, invoice, partial payment, quick-pay, PDF, a bulk
 * action on 100 subscribers), a viewer sees and can do no writes, and axe-core finds no serious or
 * critical accessibility violation on any page. The README's pictures are console-screenshots.test.ts's.
 */
import fs from 'node:fs';
import { sql } from 'drizzle-orm';
import type { Browser, Page } from 'playwright-core';
import { http, startTestApp, type TestApp } from '../helpers/app';
import { axeScan, launchChromium, openConsole, SIGN_IN, signInOn } from '../helpers/console-browser';

// A browser, a server and a PDF render in one file: room beyond jest's default on a busy CI machine.
jest.setTimeout(120_000);

const ADMIN_PASSWORD = 'change-me-now';

let t: TestApp;
let browser: Browser;
let page: Page;
/** Script errors and CSP refusals seen by the page: none is expected. */
const pageProblems: string[] = [];

async function apiToken(username: string, password: string): Promise<string> {
  const res = await http(t.baseUrl, 'POST', '/api/auth/login', { body: { username, password } });
  expect(res.status).toBe(200);
  return res.body.data.token;
}

/** A fresh browser context (no session left from the one before) for every sign-in. */
async function newPage(): Promise<void> {
  await page?.context().close();
  page = await openConsole(browser, t.baseUrl, pageProblems);
}

async function signIn(username: string, password: string, words = SIGN_IN.en): Promise<void> {
  await newPage();
  await signInOn(page, username, password, words);
}

async function signOut(): Promise<void> {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByText('You are signed out.').waitFor();
}

async function dialogSubmit(button: string, fill: Record<string, string> = {}, submit?: string): Promise<void> {
  await page.getByRole('button', { name: button, exact: true }).first().click();
  const dialog = page.getByRole('dialog');
  for (const [label, value] of Object.entries(fill)) {
    const field = dialog.getByLabel(label, { exact: false }).first();
    if ((await field.evaluate((el) => el.tagName)) === 'SELECT') await field.selectOption({ label: value });
    else await field.fill(value);
  }
  await dialog.getByRole('button', { name: submit ?? new RegExp(`^(Yes, )?${button}$`, 'i') }).click();
}

beforeAll(async () => {
  // Bulk actions answer 202 at once, so the console has a job to follow (bulk.service reads it per request).
  process.env.BULK_SYNC_SECONDS = '0';
  t = await startTestApp({ env: { ADMIN_PASSWORD } });
  browser = await launchChromium();
});

afterAll(async () => {
  delete process.env.BULK_SYNC_SECONDS;
  await browser?.close();
  await t?.close();
});

describe('operator console', () => {
  it('serves the page with its security headers and files from an allowlist only', async () => {
    const res = await fetch(`${t.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('<html lang="en" dir="ltr">');
    const version = /\/console\/app\.js\?v=([0-9a-f]+)/.exec(html)?.[1];
    const app = await fetch(`${t.baseUrl}/console/app.js?v=${version}`);
    expect(app.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(app.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${t.baseUrl}/console/preact.mjs`)).status).toBe(200);
    for (const unknown of ['index.html', 'nope.js', 'console.service.ts']) {
      expect((await fetch(`${t.baseUrl}/console/${unknown}`)).status).toBe(404);
    }
    // A name that is not a plain file name never reaches the lookup.
    for (const traversal of ['..%2Fconsole.service.ts', '%2E%2E%2F%2E%2E%2Fpackage.json', '.hidden.js']) {
      expect((await fetch(`${t.baseUrl}/console/${traversal}`)).status).toBe(400);
    }
  });

  it('an admin signs in and creates a reseller and a plan, and allows the plan for it', async () => {
    await newPage();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await axeScan(page, 'sign-in');
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Sign-in refused: invalid username or password.').waitFor();
    await signIn('admin', ADMIN_PASSWORD);
    // The console opens on the dashboard (issue 38: "the console's home page shows it").
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/dashboard');

    await page.getByRole('link', { name: 'Plans' }).click();
    await dialogSubmit('New plan', { Name: 'Home 20M', Price: '20', 'Rate limit': '20M/20M' });
    await page.getByRole('cell', { name: 'Home 20M', exact: true }).waitFor();
    await axeScan(page, 'plans');

    await page.getByRole('link', { name: 'Resellers' }).click();
    await dialogSubmit('New reseller', { Name: 'North shop', 'Commission %': '10', 'Opening balance': '5000' });
    await page.getByText('North shop', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Details of North shop' }).click();
    await dialogSubmit('Allow a plan', { Plan: 'Home 20M (#1)' });
    await page.getByRole('cell', { name: '1', exact: true }).first().waitFor();
    await axeScan(page, 'resellers');

    // The reseller's manager, with the permissions ticked one by one.
    await page.getByRole('link', { name: 'Managers' }).click();
    await page.getByRole('button', { name: 'New manager' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('Username').fill('north');
    await form.getByLabel('Password (8 or more)').fill('north-pass-1');
    await form.getByLabel('Role').selectOption('reseller');
    await form.getByLabel('Reseller').selectOption({ label: 'North shop (#1)' });
    for (const permission of ['create', 'edit', 'renew', 'inactivate', 'view graph'])
      await form.getByLabel(permission, { exact: true }).check();
    await form.getByRole('button', { name: 'New manager' }).click();
    await page.getByRole('cell', { name: 'north', exact: true }).waitFor();

    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('operator name').fill('NetCo');
    await page.getByRole('button', { name: 'Save company and branding' }).click();
    // The page carries the operator's name for its header: saving it loads the page again.
    await page.locator('header .brand', { hasText: 'NetCo' }).waitFor();
    const { rows: saved } = await t.db.execute(sql`select value from settings where key = 'operator_name'`);
    expect(saved).toEqual([{ value: 'NetCo' }]);

    for (const [link, name] of [
      ['Access servers', 'nas'],
      ['Managers', 'managers'],
      ['Settings', 'settings'],
    ]) {
      await page.getByRole('link', { name: link }).click();
      await page.getByRole('heading', { name: link }).waitFor();
      await page.locator('main table, main form, main p.muted').first().waitFor();
      await axeScan(page, name);
    }
    const rows = await t.db.execute(
      sql`select r.name, r.balance, l.service_id from resellers r join reseller_service_limits l on l.reseller_id = r.id`,
    );
    expect(rows.rows).toEqual([expect.objectContaining({ name: 'North shop', service_id: 1 })]);
    await signOut();
  });

  it('a reseller manager runs a subscriber through renewal, payments, quick-pay and the PDF', async () => {
    await signIn('north', 'north-pass-1');
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('link', { name: 'Subscribers', exact: true }).click();
    await page.getByRole('heading', { name: 'Subscribers' }).waitFor();
    await expect(page.getByRole('link', { name: 'Settings' }).count()).resolves.toBe(0);

    await page.getByRole('link', { name: 'New subscriber' }).click();
    await page.getByLabel('Username').fill('ali@north');
    await page.getByLabel('Password').fill('pppoe-pass');
    await page.getByLabel('Plan *').selectOption({ label: 'Home 20M (#1)' });
    await page.getByLabel('Phone').fill('+15550001');
    // The bandwidth series are network-access's (its shape: hourly, daily and per-session points):
    // first unavailable (503, retried, then a Retry button), then drawn as charts.
    let bandwidthUp = false;
    const bandwidth = {
      subscriber_id: 1,
      username: 'ali@north',
      last_24h: [
        { hour: '2026-11-23T08:00:00Z', download_bytes: 1.2e9, upload_bytes: 3e8 },
        { hour: '2026-11-23T09:00:00Z', download_bytes: 2.4e9, upload_bytes: 5e8 },
      ],
      last_30d: [
        { date: '2026-11-22', download_bytes: 8e9, upload_bytes: 1e9 },
        { date: '2026-11-23', download_bytes: 3.6e9, upload_bytes: 8e8 },
      ],
      sessions: [
        {
          session_id: 'a1',
          started_at: '2026-11-23T08:00:00Z',
          stopped_at: null,
          online: true,
          duration_seconds: 3600,
          download_bytes: 3.6e9,
          upload_bytes: 8e8,
          avg_download_bps: 8e6,
          avg_upload_bps: 1.7e6,
          ip_address: '10.1.0.2',
          nas_ip: '10.0.0.1',
          terminate_cause: null,
        },
      ],
    };
    await page.route('**/api/subscribers/*/bandwidth', (route) =>
      route.fulfill(
        bandwidthUp
          ? { json: { success: true, data: bandwidth } }
          : { status: 503, json: { success: false, message: 'service unavailable' } },
      ),
    );
    await page.getByRole('button', { name: 'Create subscriber' }).click();
    await page.getByRole('heading', { name: 'ali@north' }).waitFor();
    await page.getByText('The service is unavailable right now. Retry in a moment.').waitFor();
    bandwidthUp = true;
    await page.getByRole('button', { name: 'Retry' }).click();
    for (const chart of ['Last 24 hours', 'Last 30 days', 'Per session']) {
      await page
        .getByRole('img', { name: `${chart}: Download bytes, Upload bytes over time` })
        .locator('canvas')
        .waitFor();
    }
    await page.getByRole('cell', { name: 'a1' }).waitFor();
    await page.getByRole('cell', { name: '3.4 GB' }).waitFor();
    // Fields read as words, not API names; a plan without quotas reads as unlimited.
    const labels = await page.locator('dl.kv dt').allTextContents();
    expect(labels).toEqual(
      expect.arrayContaining([
        'Full name',
        'Expiry date',
        'IP address',
        'Last access server',
        'MAC address',
        'Used today',
        'FUP level',
      ]),
    );
    expect(labels.filter((label) => /_|^[a-z]/.test(label))).toEqual([]);
    await expect(page.locator('dt:text-is("Used today") + dd').textContent()).resolves.toBe('0 B of unlimited');
    await page.getByRole('columnheader', { name: 'Ended by' }).waitFor();
    // Buttons only for what the token may do: renew yes, delete and ping no.
    await expect(page.getByRole('button', { name: 'Renew' }).count()).resolves.toBe(1);
    await expect(page.getByRole('button', { name: 'Delete' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Ping' }).count()).resolves.toBe(0);

    // A 4xx reads as what went wrong, in the API's words.
    await page.getByRole('link', { name: 'Subscribers' }).click();
    await page.getByRole('link', { name: 'New subscriber' }).click();
    await page.getByLabel('Username').fill('ali@north');
    await page.getByLabel('Password').fill('other-pass');
    await page.getByLabel('Plan *').selectOption({ label: 'Home 20M (#1)' });
    await page.getByRole('button', { name: 'Create subscriber' }).click();
    // The API's `username already exists` (409) is said beside the field, in its label.
    await page.locator('.field-error', { hasText: 'Username already exists.' }).waitFor();
    await expect(page.getByLabel('Username').getAttribute('aria-invalid')).resolves.toBe('true');
    await page.goBack();
    await page.goBack();
    await page.getByRole('heading', { name: 'ali@north' }).waitFor();

    await dialogSubmit('Renew');
    const invoiceLink = page.getByRole('link', { name: /^INV-/ });
    await invoiceLink.waitFor();
    await page
      .getByRole('img', { name: /^Last 24 hours/ })
      .locator('canvas')
      .waitFor();
    await dialogSubmit('Add a rule', { 'Rate (kbit/s)': '2048' });
    await page.getByRole('cell', { name: '2048' }).waitFor();
    await axeScan(page, 'subscriber');

    await invoiceLink.click();
    await page.getByRole('heading', { name: /^Invoice INV-/ }).waitFor();
    await dialogSubmit('Record payment', { Amount: '5' });
    await page.getByText('partial', { exact: true }).waitFor();
    await page.getByRole('cell', { name: 'cash' }).waitFor();

    await page.getByRole('link', { name: 'ali@north', exact: true }).first().click();
    await page.getByRole('heading', { name: 'ali@north' }).waitFor();
    await dialogSubmit('Quick pay', { Amount: '15' });
    await page.getByText('Applied to 1 invoice(s)').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await page.getByRole('cell', { name: 'paid' }).waitFor();
    const [invoice] = (await t.db.execute(sql`select id, status, paid_amount, total from invoices`)).rows;
    expect(invoice).toMatchObject({ status: 'paid' });
    expect(Number(invoice.paid_amount)).toBe(Number(invoice.total));

    await invoiceLink.click();
    await page.getByRole('heading', { name: /^Invoice INV-/ }).waitFor();
    await page.getByRole('cell', { name: 'cash' }).nth(1).waitFor();
    await page.getByLabel('Paper').selectOption('Receipt80');
    const pdfResponse = page.waitForResponse((r) =>
      r.url().includes(`/api/invoices/${invoice.id}/pdf?paper=Receipt80`),
    );
    await page.getByRole('button', { name: 'Show PDF' }).click();
    const pdf = await pdfResponse;
    expect(pdf.status()).toBe(200);
    expect(pdf.headers()['content-type']).toBe('application/pdf');
    await page.locator('iframe.pdf').waitFor();
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download the PDF' }).click();
    const file = await (await download).path();
    expect(fs.readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-');
    await axeScan(page, 'invoice');

    await page.getByRole('link', { name: 'Invoices' }).click();
    await page.getByRole('heading', { name: 'Invoices' }).waitFor();
    await invoiceLink.waitFor();
    await axeScan(page, 'invoices');
  });

  it('runs a bulk action on 100 subscribers and shows the job until it is done', async () => {
    const token = await apiToken('north', 'north-pass-1');
    const names = Array.from({ length: 100 }, (_, i) => `bulk-${String(i).padStart(3, '0')}@north`);
    for (let i = 0; i < names.length; i += 10) {
      const created = await Promise.all(
        names.slice(i, i + 10).map((username) =>
          http(t.baseUrl, 'POST', '/api/subscribers', {
            token,
            body: { username, password: 'pppoe-pass', service_id: 1 },
          }),
        ),
      );
      expect(created.map((r) => r.status)).toEqual(Array(created.length).fill(201));
    }
    await page.goto(`${t.baseUrl}/#/subscribers?search=bulk-`);
    await page.getByRole('link', { name: 'bulk-099@north' }).waitFor();
    await axeScan(page, 'subscribers');
    await page.getByRole('button', { name: 'Select all 100 matching' }).click();
    await page.getByText('100 selected').waitFor();
    await page.getByLabel('Action', { exact: true }).selectOption({ label: 'Deactivate' });
    await page.getByRole('button', { name: 'Run deactivate on 100' }).click();
    // The console's own dialog asks (the browser's confirm() would be accepted by openConsole).
    const ask = page.getByRole('dialog', { name: 'Deactivate 100 subscribers?' });
    await ask.getByText('They are disconnected and refused.').waitFor();
    await ask.getByRole('button', { name: 'Yes, deactivate' }).click();
    await page.locator('.job-status', { hasText: 'done' }).waitFor({ timeout: 60_000 });
    // The job used the selection up: it is cleared, and the form with its "Run ... on 100" is gone.
    await page.getByText('0 selected').waitFor();
    await expect(page.getByRole('button', { name: 'Run deactivate on 100' }).count()).resolves.toBe(0);
    expect(await page.locator('.job p').first().textContent()).toMatch(
      /done,\s*100 of 100 processed, 100 succeeded, 0 failed/,
    );
    await axeScan(page, 'bulk');
    const { rows } = await t.db.execute(
      sql`select count(*)::int as n from subscribers where username like 'bulk-%' and status = 'inactive'`,
    );
    expect(rows[0].n).toBe(100);
    await signOut();
  });

  it('a viewer sees no write buttons and no write gets through', async () => {
    const admin = await apiToken('admin', ADMIN_PASSWORD);
    const viewer = await http(t.baseUrl, 'POST', '/api/managers', {
      token: admin,
      body: {
        username: 'viewer',
        password: 'viewer-pass-1',
        role: 'user',
        reseller_id: 1,
        permissions: ['subscribers.view'],
      },
    });
    expect(viewer.status).toBe(201);
    await signIn('viewer', 'viewer-pass-1');
    await page.evaluate('location.hash = "#/subscribers"');
    await page.getByRole('link', { name: 'bulk-099@north' }).waitFor();
    await expect(page.getByRole('link', { name: 'New subscriber' }).count()).resolves.toBe(0);
    await expect(page.locator('main input[type=checkbox]').count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: 'Resellers' }).count()).resolves.toBe(0);

    await page.getByRole('searchbox', { name: 'Search' }).fill('ali');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('link', { name: 'ali@north' }).click();
    await page.getByRole('heading', { name: 'ali@north' }).waitFor();
    await page.getByRole('heading', { name: 'Invoices' }).waitFor();
    await expect(page.getByRole('group', { name: 'Actions' }).getByRole('button').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Quick pay' }).count()).resolves.toBe(0);
    await expect(page.getByText('Edit the record').count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Add a rule' }).count()).resolves.toBe(0);
    await page.getByRole('cell', { name: '2048' }).waitFor();
    await axeScan(page, 'subscriber (viewer)');

    await page.getByRole('link', { name: /^INV-/ }).click();
    await page.getByRole('heading', { name: /^Invoice INV-/ }).waitFor();
    await expect(page.getByRole('group', { name: 'Invoice actions' }).getByRole('button').count()).resolves.toBe(0);

    const { rows: before } = await t.db.execute(
      sql`select expiry_date, status from subscribers where username = 'ali@north'`,
    );
    // The console's own token, used as any script in the page could: the API refuses every write.
    const token = String(await page.evaluate('sessionStorage.getItem("isp-billing.console.token")'));
    const statuses = await Promise.all([
      http(t.baseUrl, 'POST', '/api/subscribers/1/renew', { token, body: {} }),
      http(t.baseUrl, 'POST', '/api/subscribers/1/deactivate', { token, body: {} }),
      http(t.baseUrl, 'POST', '/api/invoices/quick-pay/1', { token, body: { amount: 5 } }),
      http(t.baseUrl, 'POST', '/api/subscribers', {
        token,
        body: { username: 'sneaky@north', password: 'x', service_id: 1 },
      }),
    ]).then((all) => all.map((r) => r.status));
    expect(statuses).toEqual([403, 403, 403, 403]);
    const { rows: after } = await t.db.execute(
      sql`select expiry_date, status from subscribers where username = 'ali@north'`,
    );
    expect(after).toEqual(before);

    await signOut();
    const revoked = await http(t.baseUrl, 'GET', '/api/subscribers', { token });
    expect(revoked.status).toBe(401);
  });

  it('lays the page out right to left and labels it in Arabic when the language is Arabic', async () => {
    const admin = await apiToken('admin', ADMIN_PASSWORD);
    expect((await http(t.baseUrl, 'PUT', '/api/settings', { token: admin, body: { language: 'ar' } })).status).toBe(
      200,
    );
    await signIn('north', 'north-pass-1', SIGN_IN.ar);
    await page.evaluate('location.hash = "#/subscribers"');
    await page.getByRole('link', { name: 'bulk-099@north' }).waitFor();
    await expect(page.locator('html').getAttribute('dir')).resolves.toBe('rtl');
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe('ar');
    await page.getByRole('heading', { name: 'المشتركون' }).waitFor();
    await axeScan(page, 'subscribers (rtl)');

    // The subscriber's fields in the documents' language (the invoice's labels say تاريخ الإصدار too).
    const {
      rows: [ali],
    } = await t.db.execute(sql`select id from subscribers where username = 'ali@north'`);
    await page.evaluate(`location.hash = "#/subscribers/${Number(ali.id)}"`);
    await page.getByRole('heading', { name: 'السجل' }).waitFor();
    const labels = await page.locator('dl.kv dt').allTextContents();
    expect(labels).toEqual(
      expect.arrayContaining(['الاسم الكامل', 'تاريخ الانتهاء', 'عنوان IP', 'آخر خادم وصول', 'المستخدم اليوم']),
    );
    await expect(page.locator('dt:text-is("المستخدم اليوم") + dd').textContent()).resolves.toBe('0 B من غير محدود');
    await page.getByRole('link', { name: /^INV-/ }).first().click();
    await page.getByRole('heading', { name: 'التفاصيل' }).waitFor();
    await expect(page.locator('dl.kv dt').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['تاريخ الإصدار', 'الرصيد المستحق']),
    );

    // A token revoked elsewhere (or expired) brings the sign-in page back with the reason.
    const token = String(await page.evaluate('sessionStorage.getItem("isp-billing.console.token")'));
    expect((await http(t.baseUrl, 'POST', '/api/auth/logout', { token, body: {} })).status).toBe(200);
    await page.getByRole('link', { name: 'الفواتير' }).click();
    await page.getByText('انتهت جلستك. يرجى تسجيل الدخول مرة أخرى.').waitFor();
    await page.getByRole('heading', { name: 'تسجيل الدخول' }).waitFor();
    expect(pageProblems).toEqual([]);
  });
});
