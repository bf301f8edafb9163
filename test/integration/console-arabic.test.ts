/**
 * Issue 39: no untranslated word ships. An admin signs in with the language set to Arabic and walks
 * every route of the console's PAGES list (read from app.js, so a page added later is walked
 * without editing this file), over real rows so tables, details and dialogs show. On each page,
 * every action dialog is opened too. Any word in Latin script in what a person sees or hears
 * (text, placeholders, labels, titles, options) fails the test, except what is data or a code:
 * the seeded rows' own values, `<code>` text, identifiers, currency codes, units and acronyms
 * (ALLOWED below).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { PAPER_NAMES } from '../../shared/paper';
import { saveSettings } from '../../shared/settings';
import { http, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, openConsole, SIGN_IN, signInOn, startConsoleApp } from '../helpers/console-browser';
import { consoleDir } from '../../services/gateway/console.service';

jest.setTimeout(240_000);

let t: TestApp;
let browser: Browser;
let adminApi: string;
const problems: string[] = [];
/** Values of the seeded rows (usernames, numbers, addresses): data, shown as typed. */
const data = new Set<string>();

/** Codes and units that are Latin in every language: they are not words to translate. */
const ALLOWED = new Set([
  ...['B', 'KB', 'MB', 'GB', 'TB', 'Mbit', 'ms', 'k', 'M', 'G'],
  ...['PDF', 'CSV', 'IP', 'IPv', 'CIDR', 'MAC', 'NAS', 'API', 'CoA', 'FUP', 'RADIUS', 'PPPoE', 'JSON', 'URL', 'QR'],
  ...['ID', 'TOTP', 'HMAC', 'SHA', 'HTTP', 'HTTPS', 'WhatsApp', 'Telegram', 'Stripe'],
  // Products and their tools, named as their makers name them.
  ...['MikroTik', 'RouterOS', 'FreeRADIUS', 'torch', 'Cisco', 'Juniper', 'Huawei', 'Nokia', 'Accel', 'PPP'],
  ...['MySQL', 'daloRADIUS', 'phpnuxbill', 'PNG', 'JPEG', 'GIF', 'WebP'],
  // An environment variable named in a hint.
  ...['IMPORT', 'DIR'],
  // The language picker names each language in itself.
  ...['English', 'en'],
  // Language codes of the language setting.
  ...['ar', 'fa', 'he', 'ur'],
]);
/** Paper sizes are the names printed on the paper's packet: removed whole, so `Letter` stays a word elsewhere. */
const PAPERS = new RegExp(`\\b(${PAPER_NAMES.join('|')})\\b`, 'g');

