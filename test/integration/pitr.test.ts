/**
 * Point-in-time recovery of the embedded mode (docs/operations.md): the server archives WAL to
 * BACKUP_DIR and takes a base backup there; payments are made before and after a moment T;
 * `npm run restore -- --pitr --to T` into a new DATA_DIR recovers exactly the payments before T,
 * with the ledger's figures as they were at T, and the server starts on it and takes payments.
 */
import fs from 'node:fs';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from '../../shared/db/schema';
import { ledgerTotals } from '../../shared/backup/facts';
import { TEST_ENCRYPTION_KEY } from '../helpers/app';
import { runCli } from '../helpers/backup';
import { archiveCurrentSegment, expectRecoveredTo, waitForBaseBackup } from '../helpers/pitr';
import {
  freePort,
  login,
  openInvoices,
  payInvoice,
  startServer,
  stopServer,
  tempDirs,
} from '../helpers/server-process';
import { seedBillingSubscriber } from './billing-fixtures';

jest.setTimeout(300_000);

const SERVICES = 'gateway,billing,subscribers';
const temp = tempDirs();
afterAll(() => temp.cleanup());

function dbUrl(dataDir: string, pgPort: number): string {
  const password = fs.readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/billing`;
}

async function withPool<T>(url: string, fn: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url });
  try {
    return await fn(pool);
  } finally {
    await pool.end();
  }
}

it('recovers a new DATA_DIR to a moment: exactly the payments before it, the ledger as it was then', async () => {
  const dataDir = temp.make();
  const backupDir = temp.make('billing-archive-');
  const pgPort = await freePort();
  const env = { SERVICES, BACKUP_DIR: backupDir, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY };
  const source = await startServer({ dataDir, pgPort, env });
  const url = dbUrl(dataDir, pgPort);
  const before: number[] = [];
  const after: number[] = [];
  let atT: Record<string, string> = {};
  let target: Date;
  try {
    // The start takes a base backup on its own: archiving alone recovers nothing.
    const base = await waitForBaseBackup(backupDir);
    expect(fs.existsSync(path.join(backupDir, 'base', base.name, 'backup_label'))).toBe(true);

    const subscriberId = await withPool(url, (pool) =>
      seedBillingSubscriber(drizzle(pool, { schema }), 'PITR reseller'),
    );
    const token = await login(source.base);
    const invoiceIds = await openInvoices(source.base, token, subscriberId, 2);
    for (let i = 0; i < 6; i++) before.push(await payInvoice(source.base, token, invoiceIds[i % 2], 3 + i));
    // Nothing is written around T: the ledger read now is the ledger at T.
    atT = await withPool(url, async (pool) => {
      const client = await pool.connect();
      try {
        return await ledgerTotals(client);
      } finally {
        client.release();
      }
    });
    await new Promise((r) => setTimeout(r, 1500));
    target = new Date();
    await new Promise((r) => setTimeout(r, 1500));
    for (let i = 0; i < 5; i++) after.push(await payInvoice(source.base, token, invoiceIds[i % 2], 7 + i));

    await withPool(url, archiveCurrentSegment);
  } finally {
    expect(await stopServer(source)).toBe(0);
  }
  expect(before.length).toBe(6);
  expect(after.length).toBe(5);
  expect(fs.readdirSync(path.join(backupDir, 'wal')).some((n) => /^[0-9A-F]{24}$/.test(n))).toBe(true);

  // A moment before the base backup finished has nothing to start from.
  const tooEarly = await runCli('restore', ['--pitr', '--to', '2000-01-01T00:00:00Z'], {
    DATA_DIR: temp.make(),
    BACKUP_DIR: backupDir,
  });
  expect(tooEarly.status).toBe(1);
  expect(tooEarly.stderr).toContain('no base backup had finished by 2000-01-01T00:00:00.000Z');

  const copyDir = temp.make();
  const restored = await expectRecoveredTo(backupDir, copyDir, target, atT);
  expect(restored.stderr).toMatch(/recovery stopping before commit/);

  // A DATA_DIR that holds a database is refused.
  const again = await runCli('restore', ['--pitr', '--to', target.toISOString()], {
    DATA_DIR: copyDir,
    BACKUP_DIR: backupDir,
  });
  expect(again.status).toBe(1);
  expect(again.stderr).toContain('already holds a database');

  const copyPort = await freePort();
  const copy = await startServer({
    dataDir: copyDir,
    pgPort: copyPort,
    env: { SERVICES, ENCRYPTION_KEY: TEST_ENCRYPTION_KEY },
  });
  try {
    await withPool(dbUrl(copyDir, copyPort), async (pool) => {
      const { rows } = await pool.query<{ id: number }>('select id from invoice_payments order by id');
      expect(rows.map((r) => r.id)).toEqual(before);
      const client = await pool.connect();
      try {
        expect(await ledgerTotals(client)).toEqual(atT);
      } finally {
        client.release();
      }
      const { rows: paid } = await pool.query<{ bad: number }>(
        `select count(*)::int as bad from invoices i
          where i.paid_amount <> coalesce((select sum(p.amount) from invoice_payments p where p.invoice_id = i.id), 0)`,
      );
      expect(paid[0].bad).toBe(0);
      // The recovered installation goes on: a new payment after the recovered ones.
      const token = await login(copy.base);
      const { rows: inv } = await pool.query<{ id: number }>('select id from invoices order by id limit 1');
      const next = await payInvoice(copy.base, token, inv[0].id, 1);
      expect(next).toBeGreaterThan(Math.max(...before));
    });
  } finally {
    expect(await stopServer(copy)).toBe(0);
  }
});
