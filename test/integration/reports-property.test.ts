/**
 * The dashboard's and the revenue report's figures come from ledger_rollup (migration 0052, which
 * also serves the ledger's totals), the dashboard's counts from subscriber_counts. Under random
 * payments (every method), voids (consolidation), wallet top-ups, renewals, backdated ledger rows,
 * changes of the counted subscriber columns and folds, after every step they must equal sums over
 * the ledger and counts over the subscribers themselves, for the admin and for a reseller's tree;
 * after each run nas_online (the online subscribers per reseller and server) key by key.
 */
import fc from 'fast-check';
import { addDays, todayUtc } from '../../shared/billing/dates';
import { foldLedgerRollup } from '../../shared/db/ledger-rollup';
import { foldNasOnline } from '../../shared/db/nas-online';
import { foldSubscriberCounts } from '../../shared/db/subscriber-counts';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let tree: { root: number; child: number; other: number };
let resellerToken: string;
let subscriberIds: number[];
const today = todayUtc();
const monthFrom = `${today.slice(0, 7)}-01`;
const lastMonthFrom = new Date(Date.UTC(Number(today.slice(0, 4)), Number(today.slice(5, 7)) - 2, 1))
  .toISOString()
  .slice(0, 10);

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  const root = (await seedReseller(t.db, { name: 'root' })).id;
  const child = (await seedReseller(t.db, { name: 'child', parentId: root })).id;
  const other = (await seedReseller(t.db, { name: 'other' })).id;
  tree = { root, child, other };
  resellerToken = token('reseller', { managerId: 50, resellerId: root });
  await t.pool.query('update resellers set balance = 100000000');
  const plan = await seedPlan(t.db, { price: 1500 });
  subscriberIds = [];
  for (const r of [root, child, other, root])
    subscriberIds.push((await seedSubscriber(t.db, { resellerId: r, serviceId: plan.id })).id);
});
afterAll(() => t.close());

type Step =
  | { kind: 'pay'; who: number; cents: number; share: number; method: 'cash' | 'card' | 'bank' | 'wallet' }
  | { kind: 'void'; who: number }
  | { kind: 'topUp'; who: number; cents: number }
  | { kind: 'renew'; who: number }
  | { kind: 'backdate'; pick: number; days: number }
  | { kind: 'flip'; who: number; days: number }
  | { kind: 'fold' };

