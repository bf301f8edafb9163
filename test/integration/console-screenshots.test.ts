/**
 * The README's pictures of the console, over an installation seeded as an operator's would be
 * (resellers with names, plans in IQD with a fair-use tier, forty subscribers, renewals, partial and
 * quick payments, a card batch, live sessions, an import's dry run), and the check that every
 * pictured page reads as a person would read it: names beside no bare ids ("Subscriber #12",
 * "reseller #3", "Plan 3"), no raw ISO timestamp, every amount in the one money format. With
 * `UPDATE_SCREENSHOTS=1` it writes docs/console/*.png (the only test that does).
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { repoRoot } from '../../shared/paths';
import { http, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, axeScan, openConsole, SIGN_IN, signInOn, startConsoleApp } from '../helpers/console-browser';

jest.setTimeout(300_000);

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(repoRoot(), 'docs', 'console') : null;
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'import', 'csv');

let t: TestApp;
let browser: Browser;
let page: Page;
let adminApi: string;
const pageProblems: string[] = [];
const ids = { subscriber: 0, invoice: 0, batch: 0 };

async function call<T = { id: number; total: number }>(method: string, url: string, body?: unknown): Promise<T> {
  const res = await http(t.baseUrl, method, url, { token: adminApi, body });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as T;
}

const PEOPLE = [
  ['ahmed.kareem', 'Ahmed Kareem'],
  ['zainab.ali', 'Zainab Ali'],
  ['mustafa.hassan', 'Mustafa Hassan'],
  ['noor.jaber', 'Noor Jaber'],
  ['hussein.abbas', 'Hussein Abbas'],
  ['maryam.saleh', 'Maryam Saleh'],
  ['ali.redha', 'Ali Redha'],
  ['fatima.naji', 'Fatima Naji'],
  ['omar.khalil', 'Omar Khalil'],
  ['sara.mahdi', 'Sara Mahdi'],
  ['yousif.tariq', 'Yousif Tariq'],
  ['huda.salman', 'Huda Salman'],
  ['karrar.adel', 'Karrar Adel'],
  ['rusul.hamid', 'Rusul Hamid'],
  ['haider.jawad', 'Haider Jawad'],
  ['aya.faris', 'Aya Faris'],
  ['mohammed.qasim', 'Mohammed Qasim'],
  ['duaa.sabah', 'Duaa Sabah'],
  ['abbas.nouri', 'Abbas Nouri'],
  ['shahad.raad', 'Shahad Raad'],
];

/**
 * The seed, through the API as an operator's setup would write it. Times are spread by the
 * database (radacct) where the API has no say; everything else is what the routes answered.
 */
