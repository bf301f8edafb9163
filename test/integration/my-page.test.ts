/**
 * The subscriber's page at /my (issue 40, docs/self-care.md) in a real Chromium on a phone-sized
 * screen: a subscriber blocked for an overdue invoice signs in, reads its usage, pays the invoice
 * through the Stripe double and is back online, redeems a card, changes plan after reading the
 * quote, changes its password and its live session is disconnected at the NAS simulator. Also the
 * page's headers (CSP, manifest), the one-time code sign-in, what the page keeps (the token only),
 * and the page in Arabic (right to left, no untranslated word). `UPDATE_SCREENSHOTS=1` refreshes
 * the pictures in docs/self-care/.
 */
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { dailyUsage, onlineCheckouts, radacct, subscribers } from '../../shared/db/schema';
import { repoRoot } from '../../shared/paths';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { axeScan, launchChromium } from '../helpers/console-browser';
import { NasSimulator } from '../sim/nas-simulator';
import { StripeDouble } from '../sim/stripe-double';
import { ChatDouble } from './self-care-fixtures';

jest.setTimeout(300_000);

const SHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(repoRoot(), 'docs', 'self-care') : null;
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 1 };
const STRIPE_KEY = 'sk_test_my_page';
const WEBHOOK_SECRET = 'whsec_my_page';
const NAS_SECRET = 'nas-secret-my';
const GB = 1024 ** 3;
const admin = adminToken();

let t: TestApp;
let api: ReturnType<typeof client>;
let browser: Browser;
let stripe: StripeDouble;
let nasSim: NasSimulator;
let chat: ChatDouble;
let plan: number;
let fast: number;
let reseller: number;
const problems: string[] = [];
let seq = 0;

const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const row = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];

async function ok<T = Record<string, unknown>>(p: Promise<{ status: number; body: T; text: string }>, status = 200) {
  const res = await p;
  if (res.status !== status) throw new Error(`${res.status} ${res.text}`);
  return res.body as T & { data: Record<string, unknown> & { id: number } };
}

async function mkSub(extra: Record<string, unknown> = {}) {
  seq += 1;
  const password = `pppoe-secret-${seq}`;
  const res = await ok(
    api.post(
      '/api/subscribers',
      { username: `phone${seq}`, password, service_id: plan, reseller_id: reseller, ...extra },
      { token: admin },
    ),
    201,
  );
  return { id: res.data.id, username: res.data.username as string, password };
}

beforeAll(async () => {
  stripe = new StripeDouble(STRIPE_KEY);
  await stripe.start();
  nasSim = await new NasSimulator({ secret: NAS_SECRET }).start();
  chat = new ChatDouble();
  const chatUrl = await chat.start();
  t = await startTestApp();
  api = client(t.baseUrl);
  browser = await launchChromium();
  await ok(
    api.put(
      '/api/settings',
      {
        operator_name: 'Fibre Co',
        operator_phone: '+1 555 0100',
        operator_email: 'help@fibre.example',
        how_to_pay: 'Pay online here, or cash at the shop on Main Street.',
        payment_provider: 'stripe',
        stripe_secret_key: STRIPE_KEY,
        stripe_webhook_secret: WEBHOOK_SECRET,
        stripe_api_base_url: stripe.baseUrl,
        messaging_provider: 'telegram',
        telegram_bot_token: '123:abc',
        telegram_base_url: chatUrl,
        allow_private_targets: true,
        suspend_overdue_after_days: 2,
        self_care_data_topups: [{ gb: 5, price: 3 }],
      },
      { token: admin },
    ),
  );
  reseller = (
    await ok(api.post('/api/resellers', { name: 'north', balance: 1000, currency: 'USD' }, { token: admin }), 201)
  ).data.id;
  const mkPlan = async (body: Record<string, unknown>) => {
    const id = (
      await ok(api.post('/api/services', { duration_days: 30, currency: 'USD', ...body }, { token: admin }), 201)
    ).data.id;
    await ok(
      api.post(
        `/api/resellers/${reseller}/service-limits`,
        { service_id: id, max_subscribers: null },
        { token: admin },
      ),
    );
    return id;
  };
  plan = await mkPlan({ name: 'Home 20', price: 10, monthly_quota_gb: 100, daily_quota_gb: 10, rate_limit: '20M/20M' });
  fast = await mkPlan({
    name: 'Fibre 100',
    price: 20,
    monthly_quota_gb: 400,
    rate_limit: '100M/100M',
    self_service: true,
  });
  await ok(
    api.post(
      '/api/nas',
      { name: 'edge-1', ip_address: '127.0.0.1', secret: NAS_SECRET, coa_port: nasSim.port },
      { token: admin },
    ),
    201,
  );
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await stripe?.stop();
  await nasSim?.stop();
  await chat?.stop();
});

