/**
 * The console in a real Chromium (playwright-core and the system browser, as the PDF renderer uses):
 * launching it, a fresh page that records script errors, signing in, and axe-core's scan.
 */
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { findChromium } from '../../services/pdf-renderer/chromium';
import { http, startTestApp, type TestApp } from './app';

const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: findChromium(), args: ['--no-sandbox'] });

/** The admin's password in an app from startConsoleApp (ADMIN_PASSWORD seeds the admin). */
export const ADMIN_PASSWORD = 'change-me-now';

/**
 * An app whose admin signs in with ADMIN_PASSWORD, Chromium, and the admin's API token (for
 * setting up what the console then shows). Closes what it started when a step fails.
 */
export async function startConsoleApp(): Promise<{ t: TestApp; browser: Browser; adminApi: string }> {
  const t = await startTestApp({ env: { ADMIN_PASSWORD } });
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const login = await http(t.baseUrl, 'POST', '/api/auth/login', {
      body: { username: 'admin', password: ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    return { t, browser, adminApi: login.body.data.token };
  } catch (err) {
    await browser?.close();
    await t.close();
    throw err;
  }
}

/** The sign-in page's words in English, or in the language the settings chose. */
export const SIGN_IN = {
  en: { username: 'Username', password: 'Password', signIn: 'Sign in', signOut: 'Sign out' },
  ar: { username: 'اسم المستخدم', password: 'كلمة المرور', signIn: 'تسجيل الدخول', signOut: 'تسجيل الخروج' },
};

/**
 * The console's start page in a fresh browser context (no session left from another). Script
 * errors and CSP refusals go to `problems` (a test expects none); confirm() dialogs, which bulk
 * actions ask, are accepted.
 */
export async function openConsole(browser: Browser, baseUrl: string, problems: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|SyntaxError|TypeError|ReferenceError/.test(msg.text()))
      problems.push(msg.text());
  });
  page.on('dialog', (d) => d.accept());
  await page.goto(`${baseUrl}/`);
  return page;
}

/** Signs in on the sign-in page and waits until the console shows its sign-out button. */
export async function signInOn(page: Page, username: string, password: string, words = SIGN_IN.en): Promise<void> {
  await page.getByLabel(words.username).fill(username);
  await page.getByLabel(words.password).fill(password);
  await page.getByRole('button', { name: words.signIn }).click();
  await page.getByRole('button', { name: words.signOut }).waitFor();
}

/** axe-core on the page as it is: no serious or critical violation (`name` says which page failed). */
export async function axeScan(page: Page, name: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const result = await axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map(
        (v) =>
          `${v.id} (${v.impact}): ${v.nodes
            .map((n) => n.target.join(' '))
            .slice(0, 3)
            .join(', ')}`,
      );
  });
  expect({ page: name, violations }).toEqual({ page: name, violations: [] });
}