async function seed(): Promise<void> {
  await call('PUT', '/api/settings', {
    currency: 'IQD',
    operator_name: 'Rafidain Net',
    operator_address: 'Karrada, Baghdad',
    operator_phone: '+9647701234567',
    how_to_pay: 'Pay at any Rafidain Net branch, or by Zain Cash to 0770 123 4567.',
    default_tax_rate: 5,
  });
  const plan = (name: string, price: number, extra: Record<string, unknown> = {}) =>
    call('POST', '/api/services', { name, price, duration_days: 30, currency: 'IQD', ...extra });
  const plans = [
    await plan('Home 10M', 25_000, { rate_limit: '10M/10M' }),
    await plan('Home 20M', 35_000, { rate_limit: '20M/20M' }),
    await plan('Gaming 30M', 45_000, { rate_limit: '30M/30M' }),
    await plan('Business 50M', 75_000, {
      rate_limit: '50M/50M',
      fup_tiers: [
        { level: 1, threshold_gb: 300, rate_limit: '20M/20M' },
        { level: 2, threshold_gb: 500, rate_limit: '8M/8M' },
      ],
    }),
  ];
  const central = await call('POST', '/api/resellers', {
    name: 'Baghdad Central',
    balance: 6_000_000,
    currency: 'IQD',
    commission_rate: 10,
  });
  const karrada = await call('POST', '/api/resellers', {
    name: 'Karrada Shop',
    parent_id: central.id,
    balance: 0,
    currency: 'IQD',
    commission_rate: 8,
  });
  const basra = await call('POST', '/api/resellers', {
    name: 'Basra South',
    balance: 1_500_000,
    currency: 'IQD',
    commission_rate: 10,
  });
  await call('POST', `/api/resellers/${karrada.id}/balance`, { amount: 2_500_000, notes: 'Cash deposit, branch' });
  for (const r of [central, karrada, basra])
    for (const p of plans) await call('POST', `/api/resellers/${r.id}/service-limits`, { service_id: p.id });
  await call('POST', '/api/nas', {
    name: 'tower-karrada',
    ip_address: '10.20.0.1',
    secret: 'radius-secret-1',
    type: 'mikrotik',
    description: 'Karrada tower, CCR2004',
  });
  await call('POST', '/api/nas', {
    name: 'tower-basra',
    ip_address: '10.30.0.1',
    secret: 'radius-secret-2',
    type: 'mikrotik',
    description: 'Basra south, CCR1036',
  });
  await call('POST', '/api/managers', {
    username: 'karrada.desk',
    password: 'desk-pass-123',
    role: 'reseller',
    reseller_id: karrada.id,
    permissions: ['subscribers.view', 'subscribers.create', 'subscribers.renew', 'invoices.pay'],
  });

  const resellers = [karrada, karrada, central, basra];
  const made: { id: number; username: string }[] = [];
  for (let i = 0; i < 40; i++) {
    const [user, name] = PEOPLE[i % PEOPLE.length];
    const area = ['karrada', 'mansour', 'basra', 'adhamiya'][i % 4];
    const username = i < PEOPLE.length ? `${user}@${area}` : `${user}${i}@${area}`;
    const sub = await call('POST', '/api/subscribers', {
      username,
      password: `pppoe-${1000 + i}`,
      full_name: name,
      phone: `0770${String(1234500 + i * 37).padStart(7, '0')}`,
      service_id: plans[i % plans.length].id,
      reseller_id: resellers[i % resellers.length].id,
      region: area.charAt(0).toUpperCase() + area.slice(1),
      auto_renew: i % 3 === 0,
    });
    made.push({ id: sub.id, username });
  }
  ids.subscriber = made[0].id;
  // Renewals write the invoices; payments in full, in part, by quick pay, and some left open.
  for (const [i, s] of made.slice(0, 24).entries()) {
    const renewed = await call<{ results?: unknown }>('POST', `/api/subscribers/${s.id}/renew`, {});
    expect(renewed).toBeTruthy();
    const [invoice] = await call<{ id: number; total: number }[]>('GET', `/api/invoices?subscriber_id=${s.id}`);
    if (i % 4 === 0)
      await call('POST', `/api/invoices/${invoice.id}/payment`, { amount: invoice.total, method: 'cash' });
    else if (i % 4 === 1)
      await call('POST', `/api/invoices/${invoice.id}/payment`, {
        amount: 10_000,
        method: 'card',
        notes: 'First half',
      });
    else if (i % 4 === 2) await call('POST', `/api/invoices/quick-pay/${s.id}`, { amount: 50_000, method: 'cash' });
  }
  const open = await call('POST', '/api/invoices', {
    subscriber_id: made[0].id,
    items: [
      { description: 'Router TP-Link Archer C6', qty: 1, unit_price: 45_000 },
      { description: 'Installation', qty: 1, unit_price: 15_000 },
    ],
    notes: 'Paid at the Karrada branch',
  });
  await call('POST', `/api/invoices/${open.id}/payment`, { amount: 30_000, method: 'cash' });
  ids.invoice = open.id;

  const made24 = await http(t.baseUrl, 'POST', '/api/cards/batches', {
    token: adminApi,
    body: { count: 24, value: 25_000, reseller_id: karrada.id, prefix: 'RAF', expires_at: '2027-06-30' },
  });
  expect(made24.status).toBe(201);
  ids.batch = made24.body.data.id;
  const pins = (made24.body.csv as string)
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[1]);
  const printed = await fetch(`${t.baseUrl}/api/cards/batches/${ids.batch}/pdf?from=1&to=12`, {
    headers: { authorization: `Bearer ${adminApi}` },
  });
  expect(printed.status).toBe(200);
  // Read to its end: an unread body keeps fetch's connection, and with it this jest worker, alive.
  expect(
    Buffer.from(await printed.arrayBuffer())
      .subarray(0, 5)
      .toString(),
  ).toBe('%PDF-');
  // Two cards redeemed by Karrada Shop's subscribers (i % 4 of 0 and 1), one suspended (reported lost).
  for (const [i, s] of made.slice(32, 34).entries())
    await call('POST', `/api/subscribers/${s.id}/redeem-card`, { pin: pins[i] });
  const cardsOf = await call<{ id: number }[]>('GET', `/api/cards/batches/${ids.batch}/cards?limit=25`);
  await call('POST', `/api/cards/${cardsOf[5].id}/suspend`, {});

  // Live sessions and yesterday's closed ones, as FreeRADIUS writes them.
  const online = made.slice(0, 12);
  for (const [i, s] of online.entries()) {
    const nas = i % 2 === 0 ? '10.20.0.1' : '10.30.0.1';
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, callingstationid,
          acctstarttime, acctupdatetime, acctstoptime, acctinputoctets, acctoutputoctets, acctterminatecause)
       values ($1, $1, $2, $3, $4, $5, now() - ($6 || ' minutes')::interval, now() - interval '1 minute', null, $7, $8, null),
              ($1 || '-old', $1 || '-old', $2, $3, $4, $5, now() - interval '30 hours', now() - interval '26 hours',
               now() - interval '26 hours', $7, $8, 'User-Request')`,
      [
        `s-${1000 + i}`,
        s.username,
        nas,
        `100.64.${i + 1}.${20 + i}`,
        `3C:84:6A:10:${String(10 + i).padStart(2, '0')}:7E`,
        String(15 + i * 23),
        String(150_000_000 + i * 31_000_000),
        String(2_400_000_000 + i * 410_000_000),
      ],
    );
  }
}

beforeAll(async () => {
  // Bulk actions answer 202 at once, so the picture shows a followed job.
  process.env.BULK_SYNC_SECONDS = '0';
  ({ t, browser, adminApi } = await startConsoleApp());
  await seed();
});

afterAll(async () => {
  delete process.env.BULK_SYNC_SECONDS;
  await browser?.close();
  await t?.close();
});

/** What a person should never read on these pages: an id where a name belongs, a raw timestamp. */
async function readsAsAPerson(name: string): Promise<void> {
  const text = await page.locator('body').innerText();
  expect({ name, ids: text.match(/\b(subscriber|manager|reseller|plan|server) #?\d+\b/gi) ?? [] }).toEqual({
    name,
    ids: [],
  });
  const bareLinks = (await page.locator('main a').allInnerTexts()).filter((l) => /^#\d+$/.test(l.trim()));
  expect({ name, bareLinks }).toEqual({ name, bareLinks: [] });
  expect({ name, raw: text.match(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/g) ?? [] }).toEqual({ name, raw: [] });
  // Money: IQD always with its three ISO digits and thousands separators.
  const amounts = text.match(/[\d,.]+\s?IQD/g) ?? [];
  for (const a of amounts)
    expect({ name, a }).toEqual({ name, a: expect.stringMatching(/^\d{1,3}(,\d{3})*\.\d{3}\sIQD$/) });
}

async function shot(name: string, fullPage = false): Promise<void> {
  await readsAsAPerson(name);
  await axeScan(page, name);
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

async function go(hash: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${t.baseUrl}/${hash}`);
  await page.getByRole('heading', { name: heading }).first().waitFor();
}

