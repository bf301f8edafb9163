/**
 * CSV downloads and report reads that end badly: a client that goes away mid-download gives its
 * export's database connection back (COPY for the ledger, a cursor for the reports), and a report
 * whose queries fail leaves no promise rejected unhandled (Node ends the process on one).
 */
import http from 'node:http';
import { sql } from 'drizzle-orm';
import { readPool } from '../../shared/db/client';
import { answer } from '../../services/reports/output';
import { adminToken, ensureTokenManager, startTestApp, type TestApp } from '../helpers/app';
import { seedReseller } from './billing-fixtures';

let t: TestApp;
let resellerId = 0;
const admin = adminToken();
/** Rows enough that a download is still being written when the client leaves (megabytes of CSV). */
const ROWS = 60_000;

beforeAll(async () => {
  t = await startTestApp();
  await ensureTokenManager(t.baseUrl, admin);
  resellerId = (await seedReseller(t.db, { name: 'exports' })).id;
  await t.db.execute(sql`
    insert into transactions (type, amount, currency, reseller_id, method, notes)
    select 'reseller_credit', 100, 'USD', ${resellerId}, 'cash', repeat('a long note ', 10)
      from generate_series(1, ${ROWS})`);
});
afterAll(async () => {
  await t?.close();
});

/** Connections of the app's pool that are checked out (held by a request or an export). */
const checkedOut = () => readPool().totalCount - readPool().idleCount;

/** GETs `path` and leaves after the first chunk of the body; resolves with the status seen. */
function leaveMidDownload(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${admin}` } }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
  });
}

/** Waits up to 5 s for every connection to be back in the pool; the number still out at the end. */
async function settledCheckedOut(): Promise<number> {
  for (let i = 0; i < 50 && checkedOut() > 0; i++) await new Promise((r) => setTimeout(r, 100));
  return checkedOut();
}

describe('a client that leaves mid-download', () => {
  it('gives the ledger export its connection back (COPY)', async () => {
    for (let i = 0; i < 3; i++) expect(await leaveMidDownload('/api/transactions?format=csv')).toBe(200);
    expect(await settledCheckedOut()).toBe(0);
    const whole = await fetch(`${t.baseUrl}/api/transactions?format=csv`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect((await whole.text()).trim().split('\r\n')).toHaveLength(ROWS + 1);
  });

  it('gives a report export its connection back (cursor)', async () => {
    const path = `/api/reports/reseller-statement?reseller_id=${resellerId}&format=csv`;
    for (let i = 0; i < 3; i++) expect(await leaveMidDownload(path)).toBe(200);
    expect(await settledCheckedOut()).toBe(0);
  });
});

describe('every CSV', () => {
  it('starts with the UTF-8 byte order mark, so that Excel reads Arabic as Arabic', async () => {
    for (const path of [
      '/api/transactions?format=csv',
      `/api/reports/reseller-statement?reseller_id=${resellerId}&format=csv`,
    ]) {
      const res = await fetch(`${t.baseUrl}${path}`, { headers: { authorization: `Bearer ${admin}` } });
      const bytes = Buffer.from(await res.arrayBuffer());
      expect([path, [...bytes.subarray(0, 3)]]).toEqual([path, [0xef, 0xbb, 0xbf]]);
      expect(bytes.subarray(3, 5).toString()).not.toBe('\ufeff');
    }
  });
});

describe('a report whose queries fail', () => {
  it('rejects its request and leaves no rejection unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failing = {
        name: 'failing',
        text: 'select 1 / 0 as n',
        values: [],
        view: (row: { n: number }) => ({ n: row.n }),
        columns: ['n'],
        extra: () =>
          new Promise<Record<string, unknown>>((_, reject) => setTimeout(() => reject(new Error('extra')), 20)),
      };
      // Whichever fails first fails the request (the query or the totals, by the machine's pace);
      // what matters is that the other's rejection is handled too.
      const failed = /division by zero|extra/;
      await expect(answer({}, {}, failing)).rejects.toThrow(failed);
      await expect(answer({}, {}, { ...failing, page: { page: 1, limit: 10 } })).rejects.toThrow(failed);
      await new Promise((r) => setTimeout(r, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
