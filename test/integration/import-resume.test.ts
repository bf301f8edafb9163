/**
 * A run whose history fails (docs/import.md, "What a run does"): the subscribers are committed
 * first, the sessions are written beside the history and stop with it, and the next run writes the
 * rest, with money and sessions reconciled and each session's usage counted once.
 */
import path from 'node:path';
import { runImport } from '../../shared/import';
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

const csv = () => runImport(t.db, { from: 'csv', source: path.join(FIXTURES, 'csv'), dryRun: false, today: TODAY });

test('a run whose history fails keeps its subscribers; the next run writes the history and reconciles', async () => {
  await t.pool.query(`
    create function import_resume_refuse() returns trigger language plpgsql as $$
    begin raise exception 'invoices refused by the test'; end $$;
    create trigger import_resume_refuse before insert on invoices for each statement
      execute function import_resume_refuse()`);
  await expect(csv()).rejects.toThrow(/batch of history rows #1\.\.: .*invoices refused by the test/);
  const first = await t.pool.query(
    `select (select count(*)::int from subscribers) as subscribers, (select count(*)::int from invoices) as invoices,
            (select count(*)::int from invoice_payments) as payments`,
  );
  expect(first.rows).toEqual([{ subscribers: 5, invoices: 0, payments: 0 }]);

  await t.pool.query(`drop trigger import_resume_refuse on invoices; drop function import_resume_refuse()`);
  const again = await csv();
  expect(again.entities.subscribers).toMatchObject({ imported: 0, unchanged: 5 });
  expect(again.entities.history).toMatchObject({ imported: 5, unchanged: 0 });
  expect(again.money.payments).toEqual({ source: 12649, notImported: 2599, after: 10050, difference: 0 });
  expect(again.money.reconciled).toBe(true);
  expect(again.entities.sessions.imported + again.entities.sessions.unchanged).toBe(2);
  expect(again.sessions?.reconciled).toBe(true);
  const usage = await t.pool.query(
    `select d.date::text, d.download_bytes + d.upload_bytes as bytes from daily_usage d order by d.date`,
  );
  expect(usage.rows).toEqual([
    { date: '2026-01-01', bytes: 1000 },
    { date: '2026-01-14', bytes: 10 },
  ]);
  const alice = await t.pool.query(`select is_online, monthly_quota_used from subscribers where username = 'alice'`);
  expect(alice.rows).toEqual([{ is_online: true, monthly_quota_used: 1010 }]);
  expect((await t.pool.query(`select count(*)::int as n from import_usage`)).rows).toEqual([{ n: 0 }]);
});