/** The console's routes as app.js lists them: `['/subscribers/:id', () => SubscriberPage, ...]`. */
function consoleRoutes(): string[] {
  const source = fs.readFileSync(path.join(consoleDir(), 'app.js'), 'utf8');
  const list = /const PAGES = \[([\s\S]*?)\n\];/.exec(source)?.[1] ?? '';
  return [...list.matchAll(/\[\s*'(\/[^']*)'/g)].map((m) => m[1]);
}

async function post(p: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await http(t.baseUrl, 'POST', p, { token: adminApi, body });
  if (res.status >= 300) throw new Error(`${p}: ${res.status} ${res.text}`);
  return res.body.data as Record<string, unknown>;
}

/** Every string of an API answer is data the console may show as it is. */
function remember(value: unknown): void {
  if (typeof value === 'string') data.add(value);
  else if (Array.isArray(value)) value.forEach(remember);
  else if (value && typeof value === 'object') Object.values(value).forEach(remember);
}

/** An id for a route's `:id`: the first row the API lists under the route's own path. */
async function idFor(route: string): Promise<string> {
  const base = route.replace(/\/:id.*$/, '');
  const res = await http(t.baseUrl, 'GET', `/api${base}?limit=1`, { token: adminApi });
  const rows = (res.body?.data ?? []) as { id: number }[];
  if (res.status !== 200 || !rows.length) throw new Error(`no row at GET /api${base} to open ${route}: seed one`);
  return String(rows[0].id);
}

beforeAll(async () => {
  ({ t, browser, adminApi } = await startConsoleApp());
  await saveSettings(t.db as never, { language: 'ar', allow_private_targets: true, operator_name: 'شبكة الشمال' });
  const reseller = await post('/api/resellers', { name: 'موزع الشمال', balance: 500, currency: 'USD' });
  const plan = await post('/api/services', {
    name: 'منزلي ٢٠',
    price: 25,
    duration_days: 30,
    currency: 'USD',
    rate_limit: '20M/20M',
    framed_ipv6_pool: 'wan6',
    delegated_ipv6_pool: 'pd6',
    vendor_attributes: { huawei: 'Huawei-Qos-Profile-Name := "gold"' },
  });
  await post(`/api/resellers/${reseller.id}/service-limits`, { service_id: plan.id, max_subscribers: 10 });
  const sub = await post('/api/subscribers', {
    username: 'layla@north',
    password: 'secret-1',
    full_name: 'ليلى حداد',
    phone: '+9647701234567',
    ipv6_prefix: '2001:db8:0:1::/64',
    delegated_ipv6_prefix: '2001:db8:a::/56',
    service_id: plan.id,
    reseller_id: reseller.id,
  });
  const invoice = await post('/api/invoices', {
    subscriber_id: sub.id,
    items: [{ description: 'اشتراك شهري', qty: 1, unit_price: 25 }],
  });
  await post(`/api/invoices/${invoice.id}/payment`, { amount: 10, method: 'cash' });
  await post('/api/nas', { name: 'edge-1', ip_address: '192.0.2.10', secret: 'radius-shared-secret' });
  await post('/api/managers', { username: 'desk1', password: 'long-enough-1', role: 'user', reseller_id: reseller.id });
  await post('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['invoice.paid'] });
  await post('/api/api-keys', { name: 'crm', permissions: ['subscribers.view'] });
  await post('/api/cards/batches', { count: 3, value: 5, prefix: 'AR' });
  for (const p of [
    '/api/resellers',
    '/api/services',
    '/api/subscribers',
    '/api/invoices',
    '/api/nas',
    '/api/managers',
    '/api/cards/batches',
    '/api/transactions',
  ]) {
    remember((await http(t.baseUrl, 'GET', p, { token: adminApi })).body);
  }
  remember((await http(t.baseUrl, 'GET', `/api/invoices/${invoice.id}`, { token: adminApi })).body);
  remember((await http(t.baseUrl, 'GET', `/api/subscribers/${sub.id}`, { token: adminApi })).body);
  remember((await http(t.baseUrl, 'GET', '/api/webhooks', { token: adminApi })).body);
  remember((await http(t.baseUrl, 'GET', '/api/api-keys', { token: adminApi })).body);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** What a person sees or hears in `scope` now: text, and the words of attributes read aloud. */
async function visibleWords(page: Page, scope: string): Promise<string[]> {
  // A script text: the tests are compiled without the DOM's types.
  const script = `(() => {
    const root = document.querySelector(${JSON.stringify(scope)});
    // <code> marks machine text (column names, action codes, JSON): not words to translate.
    let text = root.innerText;
    const codes = [...root.querySelectorAll('code')].map((c) => c.innerText).sort((a, b) => b.length - a.length);
    for (const code of codes) text = text.split(code).join(' ');
    const parts = [text];
    for (const el of root.querySelectorAll('[placeholder],[aria-label],[title],[alt]'))
      for (const a of ['placeholder', 'aria-label', 'title', 'alt']) if (el.getAttribute(a)) parts.push(el.getAttribute(a));
    for (const o of root.querySelectorAll('option')) parts.push(o.textContent);
    if (root === document.body) parts.push(document.title);
    return parts;
  })()`;
  return (await page.evaluate(script)) as string[];
}

/** The Latin-script words of `texts` that are neither data nor allowed codes. */
function latinWords(texts: string[]): string[] {
  const found = new Set<string>();
  for (const raw of texts) {
    let text = raw.replace(/[\u2066-\u2069\u200e\u200f]/g, '');
    // JSON snapshots of rows (the audit trail's before and after) are data.
    for (let before = ''; before !== text;) [before, text] = [text, text.replace(/\{[^{}]*\}/g, ' ')];
    // Identifiers before data, so a permission that is also a stored value is removed whole.
    text = text
      .replace(/https?:\/\/\S+/g, ' ')
      .replace(/\S+@\S+/g, ' ')
      .replace(/\b[a-z_-]+\.[a-z_.-]+\b/g, ' ') // permissions (subscribers.renew, subscribers.view_all)
      .replace(/\b[a-z]+(_[a-z]+)+\b/g, ' ') // setting names (allow_private_targets)
      .replace(/\b[a-z]+([A-Z][a-z]+)+\b/g, ' '); // stored column names (the audit trail's apiPort)
    // Data, longest first, so a username is removed whole.
    for (const value of [...data].sort((a, b) => b.length - a.length)) if (value) text = text.split(value).join(' ');
    text = text
      .replace(PAPERS, ' ')
      .replace(/\b[A-Z]{3}\b/g, ' ') // currency codes
      .replace(/\b[A-Z]+-[\w-]+\b/g, ' ') // invoice numbers, serials
      .replace(/\b[A-Z][a-z]+(-[A-Z][a-z]+)+\b/g, ' '); // RADIUS attribute names (Mikrotik-Rate-Limit)
    for (const word of text.match(/[A-Za-z][A-Za-z']*/g) ?? []) if (!ALLOWED.has(word)) found.add(word);
  }
  return [...found].sort();
}

async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.waitForFunction('!document.querySelector(\'[aria-busy="true"]\')');
}

it('every console page and its dialogs show no untranslated word in Arabic', async () => {
  const page = await openConsole(browser, t.baseUrl, problems);
  await signInOn(page, 'admin', ADMIN_PASSWORD, SIGN_IN.ar);
  const routes = consoleRoutes();
  expect(routes.length).toBeGreaterThanOrEqual(15);
  const findings: Record<string, string[]> = {};
  for (const route of routes) {
    const url = route.includes(':id') ? route.replace(':id', await idFor(route)) : route;
    await page.goto(`${t.baseUrl}/#${url}`);
    await settle(page);
    const words = latinWords(await visibleWords(page, 'body'));
    // Each action dialog, opened and closed again without running anything.
    const openers = page.locator('main span.action > button');
    for (let i = 0; i < (await openers.count()); i++) {
      await openers.nth(i).click();
      const dialog = page.locator('dialog[open]');
      await dialog.waitFor();
      await settle(page);
      // The dialog's own words: the page behind it was read above.
      const title = await dialog.locator('h2').innerText();
      words.push(...latinWords(await visibleWords(page, 'dialog[open]')).map((w) => `${w} (dialog ${title})`));
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    }
    if (words.length) findings[route] = [...new Set(words)];
  }
  expect(problems).toEqual([]);
  expect(findings).toEqual({});
});
