/**
 * The history's indexes during a large load (docs/import.md): a history that outweighs the tables it
 * writes goes in without their secondary indexes, which are recorded, built again after the load as
 * they were, and built by the next start if the load died in between.
 */
import path from 'node:path';
import { readSource, type ImportData } from '../../shared/import';
import type { HistoryReader } from '../../shared/import/model';
import { HISTORY_TABLES } from '../../shared/import/bulk-load';
import { writeImport } from '../../shared/import/writer';
import {
  deferIndexes,
  repairDeferredIndexes,
  tryLockDeferredIndexes,
  unlockDeferredIndexes,
} from '../../shared/db/deferred-indexes';
import { secondaryIndexes } from '../../shared/db/secondary-indexes';
import { withClientAt } from '../../shared/db/client-at';
import { startTestApp, type TestApp } from '../helpers/app';

const FIXTURES = path.join(__dirname, '../fixtures/import');
const TODAY = '2026-01-15';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

/** Every index of the history tables, with its definition and whether it is valid. */
async function indexes(): Promise<{ name: string; definition: string; valid: boolean }[]> {
  const { rows } = await t.pool.query(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as definition, i.indisvalid and i.indisready as valid
       from pg_index i join pg_class c on c.oid = i.indexrelid join pg_class r on r.oid = i.indrelid
      where r.relname = any($1::text[]) order by 1`,
    [[...HISTORY_TABLES]],
  );
  return rows;
}

const recorded = async () =>
  (await t.pool.query<{ name: string }>(`select name from deferred_indexes order by name`)).rows.map((r) => r.name);

test('a history that outweighs its tables goes in without their secondary indexes, built again after as they were; the report as with them', async () => {
  const before = await indexes();
  const client = await t.pool.connect();
  // The tables the history outweighs: those it starts empty. The ledger already holds the
  // subscribers' wallet credits, written before the history: at 8 history rows its indexes stay.
  const secondary = (await secondaryIndexes(client, ['invoices', 'invoice_items', 'invoice_payments']))
    .filter((i) => !i.definition.startsWith('CREATE UNIQUE'))
    .map((i) => i.name)
    .sort();
  client.release();
  expect(secondary).toEqual(expect.arrayContaining(['invoices_number_trgm', 'invoice_payments_invoice_idx']));
  expect(secondary.length).toBeGreaterThanOrEqual(10);

  const data = await readSource({ from: 'csv', source: path.join(FIXTURES, 'csv') });
  const during: string[][] = [];
  let pass = 0;
  const history: HistoryReader = {
    async *batches(size) {
      pass++;
      for await (const batch of data.history.batches(size)) {
        // The writing pass: what is there while its batches go in.
        if (pass === 2) during.push((await indexes()).map((i) => i.name));
        yield batch;
      }
    },
  };
  const imported: ImportData = { ...data, history };
  const report = await writeImport(t.db, imported, {
    dryRun: false,
    today: TODAY,
    historyBatchSize: 3,
    bulkHistoryFrom: 1,
  });

  expect(report.entities.history).toMatchObject({ read: 8, imported: 5 });
  expect(report.money.reconciled).toBe(true);
  expect(during.length).toBeGreaterThan(0);
  for (const names of during) {
    expect(names.filter((n) => secondary.includes(n))).toEqual([]);
    // The checks stay: the primary keys and the number's uniqueness.
    expect(names).toEqual(expect.arrayContaining(['invoices_pkey', 'invoices_number_uq', 'transactions_invoice_idx']));
  }
  expect(await indexes()).toEqual(before);
  expect(await recorded()).toEqual([]);
  // Rebuilt, the subscriber's index finds the imported invoices.
  const c = await t.pool.connect();
  try {
    await c.query('set enable_seqscan = off');
    const plan = await c.query(
      `explain select count(*) from invoices where subscriber_id = (select min(subscriber_id) from invoices)`,
    );
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('invoices_subscriber_idx');
  } finally {
    c.release();
  }

  // A second run finds the history here: nothing outweighed, nothing left out, nothing written.
  const again = await writeImport(t.db, await readSource({ from: 'csv', source: path.join(FIXTURES, 'csv') }), {
    dryRun: false,
    today: TODAY,
    bulkHistoryFrom: 1,
  });
  expect(again.entities.history).toMatchObject({ imported: 0, unchanged: 5 });
  expect(await indexes()).toEqual(before);
});

test('a start after a load that died in between builds what it recorded, invalid ones again; not while a load holds the lock', async () => {
  const before = await indexes();
  const load = await t.pool.connect();
  try {
    expect(await tryLockDeferredIndexes(load)).toBe(true);
    expect(await deferIndexes(load, ['invoice_items', 'invoice_payments'])).toEqual([
      'invoice_items_invoice_idx',
      'invoice_payments_invoice_idx',
    ]);
    // What a CREATE INDEX CONCURRENTLY that failed leaves behind.
    await t.pool.query(`create index invoice_payments_invoice_idx on invoice_payments (invoice_id)`);
    await t.pool.query(
      `update pg_index set indisvalid = false where indexrelid = 'invoice_payments_invoice_idx'::regclass`,
    );
    // The load is still running: a start leaves its indexes to it.
    expect(await withClientAt(t.databaseUrl, repairDeferredIndexes)).toEqual([]);
    expect(await recorded()).toEqual(['invoice_items_invoice_idx', 'invoice_payments_invoice_idx']);
    await unlockDeferredIndexes(load);
  } finally {
    // The load's session ends as a dead process's would.
    load.release(new Error('load stopped'));
  }
  // What a start does after its migrations (database-setup.ts).
  expect(await withClientAt(t.databaseUrl, repairDeferredIndexes)).toEqual([
    'invoice_items_invoice_idx',
    'invoice_payments_invoice_idx',
  ]);
  expect(await indexes()).toEqual(before);
  expect(await recorded()).toEqual([]);
  expect(await withClientAt(t.databaseUrl, repairDeferredIndexes)).toEqual([]);
});
