/**
 * `npm run backup` and `npm run restore` (docs/operations.md) on a database seeded through the API:
 * the restored copy has every row and the ledger's sums, the manifest states them, the key is
 * carried sealed or loudly not; a non-empty target, a damaged file and a wrong passphrase are
 * refused before anything is written; an older backup is migrated forward.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import type { Manifest } from '../../shared/backup/file-format';
import { codeLevel, journal } from '../../shared/backup/migration-level';
import { adminToken, client, startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/app';
import { emptyDatabase, figures, migrate, migrationsUpTo, runCli, type Figures } from '../helpers/backup';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let dir: string;
let source: Figures;
const PASS = 'correct horse battery staple';

beforeAll(async () => {
  t = await startTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'backup-test-'));
  fs.writeFileSync(path.join(dir, 'pass'), `${PASS}\n`);
  const api = client(t.baseUrl);
  const admin = adminToken();
  const reseller = await seedReseller(t.db, { name: 'backup-r', commissionRate: '10' });
  const plan = await seedPlan(t.db, { price: 1500 });
  for (let i = 0; i < 12; i++) {
    const sub = await seedSubscriber(t.db, { resellerId: reseller.id, serviceId: plan.id });
    const inv = await api.post(
      '/api/invoices',
      { subscriber_id: sub.id, items: [{ description: 'service', qty: 1, unit_price: 10 + i + 0.37 }], tax_rate: 5 },
      { token: admin },
    );
    expect(inv.status).toBe(201);
    // Some paid in full, some in part, some not at all.
    if (i % 3 !== 2) {
      const pay = await api.post(
        `/api/invoices/${inv.body.data.id}/payment`,
        { amount: i % 3 === 0 ? 4.25 : inv.body.data.total },
        { token: admin },
      );
      expect(pay.status).toBe(200);
    }
  }
  // At rest from here: background sweeps fold the derived count tables, which would move figures.
  await t.close();
  source = await figures(t.databaseUrl);
  expect(Number(source.ledger['invoice_payments.amount'])).toBeGreaterThan(0);
}, 120_000);

afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
});

async function backup(file: string, env: Record<string, string> = {}): Promise<{ manifest: Manifest; stderr: string }> {
  const r = await runCli('backup', ['--out', file, '--json'], { DATABASE_URL: t.databaseUrl, ...env });
  expect([r.status, r.stderr]).toEqual([0, expect.any(String)]);
  return { manifest: JSON.parse(r.stdout) as Manifest, stderr: r.stderr };
}

/** Every index of the public schema as PostgreSQL states it (name, table, method, columns, options). */
async function indexesOf(url: string): Promise<string[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query<{ def: string }>(
    `select indexdef as def from pg_indexes where schemaname = 'public' order by indexname`,
  );
  await c.end();
  return rows.map((r) => r.def);
}

async function tablesOf(url: string): Promise<number> {
  const c = new Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query(`select count(*)::int as n from pg_tables where schemaname in ('public', 'drizzle')`);
  await c.end();
  return rows[0].n;
}