const who = fc.nat(3);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('pay' as const),
      who,
      cents: fc.integer({ min: 1, max: 500_000 }),
      share: fc.integer({ min: 1, max: 100 }),
      method: fc.constantFrom('cash' as const, 'card' as const, 'bank' as const, 'wallet' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('void' as const), who }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('topUp' as const), who, cents: fc.integer({ min: 1, max: 100_000 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('renew' as const), who }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('backdate' as const),
      pick: fc.nat(10_000),
      // Negative: into the next days, which the dashboard's month (read at the month grain) leaves out.
      days: fc.integer({ min: -3, max: 70 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('flip' as const), who, days: fc.integer({ min: -10, max: 40 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fold' as const) }) },
);

const decimal = (cents: number) => cents / 100;

async function run(step: Step): Promise<void> {
  const sub = subscriberIds[step.kind === 'backdate' || step.kind === 'fold' ? 0 : step.who];
  switch (step.kind) {
    case 'pay': {
      const made = await api.post(
        '/api/invoices',
        { subscriber_id: sub, items: [{ description: 'x', qty: 1, unit_price: decimal(step.cents) }], tax_rate: 0 },
        { token: admin },
      );
      expect(made.status).toBe(201);
      const wallet = Number(
        (await t.pool.query('select wallet_balance from subscribers where id = $1', [sub])).rows[0].wallet_balance,
      );
      let amount = Math.max(1, Math.floor((step.cents * step.share) / 100));
      if (step.method === 'wallet') amount = Math.min(amount, wallet);
      if (amount <= 0) return;
      const paid = await api.post(
        `/api/invoices/${made.body.data.id}/payment`,
        { amount: decimal(amount), method: step.method },
        { token: admin },
      );
      expect(paid.status).toBe(200);
      return;
    }
    case 'void': {
      const res = await api.post(`/api/invoices/consolidate/${sub}`, {}, { token: admin });
      expect([200, 201, 400, 409]).toContain(res.status);
      return;
    }
    case 'topUp': {
      const res = await api.post(
        `/api/subscribers/${sub}/add-balance`,
        { amount: decimal(step.cents) },
        { token: admin },
      );
      expect(res.status).toBe(200);
      return;
    }
    case 'renew': {
      await t.pool.query('update subscribers set last_renewed_on = null where id = $1', [sub]);
      expect((await api.post(`/api/subscribers/${sub}/renew`, {}, { token: admin })).status).toBe(200);
      return;
    }
    case 'backdate': {
      // Moves one ledger row back (or a little ahead): the update path of the rollup's triggers.
      await t.pool.query(
        `update transactions set created_at = created_at - make_interval(days => $2)
          where id = (select id from transactions order by id offset ($1::int % greatest((select count(*) from transactions), 1)) limit 1)`,
        [step.pick, step.days],
      );
      return;
    }
    case 'flip': {
      // What sessions, blocks, status changes and the expiry sweep write: the counted columns.
      await t.pool.query(
        `update subscribers set is_online = not is_online, expiry_date = expiry_date - $2::int,
           last_nas_id = nullif(abs($2::int) % 3, 0),
           status = case when status = 'active' then 'inactive' else 'active' end,
           blocked_reason = case when blocked_reason is null then 'expired' end
         where id = $1`,
        [sub, step.days],
      );
      return;
    }
    case 'fold':
      await Promise.all([foldLedgerRollup(), foldSubscriberCounts(), foldNasOnline()]);
  }
}

/** Payments in USD by day range over the resellers whose path matches (all when null), per method. */
async function ledger(from: string, to: string, pathLike: string | null): Promise<Map<string, number>> {
  const { rows } = await t.pool.query<{ method: string; amount: string }>(
    `select coalesce(method, 'unspecified') as method, sum(amount) as amount from transactions
      where type = 'invoice_payment' and currency = 'USD'
        and created_at >= $1::date::timestamp at time zone 'UTC' and created_at < ($2::date + 1)::timestamp at time zone 'UTC'
        and ($3::text is null or reseller_id in (select id from resellers where path like $3))
      group by 1`,
    [from, to, pathLike],
  );
  return new Map(rows.map((r) => [r.method, Number(r.amount)]));
}
const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const cents = (d: number) => Math.round(d * 100);

async function expectDashboard(tokenOf: string, pathLike: string | null): Promise<void> {
  const res = await api.get('/api/dashboard', { token: tokenOf });
  expect(res.status).toBe(200);
  const r = res.body.data.revenue;
  const month = await ledger(monthFrom, today, pathLike);
  expect(cents(r.today)).toBe(sum(await ledger(today, today, pathLike)));
  expect(cents(r.month)).toBe(sum(month));
  expect(cents(r.last_month)).toBe(sum(await ledger(lastMonthFrom, addDays(monthFrom, -1), pathLike)));
  expect(
    Object.fromEntries(Object.entries(r.by_method as Record<string, number>).map(([k, v]) => [k, cents(v)])),
  ).toEqual(Object.fromEntries(month));
  // The subscriber counts and wallets (subscriber_counts, kept by triggers) equal counts over subscribers.
  const { rows } = await t.pool.query(
    `select count(*)::int as total, count(*) filter (where status = 'active')::int as active,
            count(*) filter (where status = 'inactive')::int as inactive,
            count(*) filter (where expiry_date < $1::date)::int as expired,
            count(*) filter (where expiry_date >= $1::date and expiry_date <= $1::date + 7)::int as expiring_7d,
            count(*) filter (where blocked_reason is not null)::int as blocked,
            count(*) filter (where is_online)::int as online, coalesce(sum(wallet_balance), 0)::int as wallets
       from subscribers
      where deleted_at is null and ($2::text is null or reseller_id in (select id from resellers where path like $2))`,
    [today, pathLike],
  );
  const { wallets, ...counts } = rows[0];
  expect(res.body.data.subscribers).toEqual(counts);
  expect(cents(res.body.data.wallets.total)).toBe(wallets);
}

async function expectRevenueReport(tokenOf: string, pathLike: string | null, by: string, group: string): Promise<void> {
  // Grouped by week the report reads the rollup by day; by month, whole months at the month grain.
  const from = addDays(today, -90);
  const res = await api.get(`/api/reports/revenue?from=${from}&to=${today}&by=${by}&group=${group}`, {
    token: tokenOf,
  });
  expect(res.status).toBe(200);
  const want = sum(await ledger(from, today, pathLike));
  const got = (res.body.totals as { currency: string; amount: number }[]).find((x) => x.currency === 'USD');
  expect(cents(got?.amount ?? 0)).toBe(want);
}

it('dashboard revenue and the revenue report equal the ledger after every step', async () => {
  const rootPath = `/${tree.root}/%`;
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepArb, { minLength: 1, maxLength: 8 }),
      fc.constantFrom('method', 'reseller', 'manager', 'plan'),
      fc.constantFrom('week', 'month'),
      async (steps, by, group) => {
        for (const step of steps) {
          await run(step);
          await expectDashboard(admin, null);
          await expectDashboard(resellerToken, rootPath);
          await expectRevenueReport(admin, null, by, group);
          await expectRevenueReport(resellerToken, rootPath, by, group);
        }
        // The rollup as a whole equals the ledger at both grains, key by key (group by meets NULL keys).
        for (const grain of ['day', 'month']) {
          const { rows } = await t.pool.query(
            `select day, currency, type, method, service_id, reseller_id, manager_id from (
               select day, currency, type, method, service_id, reseller_id, manager_id, n, incoming + outgoing as amount
                 from ledger_rollup where grain = left($1, 1)
               union all
               select date_trunc($1, created_at at time zone 'UTC')::date, currency, type, method, service_id, reseller_id,
                      created_by, -count(*), -sum(amount)
                 from transactions group by 1, 2, 3, 4, 5, 6, 7) d
             group by 1, 2, 3, 4, 5, 6, 7 having sum(n) <> 0 or sum(amount) <> 0`,
            [grain],
          );
          expect({ grain, rows }).toEqual({ grain, rows: [] });
        }
        // The online subscribers per reseller and server (nas_online, kept by triggers) equal counts over subscribers.
        const { rows: online } = await t.pool.query(
          `select reseller_id, nas_id from (
             select reseller_id, nas_id, n from nas_online
             union all
             select reseller_id, coalesce(last_nas_id, 0), -count(*) from subscribers
              where is_online and deleted_at is null group by 1, 2) d
           group by 1, 2 having sum(n) <> 0`,
        );
        expect(online).toEqual([]);
      },
    ),
    { numRuns: 12 },
  );
}, 600_000);