async function phone(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext(PHONE);
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|SyntaxError|TypeError|ReferenceError/.test(msg.text()))
      problems.push(msg.text());
  });
  return { context, page };
}

async function shot(page: Page, name: string, fullPage = true): Promise<void> {
  if (!SHOTS) return;
  // The passing status line would cover the picture.
  await page.evaluate("document.querySelector('.status-line')?.style.setProperty('display', 'none')");
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
  await page.evaluate("document.querySelector('.status-line')?.style.removeProperty('display')");
}

/** Everything the page keeps in the browser: its HTML, sessionStorage and localStorage. */
async function kept(
  page: Page,
): Promise<{ html: string; session: Record<string, string>; local: Record<string, string> }> {
  const storage = (await page.evaluate('({ session: { ...sessionStorage }, local: { ...localStorage } })')) as {
    session: Record<string, string>;
    local: Record<string, string>;
  };
  return { html: await page.content(), ...storage };
}

async function signIn(
  page: Page,
  username: string,
  password: string,
  words = { u: 'Username', p: 'Password', go: 'Sign in' },
) {
  await page.getByLabel(words.u).fill(username);
  await page.getByLabel(words.p, { exact: false }).first().fill(password);
  await page.getByRole('button', { name: words.go, exact: true }).click();
}

