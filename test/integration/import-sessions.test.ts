/**
 * The session writer (shared/import/sessions.ts): a source that repeats its unique ids across chunks
 * (two chunks are written at once, and each inserts its ids in one order, so two chunks holding the
 * same ids in opposite orders wait for each other instead of deadlocking), and a run stopped after
 * some chunks, whose staged daily usage the next run moves into daily_usage; radacct's two B-trees
 * dropped for a large load and built again after, and built again at a start after a load stopped
 * in between.
 */
import {
  RADACCT_BULK_INDEXES,
  repairRadacctIndexes,
  tryLockRadacctIndexes,
  unlockRadacctIndexes,
} from '../../shared/db/radacct-indexes';
import { importSessions, type ImportSession, type SessionReader } from '../../shared/import/sessions';
import { withClientAt } from '../../shared/db/client-at';
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

/**
 * A source of `pairs` pairs of chunks, the second of each repeating the first's ids in the opposite
 * order (`between` runs between the two).
 */
const repeatingReader = (
  username: string,
  pairs: number,
  size: number,
  o: { estimate?: () => Promise<number>; between?: () => Promise<void> } = {},
): SessionReader => ({
  estimate: o.estimate,
  async *chunks() {
    for (let p = 0; p < pairs; p++) {
      const ids = Array.from({ length: size }, (_, k) => session(p * size + k, username));
      yield ids;
      await o.between?.();
      yield [...ids].reverse();
    }
  },
});

/** Imports every session of `reader` for one subscriber, then checks each id went in once. */
async function importEachOnce(reader: SessionReader, username: string, pairs: number, size: number) {
  const totals = await importSessions(t.db, reader, {
    dryRun: false,
    accepted: new Set([username]),
    listed: new Set([username]),
    skip: () => undefined,
    retainedFrom: null,
  });
  expect(totals).toMatchObject({
    read: 2 * pairs * size,
    imported: pairs * size,
    unchanged: pairs * size,
    skipped: 0,
    reconciled: true,
  });
  const { rows } = await t.pool.query(
    `select count(*)::int as n, count(distinct acctuniqueid)::int as ids, sum(acctinputoctets)::bigint::text as input
       from radacct where username = $1`,
    [username],
  );
  // input = k for session k.
  expect(rows).toEqual([
    { n: pairs * size, ids: pairs * size, input: String(((pairs * size - 1) * pairs * size) / 2) },
  ]);
}

