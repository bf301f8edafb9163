/**
 * The restore drill (docs/operations.md): payments keep coming while `npm run backup` runs; the
 * backup is restored into another database and the API started on it. Every payment acknowledged
 * before the backup began is there, the ledger's sums are the manifest's, and the copy takes
 * payments of its own.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Manifest } from '../../shared/backup/file-format';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { emptyDatabase, figures, runCli } from '../helpers/backup';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

const CLIENTS = 4;

test('seed, back up while payments run, restore elsewhere, start on it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'restore-drill-'));
  const source: TestApp = await startTestApp();
  const api = client(source.baseUrl);
  const admin = adminToken();
  const reseller = await seedReseller(source.db, { name: 'drill' });
  const plan = await seedPlan(source.db, { price: 1000 });
  const invoiceIds: number[] = [];
  for (let i = 0; i < CLIENTS; i++) {
    const sub = await seedSubscriber(source.db, { resellerId: reseller.id, serviceId: plan.id });
    const inv = await api.post(
      '/api/invoices',
      { subscriber_id: sub.id, items: [{ description: 'drill', qty: 1, unit_price: 100000 }], tax_rate: 0 },
      { token: admin },
    );
    expect(inv.status).toBe(201);
    invoiceIds.push(inv.body.data.id);
  }

  // Each client pays 0.01..0.99 into its own invoice until told to stop; acknowledged = 200 seen.
  const acknowledged: { transactionId: number; at: number }[] = [];
  const failed: string[] = [];
  let sourceClosed = false;
  let stop = false;
  const payers = invoiceIds.map(async (id, n) => {
    for (let k = 0; !stop; k++) {
      const res = await api.post(
        `/api/invoices/${id}/payment`,
        { amount: Number(`0.${String(((k * 7 + n) % 99) + 1).padStart(2, '0')}`) },
        { token: admin },
      );
      if (res.status === 200) acknowledged.push({ transactionId: res.body.data.transaction_id, at: Date.now() });
      else failed.push(`${res.status} ${JSON.stringify(res.body)}`);
    }
  });
  try {
    while (acknowledged.length < 20) await new Promise((r) => setTimeout(r, 50));
    const began = Date.now();
    const before = acknowledged.filter((a) => a.at < began).map((a) => a.transactionId);
    const file = path.join(dir, 'drill.backup');
    const backup = await runCli('backup', ['--out', file, '--json'], { DATABASE_URL: source.databaseUrl });
    expect([backup.status, backup.stderr]).toEqual([0, expect.any(String)]);
    const manifest = JSON.parse(backup.stdout) as Manifest;
    const during = acknowledged.filter((a) => a.at >= began).length;
    stop = true;
    await Promise.all(payers);
    expect(failed).toEqual([]);
    // Payments did run while the backup was taken (else the drill proves nothing about consistency).
    expect(during).toBeGreaterThan(0);
    // One app per process: the source stops before the copy starts.
    await source.close();
    sourceClosed = true;

    const target = await emptyDatabase();
    const restore = await runCli('restore', [file], { DATABASE_URL: target });
    expect(restore.status).toBe(0);
    expect(restore.stdout).toContain('every figure matches the manifest');
    const restored = await figures(target);
    expect(restored.ledger).toEqual(manifest.ledger);
    expect(restored.rows.transactions).toBe(manifest.row_counts.transactions);

    const copy = await startTestApp({ databaseUrl: target });
    try {
      const { rows } = await copy.pool.query<{ id: string }>(
        'select id from transactions where id = any($1::bigint[])',
        [before],
      );
      expect(rows.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual([...before].sort((a, b) => a - b));
      // Payments and invoices agree in the copy (ARCHITECTURE section 3).
      const { rows: bad } = await copy.pool.query(
        `select i.id from invoices i where i.paid_amount <> coalesce((select sum(amount) from invoice_payments p where p.invoice_id = i.id), 0)`,
      );
      expect(bad).toEqual([]);
      const { rows: top } = await copy.pool.query<{ id: string }>('select max(id)::text as id from transactions');
      const more = await client(copy.baseUrl).post(
        `/api/invoices/${invoiceIds[0]}/payment`,
        { amount: 1 },
        { token: admin },
      );
      expect(more.status).toBe(200);
      expect(more.body.data.transaction_id).toBeGreaterThan(Number(top[0].id));
    } finally {
      await copy.close();
    }
  } finally {
    stop = true;
    await Promise.allSettled(payers);
    if (!sourceClosed) await source.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 240_000);
