/**
 * Import from CSV (docs/import.md): the documented column set with plans and history, a header
 * mapping, bad input reported, a dry run that writes nothing and prints the same report, a second
 * run that changes nothing, and money that reconciles to the cent.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ntHash } from '../../shared/access/radius-rows';
import { readSource, runImport, type ImportReport } from '../../shared/import';
import { ImportInputError } from '../../shared/import/sources/csv';
import { startTestApp, type TestApp } from '../helpers/app';
import { numberIndexWhole, rowCounts, withoutTiming } from './import-helpers';

const FIXTURES = path.join(__dirname, '../fixtures/import');
const TODAY = '2026-01-15';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const csv = (dryRun: boolean, folder = 'csv', columns?: string) =>
  runImport(t.db, { from: 'csv', source: path.join(FIXTURES, folder), dryRun, columns, today: TODAY });

describe('import from CSV', () => {
  let dry: ImportReport;
  let real: ImportReport;

  test('a dry run writes nothing and reports what the real run will do', async () => {
    const before = await rowCounts(t.pool);
    dry = await csv(true);
    expect(await rowCounts(t.pool)).toEqual(before);
    expect(dry.dryRun).toBe(true);
    expect(dry.entities.subscribers).toEqual({ read: 10, imported: 5, unchanged: 0, skipped: 5, conflicting: 0 });
    expect(dry.entities.plans).toMatchObject({ imported: 2, skipped: 1 });
    expect(dry.entities.history).toEqual({ read: 8, imported: 5, unchanged: 0, skipped: 3, conflicting: 0 });
    const reasons = Object.fromEntries(dry.reasons.map((r) => [`${r.entity} ${r.outcome} ${r.reason}`, r.count]));
    expect(reasons).toMatchObject({
      'subscribers skipped duplicate username in the source': 2,
      'subscribers skipped no password': 1,
      'subscribers skipped unknown plan': 1,
      'subscribers skipped balance more decimals than USD has': 1,
      'subscribers warning static address not imported, held by another subscriber': 1,
      'subscribers warning MAC address not imported, not a MAC': 1,
      'subscribers warning no expiry in the source': 1,
      'history skipped unknown subscriber': 1,
      'history skipped its subscriber is not imported': 1,
      'history skipped duplicate id in the source': 1,
    });
  });

  test('the real run writes subscribers, FreeRADIUS rows, wallets and history, and reconciles to the cent', async () => {
    real = await csv(false);
    expect(withoutTiming(real)).toEqual(withoutTiming(dry));
    // Balances: 12.34 + 0 + 5.01 + 1.00 + 1.00 (dave twice) + 0.66; grace's 1.234 is no amount.
    expect(real.money.balances).toEqual({ source: 2001, notImported: 200, after: 1801, difference: 0 });
    // Payments: 15 + 10 + 15 + 9.99 + 1 + 45.50 + 15 + 15.
    expect(real.money.payments).toEqual({ source: 12649, notImported: 2599, after: 10050, difference: 0 });
    // The batch wrote the number trigrams in bulk (fast update on for its insert only).
    expect(await numberIndexWhole(t.pool, 'inv-')).toBe(5);
    expect(real.money.reconciled).toBe(true);

    const subs = await t.pool.query(
      `select s.username, s.status, s.expiry_date::text, host(s.static_ip) as ip, s.mac_address, s.wallet_balance, s.blocked_reason,
              p.name as plan, r.name as reseller
         from subscribers s join services p on p.id = s.service_id join resellers r on r.id = s.reseller_id order by s.username`,
    );
    expect(subs.rows).toEqual([
      expect.objectContaining({
        username: 'alice',
        status: 'active',
        expiry_date: '2030-01-31',
        ip: '10.9.0.10',
        mac_address: 'AA:BB:CC:DD:EE:01',
        wallet_balance: 1234,
        plan: 'Home 10M',
        reseller: 'North',
      }),
      expect.objectContaining({ username: 'bob', wallet_balance: 0, reseller: 'North' }),
      expect.objectContaining({
        username: 'carol',
        status: 'inactive',
        blocked_reason: 'expired',
        wallet_balance: 501,
        reseller: 'Imported from csv',
      }),
      expect.objectContaining({
        username: 'heidi',
        ip: null,
        mac_address: null,
        wallet_balance: 66,
        reseller: 'South',
      }),
      expect.objectContaining({ username: 'ivan@realm.example', expiry_date: '2026-02-14', plan: 'Office 50M' }),
    ]);
    const check = async (username: string) =>
      (
        await t.pool.query(`select attribute, op, value from radcheck where username = $1 order by attribute`, [
          username,
        ])
      ).rows;
    expect(await check('alice')).toEqual(
      expect.arrayContaining([{ attribute: 'NT-Password', op: ':=', value: await ntHash('alice-secret') }]),
    );
    // A hash is kept as stored.
    expect(await check('bob')).toEqual(
      expect.arrayContaining([{ attribute: 'NT-Password', op: ':=', value: '9BE9DDDA7F13BACA64215B589A5A4031' }]),
    );
    expect(await check('carol')).toEqual(
      expect.arrayContaining([{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }]),
    );
    const reply = await t.pool.query(
      `select value from radreply where username = 'alice' and attribute = 'Framed-IP-Address'`,
    );
    expect(reply.rows).toEqual([{ value: '10.9.0.10' }]);

    const invoices = await t.pool.query(
      `select i.total, i.paid_amount, i.status, i.commission_amount, i.issue_date::text, i.notes
         from invoices i join subscribers s on s.id = i.subscriber_id where s.username = 'alice' order by i.issue_date`,
    );
    expect(invoices.rows).toEqual([
      {
        total: 1500,
        paid_amount: 1500,
        status: 'paid',
        commission_amount: 0,
        issue_date: '2024-01-05',
        notes: 'imported from csv #1 (R-1)',
      },
      {
        total: 1500,
        paid_amount: 1000,
        status: 'partial',
        commission_amount: 0,
        issue_date: '2024-02-05',
        notes: 'imported from csv #2 (R-2)',
      },
    ]);
    const ledger = await t.pool.query(
      `select type, sum(amount)::int as sum, count(*)::int as n from transactions group by type order by type`,
    );
    expect(ledger.rows).toEqual([
      { type: 'invoice_payment', sum: 10050, n: 5 },
      { type: 'wallet_credit', sum: 1801, n: 3 },
    ]);
    const wallet = await t.pool.query(`select sum(amount)::int as sum from wallet_entries`);
    expect(wallet.rows[0].sum).toBe(1801);
  });

  test('each reseller may sell the plans its imported subscribers are on (an uncapped limit, audited)', async () => {
    const held = await t.pool.query(
      `select r.name as reseller, p.name as plan, l.max_subscribers from reseller_service_limits l
         join resellers r on r.id = l.reseller_id join services p on p.id = l.service_id order by 1, 2`,
    );
    const standing = await t.pool.query(
      `select distinct r.name as reseller, p.name as plan, null::int as max_subscribers from subscribers s
         join resellers r on r.id = s.reseller_id join services p on p.id = s.service_id order by 1, 2`,
    );
    expect(held.rows.length).toBeGreaterThan(1);
    expect(held.rows).toEqual(standing.rows);
    expect(real.entities.service_limits).toEqual({
      read: held.rows.length,
      imported: held.rows.length,
      unchanged: 0,
      skipped: 0,
      conflicting: 0,
    });
    const audited = await t.pool.query(
      `select count(*)::int as n from audit_log where action = 'reseller.service_limit'`,
    );
    expect(audited.rows[0].n).toBe(held.rows.length);
  });

  test('sessions.csv: closed and open sessions, their usage, a row that is no session reported', async () => {
    expect(real.entities.sessions).toEqual({ read: 3, imported: 2, unchanged: 0, skipped: 1, conflicting: 0 });
    expect(real.sessions?.reconciled).toBe(true);
    expect(real.sessions?.months.map((m) => [m.month, m.source.sessions, m.ours.sessions, m.ours.octets])).toEqual([
      ['2025-12', 1, 1, '1000'],
      ['2026-01', 1, 1, '10'],
      ['unknown', 1, 0, '0'],
    ]);
    expect(real.reasons).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ entity: 'sessions', reason: 'start is not a time', examples: ['bob'] }),
      ]),
    );
    const rows = await t.pool.query(
      `select acctsessionid, length(acctuniqueid) as uid, acctstarttime, acctstoptime is null as open, callingstationid
         from radacct order by acctstarttime`,
    );
    expect(rows.rows).toEqual([
      {
        acctsessionid: 'c1',
        uid: 32,
        acctstarttime: new Date('2025-12-31T23:00:00Z'),
        open: false,
        callingstationid: 'AA-BB-CC-DD-EE-01',
      },
      {
        acctsessionid: 'c2',
        uid: 32,
        acctstarttime: new Date('2026-01-14T07:00:00Z'),
        open: true,
        callingstationid: null,
      },
    ]);
    const usage = await t.pool.query(
      `select d.date::text, d.download_bytes + d.upload_bytes as bytes from daily_usage d order by d.date`,
    );
    expect(usage.rows).toEqual([
      { date: '2026-01-01', bytes: 1000 },
      { date: '2026-01-14', bytes: 10 },
    ]);
    const alice = await t.pool.query(`select is_online, monthly_quota_used from subscribers where username = 'alice'`);
    expect(alice.rows).toEqual([{ is_online: true, monthly_quota_used: 1010 }]);
  });

  test('a second run changes nothing', async () => {
    const before = await rowCounts(t.pool);
    const again = await csv(false);
    expect(await rowCounts(t.pool)).toEqual(before);
    expect(again.entities.subscribers).toEqual({ read: 10, imported: 0, unchanged: 5, skipped: 5, conflicting: 0 });
    expect(again.entities.history).toMatchObject({ imported: 0, unchanged: 5 });
    expect(again.entities.plans).toMatchObject({ imported: 0, unchanged: 2 });
    expect(again.entities.resellers).toMatchObject({ imported: 0 });
    expect(again.entities.service_limits).toMatchObject({ imported: 0, unchanged: real.entities.service_limits.read });
    expect(again.money).toEqual(real.money);
    expect(again.mismatches).toEqual([]);
    expect(again.entities.sessions).toMatchObject({ imported: 0, unchanged: 2 });
  });

  test('passwords appear in no report', () => {
    for (const r of [dry, real]) {
      const text = JSON.stringify(r);
      for (const secret of ['alice-secret', '9BE9DDDA7F13BACA64215B589A5A4031', 'carol-pass', 'ivan pass']) {
        expect(text).not.toContain(secret);
      }
    }
  });

  test('headers are mapped with --columns', async () => {
    const report = await csv(
      false,
      'csv-mapped',
      'Login=username,Pass=password,Profile=plan,Profile Price=plan_price,Expiration=expiry,Credit=balance',
    );
    expect(report.entities.subscribers).toMatchObject({ read: 1, imported: 1 });
    expect(report.money.balances).toEqual({ source: 250, notImported: 0, after: 250, difference: 0 });
  });

  test('missing columns are refused before anything is read', async () => {
    await expect(readSource({ from: 'csv', source: path.join(FIXTURES, 'csv-bad') })).rejects.toThrow(ImportInputError);
    await expect(readSource({ from: 'csv', source: path.join(FIXTURES, 'csv-bad') })).rejects.toThrow(
      /missing column\(s\) username, password/,
    );
  });

  test('a username taken by a subscriber the import did not write is a conflict', async () => {
    await t.pool.query(`update audit_log set details = details || '{"source":"other"}' where entity_id =
      (select id from subscribers where username = 'bob')`);
    const report = await csv(true);
    expect(report.entities.subscribers).toMatchObject({ conflicting: 1, unchanged: 4 });
    expect(report.reasons).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ outcome: 'conflicting', reason: expect.stringMatching(/exists/), examples: ['bob'] }),
      ]),
    );
  });
});

describe('import from CSV: values FreeRADIUS would expand', () => {
  test('a plan whose rate it would expand is skipped with its subscribers, a wrapped password skips its subscriber', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'import-expand-'));
    // A plan of ours matched by name keeps its own rate: the source's is never written.
    await t.pool.query(
      `insert into services (name, price, currency, duration_days) values ('Exp Ours', 500, 'USD', 30)`,
    );
    try {
      fs.writeFileSync(
        path.join(dir, 'plans.csv'),
        [
          'name,price,days,rate_limit',
          'Exp Shell,5.00,30,`/bin/touch /tmp/imported`',
          'Exp Fine,5.00,30,4M/8M',
          'Exp Ours,5.00,30,`/bin/id`',
        ].join('\n'),
      );
      fs.writeFileSync(
        path.join(dir, 'subscribers.csv'),
        [
          'username,password,plan,expiry',
          'exp-shell-plan,good-pass,Exp Shell,2030-01-01',
          'exp-backticks,`id`,Exp Fine,2030-01-01',
          `exp-quotes,"""%{sql:select secret from nas}""",Exp Fine,2030-01-01`,
          'exp-ok,ok-pass,Exp Fine,2030-01-01',
          'exp-ours,ours-pass,Exp Ours,2030-01-01',
        ].join('\n'),
      );
      const report = await runImport(t.db, { from: 'csv', source: dir, dryRun: false, today: TODAY });
      expect(report.entities.plans).toMatchObject({ imported: 1, skipped: 1, unchanged: 1 });
      expect(report.entities.subscribers).toMatchObject({ imported: 2, skipped: 3 });
      expect(report.reasons).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            entity: 'plans',
            outcome: 'skipped',
            reason: 'rate limit FreeRADIUS would expand (a backtick, %{ or quotes)',
            examples: ['Exp Shell'],
          }),
          expect.objectContaining({
            entity: 'subscribers',
            reason: 'password wrapped whole in quotes or backticks (FreeRADIUS would expand it)',
            examples: ['exp-backticks', 'exp-quotes'],
          }),
        ]),
      );
      const plans = await t.pool.query(`select name, rate_limit from services where name like 'Exp %' order by name`);
      expect(plans.rows).toEqual([
        { name: 'Exp Fine', rate_limit: '4M/8M' },
        { name: 'Exp Ours', rate_limit: null },
      ]);
      const subs = await t.pool.query(`select username from subscribers where username like 'exp-%'`);
      expect(subs.rows.map((r) => r.username).sort()).toEqual(['exp-ok', 'exp-ours']);
      const checked = await t.pool.query(
        `select distinct username from radcheck where username like 'exp-%' order by username`,
      );
      expect(checked.rows).toEqual([{ username: 'exp-ok' }, { username: 'exp-ours' }]);
      const expanding = await t.pool.query(
        `select value from radgroupreply where value like '%\`%' or value like '%\\%{%' or value like '"%"'`,
      );
      expect(expanding.rows).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