describe('backup and restore', () => {
  const sealed = () => path.join(dir, 'sealed.backup');

  test('the backup states exactly what the database holds, and carries the key sealed with the passphrase', async () => {
    const { manifest, stderr } = await backup(sealed(), { BACKUP_PASSPHRASE: PASS });
    expect(manifest.row_counts).toEqual(source.rows);
    expect(manifest.ledger).toEqual(source.ledger);
    expect(manifest.migration).toEqual(codeLevel());
    expect(manifest.encryption_key).toMatchObject({
      carried: true,
      location: 'the ENCRYPTION_KEY environment variable',
    });
    expect(manifest.checksum.data).toMatch(/^[0-9a-f]{64}$/);
    expect(stderr).not.toContain('does NOT hold');
    // Compressed: the file holds neither the key nor readable rows.
    const bytes = fs.readFileSync(sealed());
    expect(bytes.includes(Buffer.from(TEST_ENCRYPTION_KEY))).toBe(false);
    expect(bytes.includes(Buffer.from('backup-r'))).toBe(false);
  });

  test('restored into an empty database: same rows, same ledger, migrated, figures printed beside the manifest', async () => {
    const target = await emptyDatabase();
    const keyOut = path.join(dir, 'restored.key');
    const r = await runCli('restore', [sealed(), '--passphrase-file', path.join(dir, 'pass'), '--key-out', keyOut], {
      DATABASE_URL: target,
      ENCRYPTION_KEY: '',
    });
    expect([r.status, r.stderr]).toEqual([0, expect.stringContaining('checksums good')]);
    expect(r.stdout).toContain('restored: every figure matches the manifest');
    expect(r.stdout).toMatch(/invoice_payments\.amount\s+(\d+)\s+\1\n/);
    const restored = await figures(target);
    expect(restored.rows).toEqual(source.rows);
    expect(restored.ledger).toEqual(source.ledger);
    expect(restored.digest).toBe(source.digest);
    expect(restored.migrations).toBe(journal().length);
    // The indexes built after the load are those the migrations made, options included.
    const indexes = await indexesOf(t.databaseUrl);
    expect(indexes.length).toBeGreaterThan(50);
    expect(await indexesOf(target)).toEqual(indexes);
    expect(fs.readFileSync(keyOut, 'utf8')).toBe(TEST_ENCRYPTION_KEY);
    // Sequences go on after the restored ids: a new ledger row does not collide.
    const c = new Client({ connectionString: target });
    await c.connect();
    const next = await c.query(
      `insert into transactions (type, amount, currency) values ('adjustment', 1, 'USD') returning id`,
    );
    await c.end();
    expect(Number(next.rows[0].id)).toBeGreaterThan(source.rows.transactions);

    // The same target again: it is not empty now.
    const again = await runCli('restore', [sealed()], { DATABASE_URL: target });
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('the target database is not empty');
    expect((await figures(target)).rows.transactions).toBe(source.rows.transactions + 1);
    // --force replaces what it holds.
    const forced = await runCli('restore', [sealed(), '--force'], { DATABASE_URL: target });
    expect(forced.status).toBe(0);
    expect((await figures(target)).digest).toBe(source.digest);
  }, 120_000);

  test('a damaged or truncated file and a wrong passphrase are refused before the target is touched', async () => {
    const target = await emptyDatabase();
    const good = fs.readFileSync(sealed());
    const flipped = Buffer.from(good);
    flipped[Math.floor(good.length / 3)] ^= 0xff;
    fs.writeFileSync(path.join(dir, 'flipped.backup'), flipped);
    fs.writeFileSync(path.join(dir, 'short.backup'), good.subarray(0, good.length - 100));
    fs.writeFileSync(path.join(dir, 'other.backup'), 'not a backup at all, just text');
    for (const [file, why] of [
      ['flipped.backup', /damaged: its (data|header) checksum differs/],
      ['short.backup', /damaged|truncated/],
      ['other.backup', /is not a backup/],
    ] as const) {
      const r = await runCli('restore', [path.join(dir, file)], { DATABASE_URL: target });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(why);
    }
    fs.writeFileSync(path.join(dir, 'wrong'), 'not the passphrase\n');
    const wrong = await runCli('restore', [sealed(), '--passphrase-file', path.join(dir, 'wrong')], {
      DATABASE_URL: target,
    });
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain('the passphrase does not open the encryption key');
    expect(await tablesOf(target)).toBe(0);
  }, 60_000);

  test('without a passphrase the backup says loudly it does not hold the key, and the restore checks the key in use', async () => {
    const file = path.join(dir, 'bare.backup');
    const { manifest, stderr } = await backup(file);
    expect(manifest.encryption_key.carried).toBe(false);
    expect(stderr).toContain('this backup does NOT hold the encryption key');
    expect(stderr).toContain('The key is in the ENCRYPTION_KEY environment variable');
    const target = await emptyDatabase();
    const r = await runCli('restore', [file], { DATABASE_URL: target, ENCRYPTION_KEY: 'b'.repeat(64) });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('is not the one this backup');
    const same = await runCli('restore', [file, '--force'], { DATABASE_URL: target });
    expect(same.status).toBe(0);
    expect(same.stderr).not.toContain('!!!');
  }, 60_000);

  test('a restore that fails after the target was touched leaves it as it was: empty, or what --force would have replaced', async () => {
    // A table made by hand beside the migrations' is in the backup, and no migration makes it:
    // the load fails after the schema is built.
    const odd = await emptyDatabase();
    migrate(odd);
    const c = new Client({ connectionString: odd });
    await c.connect();
    await c.query(`create table made_by_hand (id int primary key)`);
    await c.query(`insert into made_by_hand values (1), (2)`);
    await c.query(`insert into resellers (name, path, currency, balance) values ('odd', '/1/', 'USD', 777)`);
    await c.end();
    const file = path.join(dir, 'odd.backup');
    expect((await runCli('backup', ['--out', file, '--json'], { DATABASE_URL: odd })).status).toBe(0);

    const target = await emptyDatabase();
    const r = await runCli('restore', [file], { DATABASE_URL: target });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("the schema at the backup's migration level has no table made_by_hand");
    expect(await tablesOf(target)).toBe(0);

    // Forced over a restored copy: the failure keeps the copy whole.
    expect((await runCli('restore', [sealed()], { DATABASE_URL: target })).status).toBe(0);
    const forced = await runCli('restore', [file, '--force'], { DATABASE_URL: target });
    expect(forced.status).toBe(1);
    const kept = await figures(target);
    expect(kept.digest).toBe(source.digest);
    expect(kept.ledger).toEqual(source.ledger);
    expect(kept.migrations).toBe(journal().length);
  }, 120_000);

  test('a backup made at an older migration level is restored at that level, then migrated forward', async () => {
    const entries = journal();
    const older = entries[entries.length - 4];
    const folder = migrationsUpTo({ count: entries.length - 3, tag: older.tag, when: older.when });
    const old = await emptyDatabase();
    try {
      migrate(old, folder);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
    const c = new Client({ connectionString: old });
    await c.connect();
    await c.query(`insert into resellers (name, path, currency, balance) values ('old-release', '/1/', 'EUR', 12345)`);
    await c.end();
    const file = path.join(dir, 'old.backup');
    const r = await runCli('backup', ['--out', file, '--json'], { DATABASE_URL: old });
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as Manifest).migration.tag).toBe(older.tag);
    const target = await emptyDatabase();
    const restored = await runCli('restore', [file], { DATABASE_URL: target });
    expect(restored.stdout).toContain('resellers.balance');
    const after = await figures(target);
    expect(after.migrations).toBe(entries.length);
    expect(after.ledger['resellers.balance']).toBe('12345');
  }, 120_000);
});
