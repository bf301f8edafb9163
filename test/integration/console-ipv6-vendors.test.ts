/**
 * Issue 41 in the console, in Chromium: a subscriber's IPv6 prefixes edited, shown normalised on its
 * page and cleared; a plan's IPv6 pool names; a plan's per-vendor RADIUS attribute template, whose
 * dictionary refusal (400 naming the vendor, line and attribute) is shown beside that vendor's
 * field with nothing saved; a NAS's vendor; the bulk menu's IPv6 twin of set_static_ip.
 */
import type { Browser, Page } from 'playwright-core';
import { http, type TestApp } from '../helpers/app';
import { ADMIN_PASSWORD, openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';
import { waitFor } from '../helpers/wait';

jest.setTimeout(180_000);

let t: TestApp;
let browser: Browser;
let adminApi: string;
let page: Page;
let plan: number;
let subscriber: number;
let nas: number;
const problems: string[] = [];

const get = async (path: string) => (await http(t.baseUrl, 'GET', path, { token: adminApi })).body.data;
const post = async (path: string, body: Record<string, unknown>) => {
  const res = await http(t.baseUrl, 'POST', path, { token: adminApi, body });
  expect([path, res.status]).toEqual([path, path.endsWith('service-limits') ? 200 : 201]);
  return res.body.data.id as number;
};

beforeAll(async () => {
  ({ t, browser, adminApi } = await startConsoleApp());
  const reseller = await post('/api/resellers', { name: 'North', balance: 100, currency: 'USD' });
  plan = await post('/api/services', { name: 'Home', price: 20, duration_days: 30, rate_limit: '10M/20M' });
  await post(`/api/resellers/${reseller}/service-limits`, { service_id: plan });
  subscriber = await post('/api/subscribers', {
    username: 'six@north',
    password: 'secret1',
    service_id: plan,
    reseller_id: reseller,
  });
  nas = await post('/api/nas', { name: 'edge-6', ip_address: '192.0.2.66', secret: 'radius-secret-6' });
  page = await openConsole(browser, t.baseUrl, problems);
  await signInOn(page, 'admin', ADMIN_PASSWORD);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

afterEach(() => expect(problems).toEqual([]));

/** Opens the action dialog behind `button`, fills its fields by label, and submits it. */
async function openDialog(button: string) {
  await page.getByRole('button', { name: button, exact: true }).click();
  return page.getByRole('dialog');
}

it("edits a subscriber's IPv6 prefixes, shows them normalised, and clears one", async () => {
  await page.goto(`${t.baseUrl}/#/subscribers/${subscriber}`);
  await page.getByRole('heading', { name: 'six@north' }).waitFor();
  await page.getByText('Edit the record').click();
  const form = page.locator('details.card');
  await form.getByLabel('IPv6 prefix (WAN)', { exact: true }).fill('2001:DB8:0:1::/64');
  await form.getByLabel('Delegated IPv6 prefix (LAN)', { exact: true }).fill('2001:0db8:000a::/56');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved').waitFor();
  const saved = await get(`/api/subscribers/${subscriber}`);
  expect([saved.ipv6_prefix, saved.delegated_ipv6_prefix]).toEqual(['2001:db8:0:1::/64', '2001:db8:a::/56']);
  // The page reloads the record: the Connection card shows the canonical text.
  const connection = page.locator('section[aria-labelledby="h-online"]');
  await connection.getByText('2001:db8:a::/56').waitFor();
  await expect(connection.getByText('2001:db8:0:1::/64').count()).resolves.toBe(1);

  // A host address with a /56 is a 400 naming the field: shown beside it, nothing saved.
  await page.evaluate("document.querySelector('details.card').open = true");
  await form.getByLabel('Delegated IPv6 prefix (LAN)', { exact: true }).fill('2001:db8:a::1/56');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await form.locator('.field-error').waitFor();
  expect(await form.locator('.field-error').innerText()).toMatch(/Delegated IPv6 prefix \(LAN\)/);
  expect((await get(`/api/subscribers/${subscriber}`)).delegated_ipv6_prefix).toBe('2001:db8:a::/56');

  await form.getByLabel('Delegated IPv6 prefix (LAN)', { exact: true }).fill('');
  await page.getByRole('button', { name: 'Save changes' }).click();
  // The first save's notice may still be up: wait on the record itself.
  const cleared = await waitFor('the cleared prefix', async () => {
    const row = await get(`/api/subscribers/${subscriber}`);
    return row.delegated_ipv6_prefix === null && row;
  });
  expect(cleared.ipv6_prefix).toBe('2001:db8:0:1::/64');
});

it("sets a plan's IPv6 pool names in the plan form", async () => {
  await page.goto(`${t.baseUrl}/#/plans`);
  const dialog = await openDialog('Edit Home');
  await dialog.getByLabel('IPv6 pool for the WAN prefix').fill('wan6');
  await dialog.getByLabel('IPv6 pool for the delegated prefix').fill('pd6');
  await dialog.getByRole('button', { name: 'Edit Home' }).click();
  await dialog.waitFor({ state: 'detached' });
  const saved = await get(`/api/services/${plan}`);
  expect([saved.framed_ipv6_pool, saved.delegated_ipv6_pool]).toEqual(['wan6', 'pd6']);
});

it("edits a plan's per-vendor attribute template; a bad attribute is shown in its vendor's field and nothing is saved", async () => {
  await page.goto(`${t.baseUrl}/#/plans`);
  let dialog = await openDialog('RADIUS attributes of Home');
  await dialog.getByLabel('Huawei', { exact: true }).fill('Huawei-Qos-Profile-Name := "gold"\nHuawei-Turbo := 1');
  await dialog.getByLabel('Cisco', { exact: true }).fill('Cisco-AVPair += "ip:dns-servers=10.0.0.53"');
  await dialog.getByRole('button', { name: 'RADIUS attributes of Home' }).click();
  const huawei = dialog.locator('.field', { has: page.getByLabel('Huawei', { exact: true }) });
  await huawei.locator('.field-error').waitFor();
  expect(await huawei.locator('.field-error').innerText()).toBe('Huawei line 2: unknown attribute Huawei-Turbo.');
  await expect(dialog.getByLabel('Huawei', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
  expect((await get(`/api/services/${plan}`)).vendor_attributes).toEqual({});

  await dialog.getByLabel('Huawei', { exact: true }).fill('Huawei-Qos-Profile-Name := "gold"');
  await dialog.getByRole('button', { name: 'RADIUS attributes of Home' }).click();
  await page.getByText('Attributes of Home saved').waitFor();
  expect((await get(`/api/services/${plan}`)).vendor_attributes).toEqual({
    huawei: 'Huawei-Qos-Profile-Name := "gold"',
    cisco: 'Cisco-AVPair += "ip:dns-servers=10.0.0.53"',
  });
  // The dialog opens again with what was saved; emptying a vendor's field removes its template.
  dialog = await openDialog('RADIUS attributes of Home');
  await expect(dialog.getByLabel('Huawei', { exact: true }).inputValue()).resolves.toBe(
    'Huawei-Qos-Profile-Name := "gold"',
  );
  await dialog.getByLabel('Cisco', { exact: true }).fill('');
  await dialog.getByRole('button', { name: 'RADIUS attributes of Home' }).click();
  await dialog.waitFor({ state: 'detached' });
  expect((await get(`/api/services/${plan}`)).vendor_attributes).toEqual({
    huawei: 'Huawei-Qos-Profile-Name := "gold"',
  });
});

it("changes a NAS's vendor in the access server form", async () => {
  await page.goto(`${t.baseUrl}/#/nas`);
  const dialog = await openDialog('Edit edge-6');
  await dialog.getByLabel('Vendor').selectOption('juniper');
  await dialog.getByRole('button', { name: 'Edit edge-6' }).click();
  await dialog.waitFor({ state: 'detached' });
  const rows = (await get('/api/nas')) as { id: number; vendor: string }[];
  expect(rows.find((r) => r.id === nas)?.vendor).toBe('juniper');
  await page.getByRole('cell', { name: 'juniper' }).waitFor();
});

it('offers the IPv6 twin of set static IP in the bulk menu, and it runs', async () => {
  await page.goto(`${t.baseUrl}/#/subscribers`);
  await page.getByRole('checkbox', { name: 'Select six@north' }).check();
  await page.getByText('1 selected').waitFor();
  await page.getByLabel('Action', { exact: true }).selectOption({ label: 'Set IPv6 prefix' });
  await page.getByLabel('Which prefix').selectOption('delegated_ipv6_prefix');
  await page.getByLabel('IPv6 prefix (one subscriber)').fill('2001:db8:bb::/48');
  await page.getByRole('button', { name: /^Run set ipv6 prefix on 1$/i }).click();
  const ask = page.getByRole('dialog');
  await ask.getByText('They are disconnected to take the prefix.').waitFor();
  await ask.getByRole('button', { name: /^Yes/ }).click();
  await page.locator('.job-status', { hasText: 'done' }).waitFor({ timeout: 60_000 });
  expect(
    await waitFor('the prefix', async () => (await get(`/api/subscribers/${subscriber}`)).delegated_ipv6_prefix),
  ).toBe('2001:db8:bb::/48');
});
