/**
 * The console's backups page (docs/operations.md) in a real Chromium: an admin sees the schedule of
 * BACKUP_DIR and every backup in it with its manifest (time, size, release, migration level, rows,
 * ledger totals), a damaged file listed as failed with the reason, and the point-in-time recovery
 * base backups with the archived WAL. axe-core finds no serious or
 * critical violation. (The page without BACKUP_DIR is walked by console-arabic.test.ts: one app
 * per process, and the schedule is read from the environment at start.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import type { Manifest } from '../../shared/backup/file-format';
import type { BaseBackupInfo } from '../../shared/backup/wal-archive';
import type { TestApp } from '../helpers/app';
import { runCli } from '../helpers/backup';
import { ADMIN_PASSWORD, axeScan, openConsole, signInOn, startConsoleApp } from '../helpers/console-browser';

jest.setTimeout(120_000);

const ENV_KEYS = ['BACKUP_DIR', 'BACKUP_INTERVAL_SECONDS', 'BACKUP_KEEP', 'BACKUP_PASSPHRASE', 'BACKUP_ALERT_TO'];
const saved = Object.fromEntries(ENV_KEYS.map((k) => [k, process.env[k]]));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-backups-'));
let t: TestApp | undefined;
let browser: Browser | undefined;
const problems: string[] = [];

afterAll(async () => {
  await browser?.close();
  await t?.close();
  for (const k of ENV_KEYS) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

it('lists the backups of BACKUP_DIR with their manifests, a damaged one as failed', async () => {
  for (const k of ENV_KEYS) delete process.env[k];
  Object.assign(process.env, { BACKUP_DIR: dir, BACKUP_INTERVAL_SECONDS: '21600', BACKUP_KEEP: '5' });
  ({ t, browser } = await startConsoleApp());
  const good = 'billing-20261128T120000Z.backup';
  const made = await runCli('backup', ['--out', path.join(dir, good), '--json'], { DATABASE_URL: t.databaseUrl });
  expect(made.status).toBe(0);
  const manifest = JSON.parse(made.stdout) as Manifest;
  fs.writeFileSync(path.join(dir, 'billing-20261128T130000Z.backup'), 'not a backup at all');
  // A base backup as the embedded server leaves it, and two archived WAL segments.
  const base: BaseBackupInfo = {
    name: 'base-20261128T110000Z',
    system_identifier: '7400000000000000001',
    timeline: 2,
    start_lsn: '0/5000028',
    stop_lsn: '0/5000120',
    start_wal: '000000020000000000000005',
    start_time: '2026-11-28T11:00:00.000Z',
    stop_time: '2026-11-28T11:00:03.000Z',
    server_version: '18.4',
    app_version: '0.1.0-base',
    bytes: 31_000_000,
    key_fingerprint: null,
  };
  fs.mkdirSync(path.join(dir, 'base', base.name), { recursive: true });
  fs.writeFileSync(path.join(dir, 'base', base.name, 'base.json'), JSON.stringify(base));
  fs.mkdirSync(path.join(dir, 'wal'));
  for (const segment of ['000000020000000000000005', '000000020000000000000006'])
    fs.writeFileSync(path.join(dir, 'wal', segment), Buffer.alloc(1024));

  const page = await openConsole(browser, t.baseUrl, problems);
  await signInOn(page, 'admin', ADMIN_PASSWORD);
  await page.getByRole('link', { name: 'Backups' }).click();
  await page.getByRole('heading', { name: 'Backups' }).waitFor();
  await page.getByText(dir, { exact: true }).waitFor();
  await page.getByText('6 hours').waitFor();
  await page.getByText('the newest 5').waitFor();
  await page.getByText('not carried: keep the key apart').waitFor();

  const rows = page.locator('table').first().locator('tbody tr');
  expect(await rows.count()).toBe(2);
  // Newest first: the damaged file, failed with the reader's reason.
  await expect(rows.nth(0).textContent()).resolves.toContain('billing-20261128T130000Z.backup');
  await expect(rows.nth(0).textContent()).resolves.toMatch(/failed:/);
  const goodRow = (await rows.nth(1).textContent()) ?? '';
  expect(goodRow).toContain(good);
  expect(goodRow).toContain(manifest.migration.tag);
  expect(goodRow).toContain(manifest.app_version);
  expect(goodRow).toContain('complete');
  expect(goodRow).toContain('not carried');
  const total = Object.values(manifest.row_counts).reduce((a, b) => a + b, 0);
  expect(goodRow.replace(/[^\d,]/g, ' ')).toContain(total.toLocaleString('en-US'));

  await page.getByText(`Manifest of ${good}`).click();
  const details = page.locator('details.manifest');
  for (const [key, value] of Object.entries(manifest.ledger)) {
    const cell = details.locator('tr', {
      has: page.locator('code', { hasText: new RegExp(`^${key.replace(/\./g, '\\.')}$`) }),
    });
    await expect(cell.textContent()).resolves.toContain(value);
  }
  await details.getByText(manifest.checksum.data).waitFor();

  await page.getByRole('heading', { name: 'Point-in-time recovery' }).waitFor();
  // Numbers and times are wrapped in Unicode isolates (format.js) so they read right in Arabic too.
  await page.getByText(/Archived WAL: \u2066?2\u2069? segments, 2\.0 KB, the newest archived at /).waitFor();
  const bases = page.locator('table', { has: page.locator('caption', { hasText: 'Base backups' }) });
  const baseRows = bases.locator('tbody tr');
  expect(await baseRows.count()).toBe(1);
  const baseRow = (await baseRows.first().textContent()) ?? '';
  for (const shown of [base.name, base.app_version, base.server_version, base.start_wal])
    expect(baseRow).toContain(shown);
  await axeScan(page, 'backups');
  expect(problems).toEqual([]);
});
