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

  const before = await rowCounts(t.pool);
  const again = await nux(false);
  expect(await rowCounts(t.pool)).toEqual(before);
  expect(again.entities.subscribers).toMatchObject({ imported: 0, unchanged: 3 });
  expect(again.money).toEqual(real.money);
});