test('chunks repeating each other’s ids in opposite orders are written at once, each id once', async () => {
  await importEachOnce(repeatingReader('dup', 6, 2000), 'dup', 6, 2000);
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

const indexState = async () =>
  (
    await t.pool.query<{ name: string; valid: boolean }>(
      `select c.relname as name, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
        where c.relname = any($1::text[]) order by 1`,
      [RADACCT_BULK_INDEXES.map((i) => i.name)],
    )
  ).rows;
const ALL_VALID = [
  { name: 'radacct_start_idx', valid: true },
  { name: 'radacct_username_start_idx', valid: true },
];

test('a load large beside radacct drops its two B-trees for the load and builds them again, valid, after; every half of the usage moved', async () => {
  const plan = await seedPlan(t.db, { price: 1000 });
  const reseller = await seedReseller(t.db, { name: 'Bulk load' });
  const users = Array.from({ length: 8 }, (_, k) => `bulk${k}`);
  const { rows: subs } = await t.pool.query<{ id: number; username: string }>(
    `insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date)
     select u, 'x', $2, $3, '2099-01-01' from unnest($1::text[]) as u returning id, username`,
    [users, plan.id, reseller.id],
  );
  const during: { name: string; valid: boolean }[][] = [];
  const reader: SessionReader = {
    // Claimed far larger than radacct: the rule drops the indexes.
    estimate: async () => 1_000_000,
    async *chunks() {
      during.push(await indexState());
      for (let c = 0; c < 4; c++) yield users.map((u, k) => session(c * 100 + k, u));
    },
  };
  const totals = await importSessions(t.db, reader, {
    dryRun: false,
    accepted: new Set(users),
    listed: new Set(users),
    skip: () => undefined,
    retainedFrom: null,
    chunkSize: users.length,
    today: '2026-01-20',
  });
  expect(totals).toMatchObject({ imported: 32, unchanged: 0, reconciled: true });
  expect(during).toEqual([[]]);
  expect(await indexState()).toEqual(ALL_VALID);
  // The rebuilt index finds every imported row.
  const c = await t.pool.connect();
  try {
    await c.query('set enable_seqscan = off');
    const { rows } = await c.query(
      `select count(*)::int as n from radacct where username = any($1::text[]) and acctstarttime >= to_timestamp($2)`,
      [users, START],
    );
    expect(rows).toEqual([{ n: 32 }]);
  } finally {
    c.release();
  }
  // input = c * 100 + k, output 2 for each of the four sessions of user k.
  const usage = await t.pool.query(
    `select s.username, sum(d.download_bytes)::int as down, sum(d.upload_bytes)::int as up
       from daily_usage d join subscribers s on s.id = d.subscriber_id
      where d.subscriber_id = any($1::int[]) group by 1 order by 1`,
    [subs.map((s) => s.id)],
  );
  expect(usage.rows).toEqual(users.map((u, k) => ({ username: u, down: 8, up: 600 + 4 * k })));
  expect((await t.pool.query(`select count(*)::int as n from import_usage`)).rows).toEqual([{ n: 0 }]);
});

test('a start after a load stopped in between builds the missing and the invalid index again; not while a load holds them', async () => {
  await t.pool.query('drop index radacct_start_idx');
  // What a CREATE INDEX CONCURRENTLY that failed leaves behind.
  await t.pool.query(
    `update pg_index set indisvalid = false where indexrelid = 'radacct_username_start_idx'::regclass`,
  );
  const loading = await t.pool.connect();
  try {
    expect(await tryLockRadacctIndexes(loading)).toBe(true);
    expect(await withClientAt(t.databaseUrl, repairRadacctIndexes)).toEqual([]);
    expect(await indexState()).toEqual([{ name: 'radacct_username_start_idx', valid: false }]);
    await unlockRadacctIndexes(loading);
  } finally {
    loading.release();
  }
  // What a start does after its migrations (database-setup.ts).
  expect((await withClientAt(t.databaseUrl, repairRadacctIndexes)).sort()).toEqual([
    'radacct_start_idx',
    'radacct_username_start_idx',
  ]);
  expect(await indexState()).toEqual(ALL_VALID);
});

test('an import that does not drop them builds those missing before its load', async () => {
  await t.pool.query('drop index radacct_username_start_idx');
  const reader: SessionReader = {
    async *chunks() {
      yield [session(1, 'small')];
    },
  };
  await importSessions(t.db, reader, {
    dryRun: false,
    accepted: new Set(['small']),
    listed: new Set(['small']),
    skip: () => undefined,
    retainedFrom: null,
  });
  expect(await indexState()).toEqual(ALL_VALID);
});

const stageTables = async () =>
  (
    await t.pool.query<{ n: number }>(
      `select count(*)::int as n from pg_class where relname like 'import\\_radacct\\_stage\\_%'`,
    )
  ).rows[0].n;

test('a bulk load stages its sessions by range of unique id: ids repeated across chunks go in once, the ranges are dropped after', async () => {
  const during: number[] = [];
  const reader = repeatingReader('staged', 3, 500, {
    estimate: async () => 3_000_000,
    between: async () => {
      during.push(await stageTables());
    },
  });
  await importEachOnce(reader, 'staged', 3, 500);
  // 3,000,000 sessions: six ranges, there while the chunks are read, gone after.
  expect(during).toEqual([6, 6, 6]);
  expect(await stageTables()).toBe(0);
  expect(await indexState()).toEqual(ALL_VALID);
});

test('a bulk load that fails while reading drops its ranges and builds the indexes; the next one writes every session once', async () => {
  const plan = await seedPlan(t.db, { price: 1000 });
  const reseller = await seedReseller(t.db, { name: 'Failed bulk load' });
  const { rows: subs } = await t.pool.query<{ id: number }>(
    `insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date)
     values ('bulkfail', 'x', $1, $2, '2099-01-01') returning id`,
    [plan.id, reseller.id],
  );
  const all = Array.from({ length: 400 }, (_, k) => session(k * 600, 'bulkfail'));
  const ctx = {
    dryRun: false,
    accepted: new Set(['bulkfail']),
    listed: new Set(['bulkfail']),
    skip: () => undefined,
    retainedFrom: null,
    today: '2026-01-20',
  };
  const failing: SessionReader = {
    estimate: async () => 1_000_000,
    async *chunks() {
      yield all.slice(0, 200);
      throw new Error('source gone');
    },
  };
  await expect(importSessions(t.db, failing, ctx)).rejects.toThrow('source gone');
  // Staged sessions never reached radacct: the failed load wrote none.
  expect((await t.pool.query(`select count(*)::int as n from radacct where username = 'bulkfail'`)).rows).toEqual([
    { n: 0 },
  ]);
  expect(await stageTables()).toBe(0);
  expect(await indexState()).toEqual(ALL_VALID);

  const whole: SessionReader = {
    estimate: async () => 1_000_000,
    async *chunks() {
      yield all.slice(0, 200);
      yield all.slice(200);
    },
  };
  expect(await importSessions(t.db, whole, ctx)).toMatchObject({ imported: 400, unchanged: 0, reconciled: true });
  // A second run (a bulk load again: radacct is small beside the estimate) finds every one of them.
  expect(await importSessions(t.db, whole, ctx)).toMatchObject({ imported: 0, unchanged: 400, reconciled: true });
  const usage = await t.pool.query(
    `select sum(download_bytes)::int as down, sum(upload_bytes)::bigint::text as up from daily_usage where subscriber_id = $1`,
    [subs[0].id],
  );
  // input = k * 600 (k 0..399), output 2: download is the output, each session counted once.
  expect(usage.rows).toEqual([{ down: 800, up: String((600 * 399 * 400) / 2) }]);
});
