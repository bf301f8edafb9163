/**
 * Import from a phpnuxbill database in MariaDB (fixtures follow phpnuxbill's schema): customers with
 * PPPoE or portal passwords, balances to wallets, plan and expiry from the active recharge,
 * transactions to paid invoices, balance packages and routers reported; second run, reconciliation.
 */
import { runImport } from '../../shared/import';
import { startTestApp, type TestApp } from '../helpers/app';
import { mariadbFixture, rowCounts } from './import-helpers';

let t: TestApp;
let source: { url: string; drop(): Promise<void> };
beforeAll(async () => {
  source = await mariadbFixture('phpnuxbill');
  t = await startTestApp();
});
afterAll(async () => {
  await source?.drop();
  await t?.close();
});

const nux = (dryRun: boolean) =>
  runImport(t.db, {
    from: 'phpnuxbill',
    source: source.url,
    dryRun,
    today: '2026-01-15',
    connection: { allowPrivateTargets: true },
  });

test('phpnuxbill: dry run, real run and a second run that changes nothing', async () => {
  const empty = await rowCounts(t.pool);
  const dry = await nux(true);
  expect(await rowCounts(t.pool)).toEqual(empty);
  const real = await nux(false);
  expect({ ...real, seconds: 0, dryRun: true }).toEqual({ ...dry, seconds: 0 });

  expect(real.entities.plans).toEqual({ read: 5, imported: 3, unchanged: 0, skipped: 2, conflicting: 0 });
  expect(real.entities.subscribers).toEqual({ read: 4, imported: 3, unchanged: 0, skipped: 1, conflicting: 0 });
  expect(real.entities.history).toEqual({ read: 5, imported: 4, unchanged: 0, skipped: 1, conflicting: 0 });
  expect(real.entities.routers).toEqual({ read: 1, imported: 0, unchanged: 0, skipped: 1, conflicting: 0 });
  expect(real.money.balances).toEqual({ source: 2650050, notImported: 0, after: 2650050, difference: 0 });
  expect(real.money.payments).toEqual({ source: 23000000, notImported: 500000, after: 22500000, difference: 0 });
  expect(JSON.stringify(real)).not.toMatch(/pppoe-secret|hs-secret|router-secret|portal-pass/);

  const subs = await t.pool.query(
    `select s.username, s.status, s.expiry_date::text as expiry, s.wallet_balance, p.name as plan, p.duration_days, s.blocked_reason
       from subscribers s join services p on p.id = s.service_id order by s.username`,
  );
  expect(subs.rows).toEqual([
    {
      username: 'nux.banned',
      status: 'inactive',
      expiry: '2030-07-01',
      wallet_balance: 150050,
      plan: 'PPPoE 20M',
      duration_days: 30,
      blocked_reason: null,
    },
    {
      username: 'nux.hotspot',
      status: 'active',
      expiry: '2025-11-02',
      wallet_balance: 0,
      plan: 'Hotspot Day',
      duration_days: 1,
      blocked_reason: 'expired',
    },
    {
      username: 'nux.pppoe',
      status: 'active',
      expiry: '2030-03-31',
      wallet_balance: 2500000,
      plan: 'PPPoE 50M Quarter',
      duration_days: 90,
      blocked_reason: null,
    },
  ]);
  const cleartextMode = await t.pool.query(
    `select count(*)::int as n from radcheck where username = 'nux.pppoe' and attribute = 'NT-Password'`,
  );
  expect(cleartextMode.rows[0].n).toBe(1);
  const notes = await t.pool.query(`select notes from invoices order by issue_date`);
  expect(notes.rows.map((r) => r.notes)).toEqual([
    'imported from phpnuxbill #4 (INV-4)',
    'imported from phpnuxbill #3 (INV-3)',
    'imported from phpnuxbill #1 (INV-1)',
    'imported from phpnuxbill #2 (INV-2)',
  ]);

  // Its RADIUS-mode radacct: a closed session with gigaword-sized octets and an open one.
  expect(real.entities.sessions).toEqual({ read: 2, imported: 2, unchanged: 0, skipped: 0, conflicting: 0 });
  expect(real.sessions).toEqual({
    months: [
      {
        month: '2025-12',
        source: { sessions: 1, octets: '9999999999' },
        notImported: { sessions: 0, octets: '0' },
        ours: { sessions: 1, octets: '9999999999' },
        difference: { sessions: 0, octets: '0' },
      },
      {
        month: '2026-01',
        source: { sessions: 1, octets: '3000' },
        notImported: { sessions: 0, octets: '0' },
        ours: { sessions: 1, octets: '3000' },
        difference: { sessions: 0, octets: '0' },
      },
    ],
    reconciled: true,
  });
  const usage = await t.pool.query(
    `select d.date::text, d.download_bytes, d.upload_bytes from daily_usage d join subscribers s on s.id = d.subscriber_id
      where s.username = 'nux.pppoe' order by d.date`,
  );
  expect(usage.rows).toEqual([
    { date: '2025-12-03', download_bytes: 9876543210, upload_bytes: 123456789 },
    { date: '2026-01-14', download_bytes: 2000, upload_bytes: 1000 },
  ]);
  const state = await t.pool.query(
    `select is_online, host(ip_address) as ip, monthly_quota_used, daily_quota_used from subscribers where username = 'nux.pppoe'`,
  );
  expect(state.rows).toEqual([{ is_online: true, ip: '10.30.0.2', monthly_quota_used: 3000, daily_quota_used: 0 }]);

  const before = await rowCounts(t.pool);
  const again = await nux(false);
  expect(await rowCounts(t.pool)).toEqual(before);
  expect(again.entities.subscribers).toMatchObject({ imported: 0, unchanged: 3 });
  expect(again.entities.sessions).toMatchObject({ imported: 0, unchanged: 2 });
  expect(again.sessions).toEqual(real.sessions);
  expect(again.money).toEqual(real.money);
});
