/**
 * Import from a daloRADIUS database in MariaDB (fixtures follow daloRADIUS's schema): passwords as
 * stored, plans from billing plans and groups, resellers from operators, Expiration, MAC, static
 * address, disabled users, billing history; dry run, second run, reconciliation.
 */
import mysql from 'mysql2/promise';
import { ntHash } from '../../shared/access/radius-rows';
import { runImport, type ImportReport } from '../../shared/import';
import { startTestApp, type TestApp } from '../helpers/app';
import { mariadbFixture, numberIndexWhole, rowCounts, withoutTiming } from './import-helpers';

let t: TestApp;
let source: { url: string; drop(): Promise<void> };
beforeAll(async () => {
  source = await mariadbFixture('daloradius');
  t = await startTestApp();
});
afterAll(async () => {
  await source?.drop();
  await t?.close();
});

const dalo = (dryRun: boolean) =>
  runImport(t.db, {
    from: 'daloradius',
    source: source.url,
    dryRun,
    today: '2026-01-15',
    connection: { allowPrivateTargets: true },
  });

/** One month of the sessions' reconciliation: source, not imported and ours, as [sessions, octets]. */
const month = (m: string, source: [number, string], skipped: [number, string], ours: [number, string]) => ({
  month: m,
  source: { sessions: source[0], octets: source[1] },
  notImported: { sessions: skipped[0], octets: skipped[1] },
  ours: { sessions: ours[0], octets: ours[1] },
  difference: { sessions: 0, octets: '0' },
});

