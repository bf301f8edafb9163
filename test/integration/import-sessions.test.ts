/**
 * The session writer (shared/import/sessions.ts): a source that repeats its unique ids across chunks
 * (two chunks are written at once, and each inserts its ids in one order, so two chunks holding the
 * same ids in opposite orders wait for each other instead of deadlocking), and a run stopped after
 * some chunks, whose staged daily usage the next run moves into daily_usage.
 */
import { importSessions, type ImportSession, type SessionReader } from '../../shared/import/sessions';
import { startTestApp, type TestApp } from '../helpers/app';
import { importSession } from '../helpers/import-session';
import { seedPlan, seedReseller } from './billing-fixtures';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const START = Date.parse('2026-01-10T00:00:00Z') / 1000;

const session = (k: number, username = 'dup'): ImportSession =>
  importSession({
    uniqueId: `${username}-${String(k).padStart(6, '0')}`,
    sessionId: `s${k}`,
    username,
    start: START + k,
    update: START + k + 60,
    stop: START + k + 60,
    input: String(k),
    output: '2',
    terminateCause: 'User-Request',
  });

test('chunks repeating each other’s ids in opposite orders are written at once, each id once', async () => {
  const PAIRS = 6;
  const SIZE = 2000;
  const reader: SessionReader = {
    async *chunks() {
      for (let p = 0; p < PAIRS; p++) {
        const ids = Array.from({ length: SIZE }, (_, k) => session(p * SIZE + k));
        yield ids;
        yield [...ids].reverse();
      }
    },
  };
  const totals = await importSessions(t.db, reader, {
    dryRun: false,
    accepted: new Set(['dup']),
    listed: new Set(['dup']),
    skip: () => undefined,
    retainedFrom: null,
  });
  expect(totals).toMatchObject({
    read: 2 * PAIRS * SIZE,
    imported: PAIRS * SIZE,
    unchanged: PAIRS * SIZE,
    skipped: 0,
    reconciled: true,
  });
  const { rows } = await t.pool.query(
    `select count(*)::int as n, count(distinct acctuniqueid)::int as ids from radacct where username = 'dup'`,
  );
  expect(rows).toEqual([{ n: PAIRS * SIZE, ids: PAIRS * SIZE }]);
});

test('a run stopped after some chunks leaves their usage staged; the next run moves it into daily_usage once', async () => {
  const plan = await seedPlan(t.db, { price: 1000 });
  const reseller = await seedReseller(t.db, { name: 'Stopped run' });
  const { rows: subs } = await t.pool.query<{ id: number }>(
    `insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date)
     values ('stopped', 'x', $1, $2, '2099-01-01') returning id`,
    [plan.id, reseller.id],
  );
  const all = Array.from({ length: 300 }, (_, k) => session(k * 600, 'stopped'));
  const chunks = [all.slice(0, 100), all.slice(100, 200), all.slice(200)];
  const ctx = {
    dryRun: false,
    accepted: new Set(['stopped']),
    listed: new Set(['stopped']),
    skip: () => undefined,
    retainedFrom: null,
    chunkSize: 100,
    today: '2026-01-20',
  };
  const failing: SessionReader = {
    async *chunks() {
      yield chunks[0];
      yield chunks[1];
      throw new Error('source gone');
    },
  };
  await expect(importSessions(t.db, failing, ctx)).rejects.toThrow('source gone');
  const staged = await t.pool.query(`select count(*)::int as n from import_usage where username = 'stopped'`);
  expect(staged.rows[0].n).toBeGreaterThan(0);

  const whole: SessionReader = {
    async *chunks() {
      yield* chunks;
    },
  };
  const totals = await importSessions(t.db, whole, ctx);
  expect(totals).toMatchObject({ imported: 100, unchanged: 200, reconciled: true });
  // input = k * 600 (k 0..299), output 2: download is the output.
  const usage = await t.pool.query(
    `select sum(download_bytes)::int as down, sum(upload_bytes)::int as up from daily_usage where subscriber_id = $1`,
    [subs[0].id],
  );
  expect(usage.rows).toEqual([{ down: 600, up: (600 * 299 * 300) / 2 }]);
  expect((await t.pool.query(`select count(*)::int as n from import_usage`)).rows).toEqual([{ n: 0 }]);
  const counters = await t.pool.query(`select monthly_quota_used from subscribers where id = $1`, [subs[0].id]);
  expect(counters.rows).toEqual([{ monthly_quota_used: 600 + (600 * 299 * 300) / 2 }]);

  // Once moved, a further run moves nothing again.
  await importSessions(t.db, whole, ctx);
  const again = await t.pool.query(
    `select sum(download_bytes)::int as down from daily_usage where subscriber_id = $1`,
    [subs[0].id],
  );
  expect(again.rows).toEqual([{ down: 600 }]);
});
