/**
 * Two-factor sign-in in the console, in a real Chromium: a manager opens its security page, sets
 * it up from the QR code, confirms with a code, sees its recovery codes once, and the next sign-in
 * asks for a code. Codes come from the TOTP library for the clock the server is pinned to.
 */
import fs from 'node:fs';
import { eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { chromium, type Browser, type Page } from 'playwright-core';
import { setTotpClock } from '../../services/auth/totp';
import { findChromium } from '../../services/pdf-renderer/chromium';
import { managers } from '../../shared/db/schema';
import { adminToken, http, startTestApp, type TestApp } from '../helpers/app';

jest.setTimeout(120_000);

const PASSWORD = 'long-enough-1';
const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
let now = Date.UTC(2026, 10, 26, 12, 0, 5);
let t: TestApp;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];

const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: at,
  });

async function signIn(username = 'erin'): Promise<void> {
  await page?.context().close();
  page = await (await browser.newContext()).newPage();
  page.on('pageerror', (err) => pageProblems.push(err.message));
  await page.goto(`${t.baseUrl}/`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

beforeAll(async () => {
  setTotpClock(() => now);
  t = await startTestApp();
  const created = await http(t.baseUrl, 'POST', '/api/managers', {
    token: adminToken(),
    body: { username: 'erin', password: PASSWORD, role: 'user', permissions: ['subscribers.view'] },
  });
  expect(created.status).toBe(201);
  const admin = await http(t.baseUrl, 'POST', '/api/managers', {
    token: adminToken(),
    body: { username: 'root', password: PASSWORD, role: 'admin' },
  });
  expect(admin.status).toBe(201);
  browser = await chromium.launch({ executablePath: findChromium(), args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('console: two-factor sign-in', () => {
  it('sets it up from the QR code, shows the recovery codes once, and asks for a code at the next sign-in', async () => {
    await signIn();
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    expect(await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(100);
    await page.evaluate(axeSource);
    const violations = await page.evaluate(async () => {
      const axe = (
        globalThis as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string }[] }> } }
      ).axe;
      return (await axe.run()).violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    });
    expect(violations).toEqual([]);

    const secret = (await page.locator('code.secret').textContent()) ?? '';
    await page.getByRole('textbox', { name: /^Code/ }).fill(codeAt(secret, now));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('heading', { name: 'Recovery codes' }).waitFor();
    const shown = await page.locator('ul.recovery-codes li').allTextContents();
    expect(shown).toHaveLength(10);
    const [row] = await t.db.select().from(managers).where(eq(managers.username, 'erin'));
    expect(row.totpEnabledAt).not.toBeNull();
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByText(/Two-factor sign-in is on since .*Unused recovery codes: 10\./).waitFor();
    // Shown once: nothing on the page holds them any more.
    expect(await page.locator('ul.recovery-codes').count()).toBe(0);

    now += 30_000;
    await signIn();
    await page.getByText('Enter the code from your authenticator app.').waitFor();
    await page.getByRole('textbox', { name: /^Code/ }).fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('Sign-in refused: invalid two-factor code.').waitFor();
    await page.getByRole('textbox', { name: /^Code/ }).fill(codeAt(secret, now));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(pageProblems).toEqual([]);
  });

  it("lets an admin see who has it on and turn a manager's off (a lost phone)", async () => {
    await signIn('root');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('link', { name: 'Managers' }).click();
    const row = page.getByRole('row', { name: /erin/ });
    await row.getByRole('cell', { name: 'on', exact: true }).waitFor();
    await row.getByRole('button', { name: 'Turn off two-factor for erin' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Yes, turn off two-factor for erin' }).click();
    await row.getByRole('cell', { name: 'off', exact: true }).waitFor();
    const [erin] = await t.db.select().from(managers).where(eq(managers.username, 'erin'));
    expect([erin.totpSecret, erin.totpEnabledAt]).toEqual([null, null]);
    expect(pageProblems).toEqual([]);
  });

  it("asks an admin with it on for a code of its own to turn a manager's off and to create an admin", async () => {
    const erinSecret = await enableByApi('erin');
    now += 30_000;
    const rootSecret = await enableByApi('root');
    expect(erinSecret).not.toBe(rootSecret);
    now += 30_000;
    await signIn('root');
    await page.getByRole('textbox', { name: /^Code/ }).fill(codeAt(rootSecret, now));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('link', { name: 'Managers' }).click();

    const row = page.getByRole('row', { name: /erin/ });
    await row.getByRole('cell', { name: 'on', exact: true }).waitFor();
    await row.getByRole('button', { name: 'Turn off two-factor for erin' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: /^Your two-factor code/ }).fill('000000');
    await dialog.getByRole('button', { name: 'Yes, turn off two-factor for erin' }).click();
    await dialog.getByText(/not a valid two-factor code/).waitFor();
    const [still] = await t.db.select().from(managers).where(eq(managers.username, 'erin'));
    expect(still.totpEnabledAt).not.toBeNull();
    now += 30_000;
    await dialog.getByRole('textbox', { name: /^Your two-factor code/ }).fill(codeAt(rootSecret, now));
    await dialog.getByRole('button', { name: 'Yes, turn off two-factor for erin' }).click();
    await row.getByRole('cell', { name: 'off', exact: true }).waitFor();
    const [erin] = await t.db.select().from(managers).where(eq(managers.username, 'erin'));
    expect(erin.totpEnabledAt).toBeNull();

    now += 30_000;
    await page.getByRole('button', { name: 'New manager' }).click();
    await dialog.getByLabel('Username').fill('root2');
    await dialog.getByLabel('Password (8 or more)').fill(PASSWORD);
    await dialog.getByLabel('Role').selectOption('admin');
    await dialog.getByRole('textbox', { name: /^Your two-factor code/ }).fill(codeAt(rootSecret, now));
    await dialog.getByRole('button', { name: 'New manager' }).click();
    await page.getByRole('row', { name: /root2/ }).waitFor();
    const [created] = await t.db.select().from(managers).where(eq(managers.username, 'root2'));
    expect(created.role).toBe('admin');
    expect(pageProblems).toEqual([]);
  });
});

/** Turns two-factor sign-in on through the API for `username`, at the current step; its secret. */
async function enableByApi(username: string): Promise<string> {
  const signedIn = await http(t.baseUrl, 'POST', '/api/auth/login', { body: { username, password: PASSWORD } });
  const token = signedIn.body.data.token;
  const started = await http(t.baseUrl, 'POST', '/api/auth/two-factor/enrol', { token, body: {} });
  const secret = started.body.data.secret;
  const confirmed = await http(t.baseUrl, 'POST', '/api/auth/two-factor/confirm', {
    token,
    body: { code: codeAt(secret, now) },
  });
  expect(confirmed.status).toBe(200);
  return secret;
}