describe('import from daloRADIUS', () => {
  let dry: ImportReport;

  test('a dry run writes nothing', async () => {
    const before = await rowCounts(t.pool);
    dry = await dalo(true);
    expect(await rowCounts(t.pool)).toEqual(before);
    expect(dry.entities.subscribers).toEqual({ read: 8, imported: 6, unchanged: 0, skipped: 2, conflicting: 0 });
    expect(dry.entities.plans).toMatchObject({ read: 4, imported: 4 });
    expect(dry.entities.resellers).toEqual({ read: 3, imported: 3, unchanged: 0, skipped: 1, conflicting: 0 });
    expect(dry.entities.history).toEqual({ read: 6, imported: 4, unchanged: 0, skipped: 2, conflicting: 0 });
  });

  test('the real run imports what the dry run said, with passwords as stored', async () => {
    // A session that has read invoices holds a lock on each of their indexes until it ends: the
    // batch cannot switch the number index's fast update on, and goes on without (withBulkTrigrams).
    const reader = await t.pool.connect();
    let real: ImportReport;
    try {
      await reader.query('begin');
      await reader.query('select count(*) from invoices');
      real = await dalo(false);
    } finally {
      await reader.query('rollback');
      reader.release();
    }
    expect(withoutTiming(real)).toEqual(withoutTiming(dry));
    expect(real.money.payments).toEqual({ source: 11715, notImported: 2225, after: 9490, difference: 0 });
    expect(real.money.reconciled).toBe(true);

    const subs = await t.pool.query(
      `select s.username, s.status, s.expiry_date::text as expiry, host(s.static_ip) as ip, s.mac_address as mac, s.full_name,
              s.phone, p.name as plan, p.mac_binding, r.name as reseller
         from subscribers s join services p on p.id = s.service_id join resellers r on r.id = s.reseller_id order by s.username`,
    );
    const by = Object.fromEntries(subs.rows.map((r) => [r.username, r]));
    expect(Object.keys(by)).toEqual(['dalo.clear', 'dalo.legacy', 'dalo.mac', 'dalo.md5', 'dalo.nt', 'dalo.off']);
    expect(by['dalo.clear']).toMatchObject({
      expiry: '2030-01-30',
      ip: '10.20.0.5',
      full_name: 'Clara Clear',
      phone: '+15550001',
      plan: 'Home 10M',
      reseller: 'kiosk',
    });
    expect(by['dalo.nt']).toMatchObject({ expiry: '2030-02-27', plan: 'Business 50M', reseller: 'administrator' });
    expect(by['dalo.md5']).toMatchObject({ expiry: '2030-03-15', reseller: 'kiosk' });
    expect(by['dalo.mac']).toMatchObject({ mac: '00:11:22:33:44:55', plan: 'Weekly 5M', mac_binding: true });
    expect(by['dalo.mac'].reseller).toBe('Imported from daloradius');
    expect(by['dalo.off']).toMatchObject({ status: 'inactive' });
    expect(by['dalo.legacy']).toMatchObject({ plan: 'legacy' });

    const pw = async (u: string) =>
      (
        await t.pool.query(
          `select attribute, value from radcheck where username = $1 and attribute like '%Password' order by attribute`,
          [u],
        )
      ).rows;
    expect(await pw('dalo.clear')).toEqual([{ attribute: 'NT-Password', value: await ntHash('clear-secret') }]);
    expect(await pw('dalo.nt')).toEqual([{ attribute: 'NT-Password', value: '9BE9DDDA7F13BACA64215B589A5A4031' }]);
    expect(await pw('dalo.md5')).toEqual([{ attribute: 'MD5-Password', value: 'ff12cfc27d7a2b16f1f2572021225911' }]);
    expect(await pw('dalo.legacy')).toEqual([{ attribute: 'NT-Password', value: await ntHash('legacy-secret') }]);
    const mac = await t.pool.query(
      `select value from radcheck where username = 'dalo.mac' and attribute = 'Calling-Station-Id'`,
    );
    expect(mac.rows).toEqual([{ value: '00:11:22:33:44:55' }]);
    const reject = await t.pool.query(
      `select value from radcheck where username = 'dalo.off' and attribute = 'Auth-Type'`,
    );
    expect(reject.rows).toEqual([{ value: 'Reject' }]);
    const rate = await t.pool.query(
      `select g.value from radgroupreply g join services p on g.groupname = 'plan_' || p.id where p.name = 'Home 10M'`,
    );
    expect(rate.rows).toEqual([{ value: '10M/10M' }]);

    // The invoices' search_text comes from the import's own insert (migration 0029 runs the trigger
    // only for rows without it): the trigger's expression, which the broad invoice search reads.
    const search = await t.pool.query(
      `select s.username, i.search_text,
              lower(i.invoice_number) || chr(1) || lower(s.username) || chr(1) || coalesce(lower(s.full_name), '') as expected
         from invoices i join subscribers s on s.id = i.subscriber_id order by i.id`,
    );
    expect(search.rows).toHaveLength(4);
    for (const r of search.rows) expect(r.search_text).toBe(r.expected);
    const clara = search.rows.find((r) => r.username === 'dalo.clear');
    expect(clara?.search_text.split('\u0001')).toEqual([
      expect.stringMatching(/^inv-2024-\d{6}$/),
      'dalo.clear',
      'clara clear',
    ]);

    // The real run met a session holding a lock on invoices' indexes (below): its batch wrote the
    // number trigrams row by row instead of waiting, and the index is whole either way.
    expect(await numberIndexWhole(t.pool, 'inv-')).toBe(4);
  });

  test('accounting history comes along: sessions, daily usage, the month counted, the open session live', async () => {
    expect(dry.entities.sessions).toEqual({ read: 7, imported: 5, unchanged: 0, skipped: 2, conflicting: 0 });
    expect(dry.sessions).toEqual({
      months: [
        month('2025-11', [2, '1100'], [1, '100'], [1, '1000']),
        month('2025-12', [2, '16000'], [0, '0'], [2, '16000']),
        month('2026-01', [3, '34014'], [1, '14'], [2, '34000']),
      ],
      reconciled: true,
    });
    const reasons = Object.fromEntries(
      dry.reasons.filter((r) => r.entity === 'sessions').map((r) => [r.reason, r.examples]),
    );
    expect(reasons).toEqual({ 'its subscriber is not imported': ['dalo.badexp'], 'unknown subscriber': ['ghost'] });

    const sessions = await t.pool.query(
      `select acctuniqueid, username, acctstoptime is null as open, acctinputoctets, acctoutputoctets,
              host(framedipaddress) as ip, framedipv6prefix::text as ip6, callingstationid, acctterminatecause,
              acctupdatetime > now() - interval '10 minutes' as updated_now
         from radacct order by acctuniqueid`,
    );
    expect(sessions.rows.map((r) => r.acctuniqueid.slice(-1))).toEqual(['1', '2', '3', '4', '5']);
    expect(sessions.rows[3]).toEqual({
      acctuniqueid: 'a1000000000000000000000000000004',
      username: 'dalo.clear',
      open: true,
      acctinputoctets: 400,
      acctoutputoctets: 600,
      ip: '10.20.0.5',
      ip6: '2001:db8:1::/64',
      callingstationid: 'AA:00:00:00:00:01',
      acctterminatecause: null,
      // The stale-session rule counts from the import, not from the last interim before the move.
      updated_now: true,
    });
    expect(sessions.rows[0]).toMatchObject({ open: false, updated_now: false, acctterminatecause: 'User-Request' });

    const usage = await t.pool.query(
      `select s.username, d.date::text, d.download_bytes, d.upload_bytes
         from daily_usage d join subscribers s on s.id = d.subscriber_id order by 1, 2`,
    );
    expect(usage.rows).toEqual([
      { username: 'dalo.clear', date: '2025-12-01', download_bytes: 5000, upload_bytes: 1000 },
      { username: 'dalo.clear', date: '2025-12-21', download_bytes: 8000, upload_bytes: 2000 },
      { username: 'dalo.clear', date: '2026-01-10', download_bytes: 30000, upload_bytes: 3000 },
      { username: 'dalo.clear', date: '2026-01-15', download_bytes: 600, upload_bytes: 400 },
      { username: 'dalo.nt', date: '2025-11-05', download_bytes: 900, upload_bytes: 100 },
    ]);
    const counters = await t.pool.query(
      `select username, is_online, host(ip_address) as ip, daily_quota_used, monthly_quota_used, usage_day::text
         from subscribers where username in ('dalo.clear', 'dalo.nt') order by username`,
    );
    expect(counters.rows).toEqual([
      {
        username: 'dalo.clear',
        is_online: true,
        ip: '10.20.0.5',
        daily_quota_used: 1000,
        monthly_quota_used: 34000,
        usage_day: '2026-01-15',
      },
      {
        username: 'dalo.nt',
        is_online: false,
        ip: null,
        daily_quota_used: 0,
        monthly_quota_used: 0,
        usage_day: '2026-01-15',
      },
    ]);
    // Later interims of the open session count from its imported totals.
    const seen = await t.pool.query(
      `select u.input, u.output from usage_seen u join radacct r using (radacctid) where r.acctstoptime is null`,
    );
    expect(seen.rows).toEqual([{ input: 400, output: 600 }]);
    const queued = await t.pool.query(`select count(*)::int as n from fup_queue`);
    expect(queued.rows[0].n).toBe(2);
  });

  test('a second run changes nothing', async () => {
    const before = await rowCounts(t.pool);
    const again = await dalo(false);
    expect(await rowCounts(t.pool)).toEqual(before);
    expect(again.entities.subscribers).toMatchObject({ imported: 0, unchanged: 6 });
    expect(again.entities.history).toMatchObject({ imported: 0, unchanged: 4 });
    expect(again.money.reconciled).toBe(true);
    expect(again.entities.sessions).toMatchObject({ read: 7, imported: 0, unchanged: 5, skipped: 2 });
    expect(again.sessions).toEqual(dry.sessions);
  });

  test('a session added to the source since comes in beside those already here, counted once', async () => {
    const conn = await mysql.createConnection({ uri: source.url });
    try {
      await conn.query(`insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime,
                          acctupdatetime, acctstoptime, acctsessiontime, acctinputoctets, acctoutputoctets)
                        values ('s9', 'a1000000000000000000000000000009', 'dalo.nt', '192.0.2.1', '2026-01-12 10:00:00',
                          '2026-01-12 11:00:00', '2026-01-12 11:00:00', 3600, 70, 700)`);
    } finally {
      await conn.end();
    }
    const planned = await dalo(true);
    expect(planned.entities.sessions).toMatchObject({ read: 8, imported: 1, unchanged: 5, skipped: 2 });
    const after = await dalo(false);
    expect(after.entities.sessions).toMatchObject({ read: 8, imported: 1, unchanged: 5, skipped: 2 });
    const january = month('2026-01', [4, '34784'], [1, '14'], [3, '34770']);
    expect(after.sessions).toEqual({ months: [...dry.sessions!.months.slice(0, 2), january], reconciled: true });
    expect(planned.sessions).toEqual(after.sessions);
    const usage = await t.pool.query(
      `select d.download_bytes, d.upload_bytes from daily_usage d join subscribers s on s.id = d.subscriber_id
        where s.username = 'dalo.nt' and d.date = '2026-01-12'`,
    );
    expect(usage.rows).toEqual([{ download_bytes: 700, upload_bytes: 70 }]);
    const again = await dalo(false);
    expect(again.entities.sessions).toMatchObject({ imported: 0, unchanged: 6 });
    expect(again.sessions).toEqual(after.sessions);
  });
});
