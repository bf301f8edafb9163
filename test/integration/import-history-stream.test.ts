/**
 * The history streamed (docs/import.md, "Sixth round"): the writer reads the source's history in
 * batches, in two passes (one that plans the whole set, one that writes it), and commits each batch
 * before it reads the next, so the rows are never held whole; the report is the one a single batch
 * gives, a duplicate id in another batch included, and a second run writes nothing.
 */
import path from 'node:path';
import { readSource, type ImportData } from '../../shared/import';
import type { HistoryReader } from '../../shared/import/model';
import { writeImport } from '../../shared/import/writer';
import { startTestApp, type TestApp } from '../helpers/app';
import { rowCounts, withoutTiming } from './import-helpers';

const FIXTURES = path.join(__dirname, '../fixtures/import');
const TODAY = '2026-01-15';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

interface Handed {
  pass: number;
  rows: number;
  /** Invoices in our tables when the batch was handed out. */
  invoices: number;
}

/** The CSV fixture, its history through a reader that records each batch it hands out. */
async function recorded(handed: Handed[]): Promise<ImportData> {
  const data = await readSource({ from: 'csv', source: path.join(FIXTURES, 'csv') });
  const inner = data.history;
  let pass = 0;
  const history: HistoryReader = {
    async *batches(size) {
      pass++;
      for await (const batch of inner.batches(size)) {
        expect(batch.length).toBeLessThanOrEqual(size);
        const { rows } = await t.pool.query(`select count(*)::int as n from invoices`);
        handed.push({ pass, rows: batch.length, invoices: rows[0].n });
        yield batch;
      }
    },
  };
  return { ...data, history };
}

const run = async (dryRun: boolean, historyBatchSize: number, handed: Handed[] = []) =>
  writeImport(t.db, await recorded(handed), { dryRun, historyBatchSize, today: TODAY });

test('batches of one give the report of a single batch, the duplicate id in the next batch skipped', async () => {
  const before = await rowCounts(t.pool);
  const handed: Handed[] = [];
  const ones = await run(true, 1, handed);
  expect(handed.map((h) => h.rows)).toEqual(Array(16).fill(1));
  const whole = await run(true, 1000);
  expect(withoutTiming(ones)).toEqual(withoutTiming(whole));
  expect(ones.entities.history).toEqual({ read: 8, imported: 5, unchanged: 0, skipped: 3, conflicting: 0 });
  expect(ones.reasons).toContainEqual({
    entity: 'history',
    outcome: 'skipped',
    reason: 'duplicate id in the source',
    count: 1,
    examples: ['7'],
  });
  expect(await rowCounts(t.pool)).toEqual(before);
});

test('each batch is written before the next is read; the report is the dry run’s; a second run writes nothing', async () => {
  const dry = await run(true, 3);
  const handed: Handed[] = [];
  const real = await run(false, 3, handed);
  // Two passes over batches of 3, 3 and 2 rows: the first plans (nothing written yet); in the
  // second, batch 1 (ids 1-3) is committed before batch 2 is read, batch 2 (carol's id 6) before batch 3.
  expect(handed).toEqual([
    { pass: 1, rows: 3, invoices: 0 },
    { pass: 1, rows: 3, invoices: 0 },
    { pass: 1, rows: 2, invoices: 0 },
    { pass: 2, rows: 3, invoices: 0 },
    { pass: 2, rows: 3, invoices: 3 },
    { pass: 2, rows: 2, invoices: 4 },
  ]);
  expect(withoutTiming(real)).toEqual(withoutTiming(dry));
  expect(real.money.payments).toEqual({ source: 12649, notImported: 2599, after: 10050, difference: 0 });
  const written = await t.pool.query(
    `select count(*)::int as invoices, sum(paid_amount)::int as paid,
            (select sum(amount)::int from invoice_payments) as payments from invoices`,
  );
  expect(written.rows).toEqual([{ invoices: 5, paid: 10050, payments: 10050 }]);

  const before = await rowCounts(t.pool);
  const again = await run(false, 3);
  expect(again.entities.history).toEqual({ read: 8, imported: 0, unchanged: 5, skipped: 3, conflicting: 0 });
  expect(again.money.payments).toEqual({ source: 12649, notImported: 2599, after: 10050, difference: 0 });
  expect(await rowCounts(t.pool)).toEqual(before);
});
