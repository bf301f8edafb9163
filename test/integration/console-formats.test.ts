/**
 * Issue 39: one money format and one date format. The same invoice's amount and due date read the
 * same in the console (Chromium), in its PDF (poppler's pdftotext), on its public receipt page and
 * in the chat caption sent with it; and the console's formatter (console/format.js) agrees with
 * the server's (shared/format.ts) for every ISO 4217 currency.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { EXPONENT_EXCEPTIONS, isCurrency } from '../../shared/money';
import { formatDate, formatMoney } from '../../shared/format';
import { saveSettings } from '../../shared/settings';
import { http as call, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';
import { fetchPdf, pdfText } from './documents-fixtures';

jest.setTimeout(180_000);

let t: TestApp;
let browser: Browser;
let adminApi: string;
let invoice: { id: number; invoice_number: string };
let telegram: http.Server;
const captions: string[] = [];

/** Isolates and no-break spaces are layout, not words: compare the words. */
const plain = (text: string) => text.replace(/[\u2066-\u2069]/g, '').replace(/\s+/g, ' ');

const DUE = '2027-01-15';
const MONEY = formatMoney(5_833_333, 'IQD');
const DAY = formatDate(DUE, 'en');

beforeAll(async () => {
  ({ t, browser, adminApi } = await startConsoleApp());
  // A Telegram Bot API stand-in that keeps each document's caption.
  telegram = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('latin1');
      const caption = /name="caption"\r\n\r\n([\s\S]*?)\r\n--/.exec(body)?.[1];
      if (caption !== undefined) captions.push(Buffer.from(caption, 'latin1').toString('utf8'));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true, result: { message_id: captions.length } }));
    });
  });
  await new Promise<void>((r) => telegram.listen(0, '127.0.0.1', r));
  await saveSettings(t.db as never, {
    currency: 'IQD',
    messaging_provider: 'telegram',
    telegram_bot_token: '123:abc',
    telegram_base_url: `http://127.0.0.1:${(telegram.address() as AddressInfo).port}`,
    allow_private_targets: true,
  });
  const post = async (p: string, body: Record<string, unknown>) => {
    const res = await call(t.baseUrl, 'POST', p, { token: adminApi, body });
    expect(res.status).toBeLessThan(300);
    return res.body.data;
  };
  const reseller = await post('/api/resellers', { name: 'North', balance: 1000000, currency: 'IQD' });
  const plan = await post('/api/services', { name: 'Home', price: 25000, duration_days: 30, currency: 'IQD' });
  await post(`/api/resellers/${reseller.id}/service-limits`, { service_id: plan.id });
  const sub = await post('/api/subscribers', {
    username: 'fmt@north',
    password: 'secret-1',
    service_id: plan.id,
    reseller_id: reseller.id,
    phone: '5550001',
  });
  invoice = await post('/api/invoices', {
    subscriber_id: sub.id,
    items: [{ description: 'Prorated plan change', qty: 1, unit_price: 5833.333 }],
    tax_rate: 0,
    due_date: DUE,
  });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await new Promise((r) => telegram?.close(r));
});

it('the console, the PDF, the receipt page and the chat caption print the same amount and date', async () => {
  expect(MONEY).toBe('5,833.333 IQD');
  expect(DAY).toBe('Jan 15, 2027');

  const page = await openConsole(browser, t.baseUrl, []);
  await signInOn(page, 'admin', ADMIN_PASSWORD);
  await page.goto(`${t.baseUrl}/#/invoices/${invoice.id}`);
  const details = page.locator('dl.kv');
  await details.waitFor();
  const consoleText = plain(await details.innerText());
  expect(consoleText).toContain(MONEY);
  expect(consoleText).toContain(DAY);
  // In the list, the due date is one unbroken piece of text.
  await page.goto(`${t.baseUrl}/#/invoices`);
  const due = page.getByRole('cell', { name: DAY });
  await due.waitFor();
  expect(await due.innerText()).toMatch(/^\u2068Jan\u00a015,\u00a02027\u2069$/);

  const pdf = await fetchPdf(`${t.baseUrl}/api/invoices/${invoice.id}/pdf`, adminApi);
  const text = plain(await pdfText(pdf.body));
  expect(text).toContain(MONEY);
  expect(text).toContain(DAY);

  const link = await call(t.baseUrl, 'POST', `/api/invoices/${invoice.id}/public-token`, { token: adminApi, body: {} });
  const receipt = await fetch(link.body.data.public_url.replace('http://billing.test', t.baseUrl));
  const html = await receipt.text();
  expect(html).toContain(`<bdi dir="ltr">${MONEY}</bdi>`);
  expect(html).toContain(`<bdi class="date">${DAY}</bdi>`);

  const sent = await call(t.baseUrl, 'POST', `/api/invoices/${invoice.id}/send-chat`, { token: adminApi, body: {} });
  expect(sent.status).toBe(200);
  expect(captions).toEqual([`Your ISP: Invoice ${invoice.invoice_number}, Balance due ${MONEY}`]);
});

it("the console's formatter agrees with the server's for every currency and sign", async () => {
  const page = await openConsole(browser, t.baseUrl, []);
  const codes = ['USD', 'EUR', 'GBP', ...Object.keys(EXPONENT_EXCEPTIONS)].filter(isCurrency);
  const amounts = [0, 1, -1, 5_833_333, 123_456_789, -25_000_000];
  const cases = codes.flatMap((c) => amounts.map((minor) => ({ c, minor, exp: EXPONENT_EXCEPTIONS[c] ?? 2 })));
  const shown = (await page.evaluate(
    `import('/console/format.js').then((f) => ${JSON.stringify(cases)}.map(({ c, minor, exp }) => f.moneyText(minor / 10 ** exp, c)))`,
  )) as string[];
  expect(shown).toEqual(cases.map(({ c, minor }) => formatMoney(minor, c)));
});