it('pictures every page the README shows, each reading names and the one format', async () => {
  page = await openConsole(browser, t.baseUrl, pageProblems);
  await page.getByLabel('Username').waitFor();
  if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'sign-in.png') });
  await signInOn(page, 'admin', ADMIN_PASSWORD);
  await page.getByText('Rafidain Net').first().waitFor();

  await go('#/dashboard', 'Dashboard');
  await page.locator('figure.chart canvas').nth(2).waitFor();
  await shot('dashboard', true);

  await go('#/subscribers', 'Subscribers');
  await page.getByRole('link', { name: 'ahmed.kareem@karrada' }).waitFor();
  await shot('subscribers');

  // Four not yet renewed and one renewed today, which fails and is named in the outcome.
  const picked = [
    'shahad.raad39@adhamiya',
    'abbas.nouri38@basra',
    'duaa.sabah37@mansour',
    'mohammed.qasim36@karrada',
    'zainab.ali@mansour',
  ];
  for (const username of picked) await page.getByRole('checkbox', { name: `Select ${username}` }).check();
  await page.locator('#bulk-action').selectOption('renew');
  await page
    .locator('.bulk .warning')
    .getByText(/tax included/)
    .waitFor();
  await page.getByRole('button', { name: 'Run renew on 5' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Yes, renew' }).click();
  await page.locator('.job-status', { hasText: 'done' }).waitFor({ timeout: 60_000 });
  await page
    .locator('.bulk')
    .getByText(/4 succeeded, 1 failed/)
    .waitFor();
  await page.locator('.bulk').getByRole('link', { name: 'zainab.ali@mansour' }).waitFor();
  await shot('bulk');

  await go(`#/subscribers/${ids.subscriber}`, 'ahmed.kareem@karrada');
  await page.getByText('tower-karrada').first().waitFor();
  await shot('subscriber', true);

  await go(`#/invoices/${ids.invoice}`, /^Invoice INV-/);
  await page.getByLabel('Paper').selectOption('A5');
  await page.getByRole('button', { name: 'Show PDF' }).click();
  await page.locator('iframe.pdf').waitFor();
  await shot('invoice');

  await go('#/invoices', 'Invoices');
  await page.getByRole('link', { name: 'ahmed.kareem@karrada' }).first().waitFor();
  await shot('invoices');

  await go('#/resellers', 'Resellers');
  await page.getByText('Karrada Shop').first().waitFor();
  await shot('resellers', true);

  await go('#/plans', 'Plans');
  await page.getByText('Tier 1: 20M/20M after 300 GB').waitFor();
  await shot('plans');
  await page.getByRole('row').filter({ hasText: 'Business 50M' }).getByRole('button', { name: 'Edit' }).click();
  await page.getByRole('dialog').getByLabel('Tier 2: after GB this month').waitFor();
  await shot('plans-tiers');
  await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

  await go(`#/cards/batches/${ids.batch}`, /^Card batch/);
  await page.getByText('Karrada Shop').first().waitFor();
  // A used card names its subscriber (the API's used_by_username).
  await page.getByRole('link', { name: 'karrar.adel32@karrada' }).waitFor();
  await shot('card-batch');

  await go('#/imports', 'Imports');
  await page.getByLabel('subscribers.csv').setInputFiles(path.join(FIXTURES, 'subscribers.csv'));
  await page.getByLabel('history.csv').setInputFiles(path.join(FIXTURES, 'history.csv'));
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  await page.locator('.job-status', { hasText: 'done' }).waitFor({ timeout: 60_000 });
  await page.getByText('The totals reconcile to the cent.').waitFor();
  await shot('import-report', true);

  await go('#/reports', 'Reports');
  await page.getByRole('cell', { name: 'Cash', exact: true }).first().waitFor();
  await page.getByRole('cell', { name: /471,000\.000\sIQD/ }).waitFor();
  await shot('reports', true);

  await go('#/ledger', 'Ledger');
  await page
    .getByRole('cell', { name: /renewal/i })
    .first()
    .waitFor();
  await shot('ledger');

  await go('#/sessions', 'Live sessions');
  await page.getByRole('cell', { name: 'tower-basra' }).first().waitFor();
  await shot('sessions');

  await go('#/managers', 'Managers');
  await page.getByRole('cell', { name: 'karrada.desk', exact: true }).waitFor();
  await shot('managers');

  await go('#/nas', 'Access servers');
  await page.getByRole('cell', { name: 'tower-basra', exact: true }).waitFor();
  await shot('nas');

  await go('#/settings', 'Settings');
  await page.getByRole('heading', { name: 'Billing and tax' }).waitFor();
  await shot('settings', true);

  await call('PUT', '/api/settings', { language: 'ar' });
  await page.context().close();
  page = await openConsole(browser, t.baseUrl, pageProblems);
  await signInOn(page, 'karrada.desk', 'desk-pass-123', SIGN_IN.ar);
  await page.evaluate('location.hash = "#/subscribers"');
  await page.getByRole('heading', { name: 'المشتركون' }).waitFor();
  await page.getByRole('link', { name: 'ahmed.kareem@karrada' }).waitFor();
  // The header names the desk user's reseller, not its number.
  await page.locator('.who').getByText('Karrada Shop').waitFor();
  await shot('subscribers-rtl');
  // The bulk panel speaks Arabic too: no Latin word in it but the currency code.
  await page.getByRole('checkbox', { name: 'تحديد ahmed.kareem@karrada' }).check();
  await page.getByRole('heading', { name: 'إجراء جماعي على 1 مشترك' }).waitFor();
  await page.locator('#bulk-action').selectOption('renew');
  await page.locator('.bulk .warning').getByText('26,250.000', { exact: false }).waitFor();
  const latin = ((await page.locator('.bulk').innerText()).match(/[A-Za-z]{2,}/g) ?? []).filter((w) => w !== 'IQD');
  expect(latin).toEqual([]);

  expect(pageProblems).toEqual([]);
});