describe('the page and its files', () => {
  it('is served with a strict CSP and no inline script but the import map; the manifest and icons with their types', async () => {
    const res = await fetch(`${t.baseUrl}/my`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
    expect(csp).toContain("manifest-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((s) => s[1].trim())).toEqual([
      'type="importmap"',
      expect.stringMatching(/^type="module" src="\/my\/app\.js\?v=\w+"$/),
    ]);
    expect(html).toMatch(/<link rel="manifest" href="\/my\/manifest\.webmanifest\?lang=en">/);
    // The console's modules, not copies of them: the import map points at /console/.
    const map = JSON.parse(scripts[0][2]) as { imports: Record<string, string> };
    expect(map.imports.preact).toMatch(/^\/console\/preact\.mjs\?v=/);
    expect(map.imports['/console/ui.js']).toMatch(/^\/console\/ui\.js\?v=/);
    expect(map.imports['/my/api.js']).toMatch(/^\/my\/api\.js\?v=/);

    const manifest = await fetch(`${t.baseUrl}/my/manifest.webmanifest`);
    expect(manifest.status).toBe(200);
    expect(manifest.headers.get('content-type')).toBe('application/manifest+json; charset=utf-8');
    const m = (await manifest.json()) as Record<string, unknown> & {
      icons: { src: string; sizes: string; type: string }[];
    };
    expect(m).toMatchObject({
      name: 'Fibre Co',
      start_url: '/my',
      scope: '/my',
      display: 'standalone',
      lang: 'en',
      dir: 'ltr',
    });
    expect(m.icons.map((i) => i.sizes)).toEqual(['192x192', '512x512', '512x512']);
    for (const icon of m.icons) {
      const png = await fetch(`${t.baseUrl}${icon.src}`);
      expect(png.status).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
      expect((await png.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
    const arabic = (await (await fetch(`${t.baseUrl}/my/manifest.webmanifest?lang=ar`)).json()) as Record<
      string,
      unknown
    >;
    expect(arabic).toMatchObject({ lang: 'ar', dir: 'rtl' });
    expect((await fetch(`${t.baseUrl}/my/nothing.js`)).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/my/..%2Fconsole.service.ts`)).status).toBe(400);
    expect((await fetch(`${t.baseUrl}/my?lang=english`)).status).toBe(400);
  });
});

describe('a subscriber on a phone', () => {
  it('signs in, reads usage, pays the overdue invoice online and is restored, redeems a card, changes plan and password', async () => {
    const me = await mkSub({ full_name: 'Sara Haddad', phone: '5550101' });
    await t.db
      .update(subscribers)
      .set({ expiryDate: daysFromToday(15) })
      .where(eq(subscribers.id, me.id));
    await t.db.insert(dailyUsage).values(
      Array.from({ length: 30 }, (_, i) => ({
        subscriberId: me.id,
        date: daysFromToday(i - 29),
        downloadBytes: Math.round((0.6 + ((i * 7) % 10) / 6) * GB),
        uploadBytes: Math.round(0.15 * GB),
      })),
    );
    await t.db.insert(radacct).values([
      {
        acctsessionid: 'old-1',
        acctuniqueid: 'my-old-1',
        username: me.username,
        nasipaddress: '127.0.0.1',
        acctstarttime: new Date(Date.now() - 2 * 86_400_000),
        acctstoptime: new Date(Date.now() - 1.5 * 86_400_000),
        framedipaddress: '100.64.7.9',
        acctinputoctets: 300_000_000,
        acctoutputoctets: 2_500_000_000,
        acctterminatecause: 'User-Request',
      },
      {
        acctsessionid: 'live-1',
        acctuniqueid: 'my-live-1',
        username: me.username,
        nasipaddress: '127.0.0.1',
        acctstarttime: new Date(Date.now() - 3_600_000),
        // Heard of just now, as a live session is: one silent for 2 interims + 1 minute is stale, and
        // the usage run (every 30 s) closes it; on a loaded machine the test takes longer than that.
        acctupdatetime: new Date(),
        framedipaddress: '100.64.7.10',
        callingstationid: 'AA:BB:CC:00:11:22',
      },
    ]);
    // After the sessions, whose accounting counts into the quotas.
    await t.db
      .update(subscribers)
      .set({ dailyQuotaUsed: 3 * GB, monthlyQuotaUsed: 42 * GB })
      .where(eq(subscribers.id, me.id));
    // An invoice ten days overdue: the overdue grace (2 days) blocks access.
    const inv = (
      await ok(
        api.post(
          '/api/invoices',
          { subscriber_id: me.id, items: [{ description: 'Router', qty: 1, unit_price: 25 }] },
          { token: admin },
        ),
        201,
      )
    ).data;
    await t.pool.query('update invoices set issue_date = $2, due_date = $2 where id = $1', [
      inv.id,
      daysFromToday(-10),
    ]);
    await ok(api.put(`/api/subscribers/${me.id}`, { full_name: 'Sara Haddad' }, { token: admin }));
    expect((await row(me.id)).blockedReason).toBe('overdue');
    const batch = await ok(api.post('/api/cards/batches', { count: 1, value: 7 }, { token: admin }), 201);
    const pin = (batch as unknown as { csv: string }).csv.trim().split('\n')[1].split(',')[1];

    const { context, page } = await phone();
    await page.goto(`${t.baseUrl}/my`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot(page, 'sign-in', false);
    await axeScan(page, 'sign-in');
    // A wrong password is refused in words, and nothing is kept.
    await signIn(page, me.username, 'not-the-password');
    await page.getByText('invalid username or password').waitFor();
    await signIn(page, me.username, me.password);

    // Account: blocked for the overdue invoice, the operator's contact and how to pay.
    const main = page.locator('main');
    await main.getByText('Blocked: invoice overdue').waitFor();
    await main.getByText('Home 20').waitFor();
    expect(await main.locator('dd.big').innerText()).toContain('15');
    await main.getByText('Pay online here, or cash at the shop on Main Street.').waitFor();
    expect(await main.locator('a[href^="tel:"]').getAttribute('href')).toBe('tel:+15550100');
    await shot(page, 'account');
    await axeScan(page, 'account');

    // Usage: quotas, the chart, the live session and the last one.
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await main.getByText(/3\.0 GB\W+of\W+10\.0 GB/).waitFor();
    await main.getByText(/42\.0 GB\W+of\W+100\.0 GB/).waitFor();
    await main.locator('.chart canvas').first().waitFor();
    await main.getByText('100.64.7.10').waitFor();
    await main.getByText('AA:BB:CC:00:11:22').waitFor();
    await main.getByText(/Download\W+2\.3 GB\W+upload\W+286\.1 MB/).waitFor();
    await shot(page, 'usage');
    await axeScan(page, 'usage');

    // Invoices: the overdue one, paid online through the provider's checkout.
    await page.getByRole('link', { name: 'Invoices', exact: true }).click();
    await main.getByText('overdue', { exact: true }).waitFor();
    await main.locator('ul.invoices a').first().click();
    const payButton = main.getByRole('button', { name: /^Pay\W+25\.00\sUSD\W+online$/ });
    await payButton.waitFor();
    await shot(page, 'invoice');
    await page.route(`${stripe.baseUrl}/pay/**`, (route) =>
      route.fulfill({
        status: 200,
        contentType: 'text/html',
        body: '<!doctype html><title>Checkout</title><h1>Stripe double checkout</h1>',
      }),
    );
    await payButton.click();
    await page.waitForURL(`${stripe.baseUrl}/pay/**`);
    const [checkout] = await t.db.select().from(onlineCheckouts).where(eq(onlineCheckouts.invoiceId, inv.id));
    expect(checkout).toMatchObject({ purpose: 'invoice', amount: 2500, subscriberId: me.id });
    const paid = await StripeDouble.deliver(
      `${t.baseUrl}/api/payments/webhook/stripe`,
      stripe.complete(checkout.providerSessionId!),
      WEBHOOK_SECRET,
    );
    expect(paid.status).toBe(200);
    // The provider sends the payer back; the payer comes back to the page, still signed in.
    // (PUBLIC_BASE_URL of the test app is not this server's address: the path is.)
    const back = new URL(stripe.sessions.get(checkout.providerSessionId!)!.success_url).pathname;
    await page.goto(`${t.baseUrl}${back}`);
    await page.locator('#status[data-status="paid"]').waitFor();
    await page.goto(`${t.baseUrl}/my#/`);
    await main.getByText('Working', { exact: true }).waitFor();
    expect((await row(me.id)).blockedReason).toBeNull();
    await page.goto(`${t.baseUrl}/my#/invoices/${inv.id}`);
    await main.getByText('paid', { exact: true }).waitFor();
    expect(await main.getByRole('button', { name: /online/ }).count()).toBe(0);

    // A recharge card credits the wallet.
    await page.getByRole('link', { name: 'Recharge card', exact: true }).click();
    await page.getByLabel('Card PIN').fill(pin);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await main.getByText(/Card redeemed\. Your wallet: \W*7\.00\sUSD/).waitFor();
    expect((await row(me.id)).walletBalance).toBe(700);
    expect((await kept(page)).html).not.toContain(pin);

    // A plan change: the prorated quote first, then the move.
    await page.getByRole('link', { name: 'Change plan', exact: true }).click();
    await main.getByRole('button', { name: 'See the price' }).click();
    const quote = await ok(
      api.get(`/api/subscribers/${me.id}/calculate-change-service-price?service_id=${fast}`, { token: admin }),
    );
    await main.getByText('You pay now').waitFor();
    expect(await main.locator('.quote dd.big').innerText()).toMatch(
      new RegExp(`^\\W*${(quote.data.net_amount_due as number).toFixed(2).replace('.', '\\.')}\\sUSD\\W*$`),
    );
    await shot(page, 'change-plan');
    await main.getByRole('button', { name: 'Confirm the change' }).click();
    await main
      .getByText(/Your plan is now Fibre 100/)
      .first()
      .waitFor();
    expect((await row(me.id)).serviceId).toBe(fast);

    // The password: the live session is disconnected at the NAS, the page goes on with its new token.
    const tokenBefore = (await kept(page)).session['isp-billing.my.token'];
    const disconnectsBefore = nasSim.requests.filter(
      (r) => r.code === 'Disconnect-Request' && r.userName === me.username,
    ).length;
    await page.getByRole('link', { name: 'Password', exact: true }).click();
    await page.getByLabel('Current password').fill(me.password);
    await page.getByLabel('New password', { exact: false }).first().fill('brand-new-pass-1');
    await page.getByLabel('New password again').fill('brand-new-pass-1');
    await page.getByRole('button', { name: 'Change the password' }).click();
    await main.getByText(/Password changed\. Your connection was restarted/).waitFor();
    await shot(page, 'password');
    const disconnects = nasSim.requests.filter((r) => r.code === 'Disconnect-Request' && r.userName === me.username);
    expect(disconnects.length).toBe(disconnectsBefore + 1);
    expect(disconnects.at(-1)).toMatchObject({ acctSessionId: 'live-1', framedIp: '100.64.7.10' });
    const after = await kept(page);
    const tokenAfter = after.session['isp-billing.my.token'];
    expect(tokenAfter).not.toBe(tokenBefore);
    expect((await api.get('/api/my/account', { token: tokenBefore })).status).toBe(401);

    // Nothing secret is kept: the token alone, never a password, the PIN or a code.
    expect(Object.keys(after.session)).toEqual(['isp-billing.my.token']);
    expect(Object.keys(after.local)).toEqual([]);
    for (const secret of [me.password, 'brand-new-pass-1', pin])
      for (const place of [after.html, JSON.stringify(after.session), JSON.stringify(after.local)])
        expect(place).not.toContain(secret);

    // A reload keeps the session (the new token works); signing out ends it.
    await page.goto(`${t.baseUrl}/my#/`);
    await page.reload();
    await main.getByText('Fibre 100').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').first().waitFor();
    expect((await kept(page)).session).toEqual({});
    expect((await api.get('/api/my/account', { token: tokenAfter })).status).toBe(401);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('signs in with a one-time code when the operator turns it on; the code is never kept', async () => {
    await ok(api.put('/api/settings', { self_care_code_sign_in: true }, { token: admin }));
    const me = await mkSub({ phone: '5550202' });
    const { context, page } = await phone();
    await page.goto(`${t.baseUrl}/my`);
    await page.getByRole('button', { name: 'Sign in with a code sent to my phone' }).click();
    await page.getByLabel('Username').fill(me.username);
    await page.getByRole('button', { name: 'Send the code' }).click();
    const code = await chat.codeFor('5550202');
    await page.getByLabel('The 6-digit code').fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('main').getByText('Home 20').waitFor();
    const state = await kept(page);
    expect(Object.keys(state.session)).toEqual(['isp-billing.my.token']);
    expect(state.html).not.toContain(code);
    expect(JSON.stringify(state.session)).not.toContain(code);
    expect(problems).toEqual([]);
    await context.close();
    await ok(api.put('/api/settings', { self_care_code_sign_in: false }, { token: admin }));
  });

  it('offers only what the operator turned on, and says so when self-care is off', async () => {
    await ok(api.put('/api/settings', { self_care_change_plan: false, self_care_redeem: false }, { token: admin }));
    const me = await mkSub();
    const { context, page } = await phone();
    await page.goto(`${t.baseUrl}/my`);
    await signIn(page, me.username, me.password);
    await page.locator('main').getByText('Home 20').waitFor();
    const tabs = await page.locator('nav.my-tabs a').allInnerTexts();
    expect(tabs).toEqual(['Account', 'Usage', 'Invoices', 'Top up data', 'Password', 'Messages']);
    expect(await page.locator('main').getByRole('link', { name: 'Recharge card' }).count()).toBe(0);
    await ok(api.put('/api/settings', { self_care_enabled: false }, { token: admin }));
    await page.reload();
    await page.getByText('Self-care is turned off by your provider.').waitFor();
    expect(await page.getByLabel('Username').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
    await ok(
      api.put(
        '/api/settings',
        { self_care_enabled: true, self_care_change_plan: true, self_care_redeem: true },
        { token: admin },
      ),
    );
  });
});

/** Codes and units that are Latin in every language (as console-arabic.test.ts allows them). */
const ALLOWED = new Set(['B', 'KB', 'MB', 'GB', 'TB', 'IP', 'MAC', 'PDF', 'FUP', 'PPPoE', 'English', 'USD', 'M']);

/** The Latin-script words a person sees or hears on the page, less `data` (the API's own values). */
async function untranslated(page: Page, data: string[]): Promise<string[]> {
  const texts = (await page.evaluate(`(() => {
    const parts = [document.body.innerText, document.title];
    for (const el of document.querySelectorAll('[placeholder],[aria-label],[title],[alt]'))
      for (const a of ['placeholder', 'aria-label', 'title', 'alt']) if (el.getAttribute(a)) parts.push(el.getAttribute(a));
    for (const o of document.querySelectorAll('option')) parts.push(o.textContent);
    return parts;
  })()`)) as string[];
  const found = new Set<string>();
  for (const raw of texts) {
    let text = raw.replace(/[\u2066-\u2069\u200e\u200f]/g, '');
    for (const value of [...data].sort((a, b) => b.length - a.length)) if (value) text = text.split(value).join(' ');
    text = text.replace(/\b[A-Z]+-[\w-]+\b/g, ' ').replace(/\S+@\S+/g, ' ');
    for (const word of text.match(/[A-Za-z][A-Za-z']*/g) ?? []) if (!ALLOWED.has(word)) found.add(word);
  }
  return [...found].sort();
}

describe('in Arabic', () => {
  it("the operator's language: right to left, every screen translated; the switch goes to English and stays", async () => {
    await ok(
      api.put(
        '/api/settings',
        {
          language: 'ar',
          operator_name: 'شبكة الفايبر',
          how_to_pay: 'ادفع عبر الإنترنت هنا، أو نقدًا في المتجر.',
          self_care_code_sign_in: true,
        },
        { token: admin },
      ),
    );
    const me = await mkSub({ full_name: 'سارة حداد' });
    await t.db
      .insert(dailyUsage)
      .values({ subscriberId: me.id, date: daysFromToday(0), downloadBytes: GB, uploadBytes: Math.round(GB / 10) });
    await ok(
      api.post(
        '/api/invoices',
        { subscriber_id: me.id, items: [{ description: 'راوتر', qty: 1, unit_price: 5 }] },
        { token: admin },
      ),
      201,
    );
    const tok = (await ok(api.post('/api/my/login', { username: me.username, password: me.password }))).data
      .token as string;
    const invoices = await ok(api.get('/api/my/invoices', { token: tok }));
    const data = [
      me.username,
      ...(invoices.data as unknown as { invoice_number: string }[]).map((i) => i.invoice_number),
      'Home 20',
      'Fibre 100',
      '20M/20M',
      '100M/100M',
      '+1 555 0100',
    ];

    const { context, page } = await phone();
    await page.goto(`${t.baseUrl}/my`);
    await page.getByRole('heading', { name: 'تسجيل الدخول' }).waitFor();
    expect(
      await page.evaluate(
        '[document.documentElement.lang, document.documentElement.dir, getComputedStyle(document.body).direction]',
      ),
    ).toEqual(['ar', 'rtl', 'rtl']);
    const findings: Record<string, string[]> = {};
    const check = async (name: string) => {
      await page.waitForLoadState('networkidle');
      const words = await untranslated(page, data);
      if (words.length) findings[name] = words;
    };
    await check('sign-in');
    await page.getByRole('button', { name: 'الدخول برمز يُرسل إلى هاتفي' }).click();
    await check('sign-in with a code');
    await page.getByRole('button', { name: 'الدخول بكلمة المرور' }).click();
    await signIn(page, me.username, me.password, { u: 'اسم المستخدم', p: 'كلمة المرور', go: 'تسجيل الدخول' });
    await page.locator('main').getByText('سارة حداد').waitFor();
    await shot(page, 'account-ar');
    for (const [hash, name] of [
      ['#/', 'account'],
      ['#/usage', 'usage'],
      ['#/invoices', 'invoices'],
      ['#/topup', 'top-up'],
      ['#/card', 'card'],
      ['#/plan', 'plan'],
      ['#/password', 'password'],
      ['#/messages', 'messages'],
    ]) {
      await page.goto(`${t.baseUrl}/my${hash}`);
      await page.locator('main h1').waitFor();
      await check(name);
    }
    await page.goto(`${t.baseUrl}/my#/invoices`);
    await page.locator('ul.invoices a').first().click();
    await page.locator('main dl').waitFor();
    await check('invoice');
    await page.goto(`${t.baseUrl}/my#/plan`);
    await page.getByRole('button', { name: 'عرض السعر' }).click();
    await page.getByText('تدفع الآن').waitFor();
    await check('plan quote');
    await page.goto(`${t.baseUrl}/my#/`);
    await page.getByRole('button', { name: 'جدّد الآن' }).click();
    await page.locator('dialog[open]').waitFor();
    await check('renew dialog');
    await page.keyboard.press('Escape');
    expect(findings).toEqual({});

    // The subscriber's own choice: English, left to right, remembered on the device.
    await page.getByLabel('اللغة').selectOption('en');
    await page.waitForURL(/lang=en/);
    await page.locator('main').getByText('Days left').waitFor();
    expect(await page.evaluate('document.documentElement.dir')).toBe('ltr');
    await page.goto(`${t.baseUrl}/my`);
    await page.waitForURL(/lang=en/);
    await page.locator('main').getByText('Days left').waitFor();
    expect(problems).toEqual([]);
    await context.close();
    await ok(
      api.put(
        '/api/settings',
        { language: 'en', operator_name: 'Fibre Co', self_care_code_sign_in: false },
        { token: admin },
      ),
    );
  });
});
