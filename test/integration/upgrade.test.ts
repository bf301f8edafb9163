/**
 * Upgrades (docs/operations.md): every release's fixture (test/fixtures/upgrade/, a backup of a
 * database that release's API filled) is restored, migrated with the current code, and served:
 * reads, decrypted secrets, a payment. And the embedded start's safety net: a database with data
 * and pending migrations is backed up before they run, and only then.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { backupBeforeMigrations } from '../../shared/backup/before-migrations';
import { backupBeforeUpgrade } from '../../runtime/upgrade-backup';
import { readHeader } from '../../shared/backup/file-format';
import { journal } from '../../shared/backup/migration-level';
import { adminToken, client, startTestApp, TEST_ENCRYPTION_KEY } from '../helpers/app';
import { emptyDatabase, figures, migrate, migrationsUpTo, runCli } from '../helpers/backup';

const FIXTURES = path.join(__dirname, '../fixtures/upgrade');
const fixtures = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.backup'));

test('there is a fixture of this release at least', () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(1);
});

describe.each(fixtures)('the database of %s', (fixture) => {
  test('restores, migrates to the current code and serves the API', async () => {
    const target = await emptyDatabase();
    const r = await runCli('restore', [path.join(FIXTURES, fixture)], { DATABASE_URL: target });
    expect([r.status, r.stderr]).toEqual([0, expect.stringContaining('checksums good')]);
    const before = await figures(target);
    expect(before.migrations).toBe(journal().length);
    const t = await startTestApp({ databaseUrl: target });
    try {
      const api = client(t.baseUrl);
      const admin = adminToken();
      const subs = await api.get('/api/subscribers?search=upgrade-user&limit=50', { token: admin });
      expect(subs.status).toBe(200);
      expect(subs.body.data).toHaveLength(6);
      // The secrets read under the key the fixture was made with.
      const one = await api.get(`/api/subscribers/${subs.body.data[0].id}`, { token: admin });
      expect(one.status).toBe(200);
      expect(one.body.password).toMatch(/^secret-\d$/);
      const invoices = await api.get('/api/invoices?status=pending&limit=50', { token: admin });
      expect(invoices.status).toBe(200);
      expect(invoices.body.data.length).toBeGreaterThanOrEqual(1);
      const open = invoices.body.data[0];
      const pay = await api.post(`/api/invoices/${open.id}/payment`, { amount: open.balance }, { token: admin });
      expect(pay.status).toBe(200);
      expect(pay.body.data.invoice.status).toBe('paid');
    } finally {
      await t.close();
    }
    const after = await figures(target);
    expect(after.rows.transactions).toBe(before.rows.transactions + 1);
    expect(BigInt(after.ledger['invoice_payments.amount']) - BigInt(before.ledger['invoice_payments.amount'])).toBe(
      2750n,
    );
  }, 180_000);
});

describe('the embedded start backs up before pending migrations', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'before-migrations-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const log: string[] = [];
  const opts = (url: string) => ({
    url,
    dir,
    key: Buffer.from(TEST_ENCRYPTION_KEY, 'hex'),
    keyLocation: 'test',
    log: (m: string) => log.push(m),
  });

  async function olderDatabase(withData: boolean): Promise<{ url: string; tag: string }> {
    const entries = journal();
    const older = entries[entries.length - 3];
    const folder = migrationsUpTo({ count: entries.length - 2, tag: older.tag, when: older.when });
    const url = await emptyDatabase();
    try {
      migrate(url, folder);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
    if (withData) {
      const c = new Client({ connectionString: url });
      await c.connect();
      await c.query(`insert into managers (username, password_hash, role) values ('old-admin', 'x', 'admin')`);
      await c.end();
    }
    return { url, tag: older.tag };
  }

  test('a database with data and pending migrations: a backup at its level, named after the target', async () => {
    const { url, tag } = await olderDatabase(true);
    const file = await backupBeforeMigrations(opts(url));
    expect(file).toBeDefined();
    expect(path.basename(file!)).toMatch(new RegExp(`^before-${journal().at(-1)!.tag}-\\d{8}T\\d{6}Z\\.backup$`));
    const { header } = await readHeader(file!);
    expect(header.manifest.migration.tag).toBe(tag);
    expect(header.manifest.row_counts.managers).toBe(1);
    expect(log.join('\n')).toContain(`migrations pending (${tag} -> ${journal().at(-1)!.tag})`);
    // Nothing was migrated by it.
    expect((await figures(url)).migrations).toBe(journal().length - 2);
  }, 60_000);

  test('no backup without data, nor when nothing is pending', async () => {
    const { url } = await olderDatabase(false);
    expect(await backupBeforeMigrations(opts(url))).toBeUndefined();
    migrate(url);
    const c = new Client({ connectionString: url });
    await c.connect();
    await c.query(`insert into managers (username, password_hash, role) values ('admin2', 'x', 'admin')`);
    await c.end();
    expect(await backupBeforeMigrations(opts(url))).toBeUndefined();
    expect(fs.readdirSync(dir)).toHaveLength(1);
  }, 60_000);

  test('both embedded starts (npm start, start:cluster): BACKUP_DIR, else DATA_DIR/backups; none with UPGRADE_BACKUP=off', async () => {
    const { url } = await olderDatabase(true);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'upgrade-data-'));
    const backupDir = path.join(dataDir, 'elsewhere');
    try {
      const install = { dataDir, encryptionKey: Buffer.from(TEST_ENCRYPTION_KEY, 'hex') };
      const said: string[] = [];
      await backupBeforeUpgrade(install, url, { UPGRADE_BACKUP: 'off' }, (m) => said.push(m));
      expect(fs.existsSync(path.join(dataDir, 'backups'))).toBe(false);
      await backupBeforeUpgrade(install, url, {}, (m) => said.push(m));
      expect(fs.readdirSync(path.join(dataDir, 'backups'))).toEqual([expect.stringMatching(/^before-.*\.backup$/)]);
      await backupBeforeUpgrade(install, url, { BACKUP_DIR: backupDir }, (m) => said.push(m));
      expect(fs.readdirSync(backupDir)).toEqual([expect.stringMatching(/^before-.*\.backup$/)]);
      const { header } = await readHeader(path.join(backupDir, fs.readdirSync(backupDir)[0]));
      expect(header.manifest.row_counts.managers).toBe(1);
      expect(said.filter((m) => m.startsWith('backup before migrating written'))).toHaveLength(2);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
