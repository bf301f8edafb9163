/**
 * GET /api/dashboard and GET /api/reports/:name against the real database: every figure equals a sum
 * over the ledger, invoices or wallets computed here in SQL; scope (a reseller never sees another
 * tree's money, and naming one is 403); CSV (content type, escaped formula cells); bad queries.
 */
import { addDays, todayUtc } from '../../shared/billing/dates';
import { foldLedgerRollup } from '../../shared/db/ledger-rollup';
import { foldNasOnline } from '../../shared/db/nas-online';
import { foldSessionHours } from '../../shared/db/session-hours';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let A: number;
let A1: number;
let B: number;
let resA: string;
let resA1: string;
let resB: string;
let subs: { a: number; a1: number; b: number };
const today = todayUtc();

/** A SQL figure as a number (sums come back as numeric text). */
async function one(text: string, values: unknown[] = []): Promise<number> {
  const { rows } = await t.pool.query(text, values);
  return Number(Object.values(rows[0])[0] ?? 0);
}

const cents = (decimal: number) => Math.round(decimal * 100);

async function invoice(subscriberId: number, unitPrice: number): Promise<{ id: number; total: number }> {
  const res = await api.post(
    '/api/invoices',
    { subscriber_id: subscriberId, items: [{ description: 'x', qty: 1, unit_price: unitPrice }], tax_rate: 0 },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return { id: res.body.data.id, total: res.body.data.total };
}

async function pay(invoiceId: number, amount: number, method: string): Promise<void> {
  const res = await api.post(`/api/invoices/${invoiceId}/payment`, { amount, method }, { token: admin });
  expect(res.status).toBe(200);
}

/** Payments received in USD over the days, for resellers whose path matches (all when null). */
async function ledgerRevenue(from: string, to: string, pathLike: string | null, method?: string): Promise<number> {
  return one(
    `select coalesce(sum(amount), 0) from transactions t
      where type = 'invoice_payment' and currency = 'USD'
        and created_at >= $1::date::timestamp at time zone 'UTC' and created_at < ($2::date + 1)::timestamp at time zone 'UTC'
        and ($3::text is null or reseller_id in (select id from resellers where path like $3))
        and ($4::text is null or method = $4)`,
    [from, to, pathLike, method ?? null],
  );
}

async function pathOf(id: number): Promise<string> {
  const { rows } = await t.pool.query<{ path: string }>('select path from resellers where id = $1', [id]);
  return `${rows[0].path}%`;
}

// The usage rollup and runs only on call (the usage service reads these from process.env): the
// session tests leave octets in radacct, which a timer would fold into daily_usage beside the rows
// the usage tests write themselves (a duplicate day, or more bytes than expected, as it happens).
const savedUsage = {
  USAGE_INTERVAL_SECONDS: process.env.USAGE_INTERVAL_SECONDS,
  USAGE_ROLLUP_SECONDS: process.env.USAGE_ROLLUP_SECONDS,
};

beforeAll(async () => {
  process.env.USAGE_INTERVAL_SECONDS = '0';
  process.env.USAGE_ROLLUP_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
  A = (await seedReseller(t.db, { name: 'Alpha' })).id;
  A1 = (await seedReseller(t.db, { name: '=HYPERLINK("http://x")', parentId: A })).id;
  B = (await seedReseller(t.db, { name: 'Beta' })).id;
  resA = token('reseller', { managerId: 40, resellerId: A });
  resA1 = token('reseller', { managerId: 41, resellerId: A1 });
  resB = token('reseller', { managerId: 42, resellerId: B });
  const plan = await seedPlan(t.db, { price: 3000, name: 'Home 30' });
  subs = {
    a: (await seedSubscriber(t.db, { resellerId: A, serviceId: plan.id, expiryDate: addDays(today, 3) })).id,
    a1: (await seedSubscriber(t.db, { resellerId: A1, serviceId: plan.id, expiryDate: addDays(today, -40) })).id,
    b: (await seedSubscriber(t.db, { resellerId: B, serviceId: plan.id, expiryDate: addDays(today, 5) })).id,
  };
  // Payments of every tree, by several methods; one invoice left partly paid, one unpaid.
  const ia = await invoice(subs.a, 100);
  await pay(ia.id, 60, 'cash');
  await pay(ia.id, 40, 'card');
  const ia1 = await invoice(subs.a1, 80.5);
  await pay(ia1.id, 20.25, 'bank');
  const ib = await invoice(subs.b, 500);
  await pay(ib.id, 500, 'cash');
  await invoice(subs.b, 70);
  // Wallet: a top-up, then an invoice paid from it (a payment by method wallet).
  expect((await api.post(`/api/subscribers/${subs.a}/add-balance`, { amount: 50 }, { token: admin })).status).toBe(200);
  const iw = await invoice(subs.a, 30);
  await pay(iw.id, 30, 'wallet');
  // Reseller money: the admin tops A up, A transfers to A1, a renewal charges A (its invoice of 30
  // takes the wallet's last 20: a payment by method wallet).
  expect((await api.post(`/api/resellers/${A}/balance`, { amount: 1000 }, { token: admin })).status).toBe(200);
  expect((await api.post(`/api/resellers/${A1}/balance`, { amount: 200 }, { token: resA })).status).toBe(200);
  expect((await api.post(`/api/subscribers/${subs.a}/renew`, {}, { token: admin })).status).toBe(200);
  // Last month: one payment of A moved back 35 days (the rollup follows the ledger's update).
  const old = await invoice(subs.a, 9.99);
  await pay(old.id, 9.99, 'cash');
  await t.pool.query(`update transactions set created_at = now() - interval '35 days' where invoice_id = $1`, [old.id]);
});
afterAll(async () => {
  await t.close();
  for (const [k, v] of Object.entries(savedUsage)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('GET /api/dashboard', () => {
  it('admin: every figure equals its sum over the ledger, invoices and subscribers', async () => {
    const res = await api.get('/api/dashboard', { token: admin });
    expect(res.status).toBe(200);
    const d = res.body.data;
    const monthFrom = `${today.slice(0, 7)}-01`;
    const lastFrom = new Date(Date.UTC(Number(today.slice(0, 4)), Number(today.slice(5, 7)) - 2, 1))
      .toISOString()
      .slice(0, 10);
    expect(d.currency).toBe('USD');
    expect(cents(d.revenue.today)).toBe(await ledgerRevenue(today, today, null));
    expect(cents(d.revenue.month)).toBe(await ledgerRevenue(monthFrom, today, null));
    expect(cents(d.revenue.last_month)).toBe(await ledgerRevenue(lastFrom, addDays(monthFrom, -1), null));
    expect(d.revenue.today).toBe(60 + 40 + 20.25 + 500 + 30 + 20);
    for (const m of ['cash', 'card', 'bank', 'wallet'])
      expect(cents(d.revenue.by_method[m])).toBe(await ledgerRevenue(monthFrom, today, null, m));
    expect(d.revenue.wallet_topups.today).toBe(50);
    expect(cents(d.invoices.outstanding)).toBe(
      await one(`select sum(total - paid_amount) from invoices where status in ('pending','partial','overdue')`),
    );
    expect(d.invoices.outstanding).toBe(80.5 - 20.25 + 70 + 10);
    expect(cents(d.wallets.total)).toBe(
      await one('select sum(wallet_balance) from subscribers where deleted_at is null'),
    );
    expect(d.subscribers).toMatchObject({ total: 3, active: 3, expired: 1, expiring_7d: 1 });
    expect(d.series.payments_per_day).toHaveLength(30);
    expect(cents(d.series.payments_per_day.at(-1).amount)).toBe(await ledgerRevenue(today, today, null));
    expect(d.series.online_per_hour).toHaveLength(24);
    expect(d.series.subscribers_per_month).toHaveLength(12);
    expect(d.series.subscribers_per_month.at(-1)).toMatchObject({ month: today.slice(0, 7), new: 3 });
  });

  it('stays exact when the rollup is folded', async () => {
    const before = (await api.get('/api/dashboard', { token: admin })).body.data.revenue;
    await foldLedgerRollup();
    expect(await one('select count(*) from ledger_rollup where not folded')).toBe(0);
    expect((await api.get('/api/dashboard', { token: admin })).body.data.revenue).toEqual(before);
  });

  it("a reseller sees its own tree's money only", async () => {
    const res = await api.get('/api/dashboard', { token: resA });
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(cents(d.revenue.today)).toBe(await ledgerRevenue(today, today, await pathOf(A)));
    expect(d.revenue.today).toBe(60 + 40 + 20.25 + 30 + 20);
    expect(d.subscribers.total).toBe(2);
    expect(d.invoices.outstanding).toBe(80.5 - 20.25 + 10);
    const b = (await api.get('/api/dashboard', { token: resB })).body.data;
    expect(b.revenue.today).toBe(500);
    expect(b.invoices.outstanding).toBe(70);
  });

  it('online per hour: every session open at some instant of the hour, open or closed since', async () => {
    // Open for days, open since two hours ago, closed within the day, closed before it (left out).
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime)
       values ('oph-1', 'oph-1', 'oph', '192.0.2.9', now() - interval '3 days', null),
              ('oph-2', 'oph-2', 'oph', '192.0.2.9', now() - interval '2 hours', null),
              ('oph-3', 'oph-3', 'oph', '192.0.2.9', now() - interval '5 hours', now() - interval '3 hours'),
              ('oph-4', 'oph-4', 'oph', '192.0.2.9', now() - interval '40 hours', now() - interval '30 hours')`,
    );
    try {
      const got = (await api.get('/api/dashboard', { token: admin })).body.data.series.online_per_hour as {
        online: number;
      }[];
      const { rows } = await t.pool.query<{ n: number }>(
        `select count(r.acctstarttime)::int as n
           from generate_series(date_trunc('hour', now()) - interval '23 hours', date_trunc('hour', now()), interval '1 hour') h
           left join radacct r on r.acctstarttime < h + interval '1 hour' and (r.acctstoptime is null or r.acctstoptime >= h)
          group by h order by h`,
      );
      expect(got.map((x) => x.online)).toEqual(rows.map((r) => r.n));
      expect(Math.max(...rows.map((r) => r.n))).toBeGreaterThanOrEqual(2);
    } finally {
      await t.pool.query(`delete from radacct where username = 'oph'`);
    }
  });

  it('online per hour and the access servers (online, last packet) follow sessions started, updated, stopped and moved, per scope', async () => {
    const { rows: users } = await t.pool.query<{ id: number; username: string }>(
      'select id, username from subscribers where id = any($1)',
      [[subs.a, subs.a1, subs.b]],
    );
    const user = (id: number) => users.find((u) => u.id === id)!.username;
    const nasIp = '192.0.2.77';
    await t.pool.query(`insert into nas (nasname, shortname, secret) values ($1, 'tower-west', 's')`, [nasIp]);
    const viewAll = token('reseller', { managerId: 44, resellerId: B, permissions: ['subscribers.view_all'] });
    const listed = async (tok: string) =>
      (await api.get('/api/dashboard', { token: tok })).body.data.nas.some(
        (x: { ip_address: string }) => x.ip_address === nasIp,
      );
    // A server no one is online on: the admin's list only, view_all or not.
    expect([await listed(admin), await listed(viewAll)]).toEqual([true, false]);
    const session = (id: string, username: string, start: string, stop: string | null) =>
      t.pool.query(
        `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime)
         values ($1, $1, $2, $3, now() - $4::interval, now() - $5::interval)`,
        [id, username, nasIp, start, stop],
      );
    // Online per hour by the definition, over radacct itself, for a tree (every session when null).
    const direct = async (pathLike: string | null) =>
      (
        await t.pool.query<{ n: number }>(
          `select count(r.acctstarttime)::int as n
             from generate_series(date_trunc('hour', now(), 'UTC') - interval '23 hours', date_trunc('hour', now(), 'UTC'), interval '1 hour') h
             left join (select r.* from radacct r
                         where $1::text is null
                            or exists (select 1 from subscribers s where s.username = r.username and s.deleted_at is null
                                          and s.reseller_id in (select id from resellers where path like $1))) r
               on r.acctstarttime < h + interval '1 hour' and (r.acctstoptime is null or r.acctstoptime >= h)
            group by h order by h`,
          [pathLike],
        )
      ).rows.map((r) => r.n);
    // The tree's live subscribers online on the server, over subscribers itself.
    const onlineOn = async (pathLike: string | null) =>
      one(
        `select count(*) from subscribers s join nas n on n.id = s.last_nas_id
          where n.nasname = $1 and s.is_online and s.deleted_at is null
            and ($2::text is null or s.reseller_id in (select id from resellers where path like $2))`,
        [nasIp, pathLike],
      );
    const check = async () => {
      for (const [tok, pathLike, isAdmin] of [
        [admin, null, true],
        // view_all widens the figures to every tree, not the list of servers (the admin's).
        [viewAll, null, false],
        [resA, await pathOf(A), false],
        [resA1, await pathOf(A1), false],
        [resB, await pathOf(B), false],
      ] as const) {
        const d = (await api.get('/api/dashboard', { token: tok })).body.data;
        expect(d.series.online_per_hour.map((x: { online: number }) => x.online)).toEqual(await direct(pathLike));
        const server = d.nas.find((x: { ip_address: string }) => x.ip_address === nasIp);
        const online = await onlineOn(pathLike);
        // A reseller's tree sees a server only while its subscribers are online on it; the admin every one.
        if (!isAdmin && online === 0) expect(server).toBeUndefined();
        else expect(server.online).toBe(online);
      }
      const sqlAge = () =>
        one(
          `select case when bool_or(acctstoptime is null)
                       then floor(extract(epoch from now() - max(coalesce(acctupdatetime, acctstarttime)))) end
             from radacct where nasipaddress = $1`,
          [nasIp],
        );
      // Read before and after the dashboard: on a loaded machine a second can pass in between.
      const before = await sqlAge();
      const nas = (await api.get('/api/dashboard', { token: admin })).body.data.nas.find(
        (x: { ip_address: string }) => x.ip_address === nasIp,
      );
      const after = await sqlAge();
      expect(nas.online).toBe(await onlineOn(null));
      if (nas.last_packet_age_seconds === null) expect(after).toBe(0);
      else {
        expect(nas.last_packet_age_seconds).toBeGreaterThanOrEqual(before);
        expect(nas.last_packet_age_seconds).toBeLessThanOrEqual(after);
      }
      return nas.last_packet_age_seconds as number | null;
    };
    try {
      // Starts: one statement of several sessions of both trees and one of no subscriber, then one more.
      await t.pool.query(
        `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime)
         values ('mv-1', 'mv-1', $1, $4, now() - interval '30 hours'), ('mv-2', 'mv-2', $2, $4, now() - interval '5 hours'),
                ('mv-3', 'mv-3', $3, $4, now() - interval '2 hours'), ('mv-4', 'mv-4', 'nobody-here', $4, now() - interval '3 hours')`,
        [user(subs.a), user(subs.a1), user(subs.b), nasIp],
      );
      await session('mv-5', user(subs.b), '26 hours', '20 hours');
      await session('mv-6', user(subs.a), '4 hours', '90 minutes');
      // A session closed days ago (as an import writes the accounting history) counts in no hour read,
      // and writes no row (migration 0055).
      const rows = await one('select count(*) from session_hours');
      await session('mv-7', user(subs.a), '4 days', '3 days');
      expect(await one('select count(*) from session_hours')).toBe(rows);
      expect(await check()).toBeGreaterThanOrEqual(2 * 3600 - 1);
      expect(await onlineOn(null)).toBe(3);
      // Interim-Updates raise the last packet; the counts stay.
      const updatedAt = Date.now();
      await t.pool.query(
        `update radacct set acctupdatetime = now() - interval '10 minutes', acctinputoctets = 100 where acctuniqueid = 'mv-2'`,
      );
      const age = await check();
      expect(age).toBeGreaterThanOrEqual(599);
      // check() itself takes a while on a loaded machine: the age grows by that much.
      expect(age).toBeLessThanOrEqual(601 + Math.ceil((Date.now() - updatedAt) / 1000));
      // Stops (one alone, two in one statement) and two closed sessions removed, one of days ago.
      await t.pool.query(`update radacct set acctstoptime = now() - interval '1 hour' where acctuniqueid = 'mv-1'`);
      await t.pool.query(
        `update radacct set acctstoptime = now() - interval '30 minutes', acctupdatetime = now() - interval '30 minutes'
          where acctuniqueid in ('mv-3', 'mv-4')`,
      );
      await t.pool.query(`delete from radacct where acctuniqueid in ('mv-5', 'mv-7')`);
      await check();
      // A1's subscriber moves to B's tree, A's is deleted, then the rows are folded.
      await t.pool.query('update subscribers set reseller_id = $1 where id = $2', [B, subs.a1]);
      await t.pool.query('update subscribers set deleted_at = now() where id = $1', [subs.a]);
      await check();
      await t.pool.query('update subscribers set deleted_at = null where id = $1', [subs.a]);
      await t.pool.query('update subscribers set reseller_id = $1 where id = $2', [A1, subs.a1]);
      await check();
      await Promise.all([foldSessionHours(), foldNasOnline()]);
      expect(await one('select count(*) from session_hours where not folded')).toBe(0);
      expect(await one('select count(*) from nas_online where not folded')).toBe(0);
      await check();
      // Every session of the server stopped: no age is shown.
      await t.pool.query(`update radacct set acctstoptime = now() where nasipaddress = $1 and acctstoptime is null`, [
        nasIp,
      ]);
      expect(await check()).toBeNull();
    } finally {
      await t.pool.query(`delete from radacct where nasipaddress = $1`, [nasIp]);
      await t.pool.query(`delete from nas where nasname = $1`, [nasIp]);
    }
  });

  it("reseller_id narrows to a tree; another tree's is 403, a missing one 400", async () => {
    const sub = await api.get(`/api/dashboard?reseller_id=${A1}`, { token: resA });
    expect(sub.status).toBe(200);
    expect(sub.body.data.revenue.today).toBe(20.25);
    expect((await api.get(`/api/dashboard?reseller_id=${B}`, { token: resA })).status).toBe(403);
    expect((await api.get(`/api/dashboard?reseller_id=${A}`, { token: resA1 })).status).toBe(403);
    expect((await api.get(`/api/dashboard?reseller_id=${B}`, { token: admin })).body.data.revenue.today).toBe(500);
    // An access server nobody of B is online on: the admin's whole view lists it, the admin's view
    // of B does not, as B's own does not (before, the admin's view of B listed every server).
    await t.pool.query(`insert into nas (nasname, shortname, secret) values ('192.0.2.77', 'idle-tower', 's')`);
    try {
      const names = async (path: string, tok: string) =>
        ((await api.get(path, { token: tok })).body.data.nas as { name: string }[]).map((n) => n.name);
      expect(await names('/api/dashboard', admin)).toContain('idle-tower');
      expect(await names(`/api/dashboard?reseller_id=${B}`, admin)).toEqual(await names('/api/dashboard', resB));
      expect(await names(`/api/dashboard?reseller_id=${B}`, admin)).not.toContain('idle-tower');
    } finally {
      await t.pool.query(`delete from nas where nasname = '192.0.2.77'`);
    }
    expect((await api.get('/api/dashboard?reseller_id=999999', { token: admin })).status).toBe(400);
    expect((await api.get('/api/dashboard?reseller_id=x', { token: admin })).status).toBe(400);
    expect((await api.get('/api/dashboard')).status).toBe(401);
    expect(
      (await api.get('/api/dashboard', { token: token('user', { permissions: ['subscribers.view'] }) })).status,
    ).toBe(403);
  });
});

describe('GET /api/reports/revenue', () => {
  it('totals reconcile with the ledger for every grouping', async () => {
    const from = addDays(today, -60);
    const want = await ledgerRevenue(from, today, null);
    for (const by of ['method', 'plan', 'reseller', 'manager'])
      for (const group of ['day', 'week', 'month']) {
        const res = await api.get(`/api/reports/revenue?from=${from}&to=${today}&by=${by}&group=${group}&limit=500`, {
          token: admin,
        });
        expect(res.status).toBe(200);
        expect(res.body.totals).toEqual([expect.objectContaining({ currency: 'USD' })]);
        expect(cents(res.body.totals[0].amount)).toBe(want);
        const rowSum = res.body.data.reduce((s: number, r: { amount: number }) => s + cents(r.amount), 0);
        expect(rowSum).toBe(want);
        expect(res.body.pagination.total).toBe(res.body.data.length);
      }
  });

  it('by reseller and method, scoped to the caller', async () => {
    const res = await api.get(`/api/reports/revenue?by=reseller&from=${today}&to=${today}`, { token: resA });
    expect(res.status).toBe(200);
    const byKey = Object.fromEntries(res.body.data.map((r: { key: string; amount: number }) => [r.key, r.amount]));
    expect(byKey).toEqual({ [String(A)]: 150, [String(A1)]: 20.25 });
    const m = await api.get(`/api/reports/revenue?from=${today}&to=${today}`, { token: resB });
    expect(m.body.data).toEqual([{ period: today, key: 'cash', name: 'cash', currency: 'USD', amount: 500, count: 1 }]);
    expect((await api.get(`/api/reports/revenue?reseller_id=${A}`, { token: resB })).status).toBe(403);
  });

  it('pages rows and keeps the totals of the whole filter', async () => {
    const all = await api.get(`/api/reports/revenue?from=${today}&to=${today}`, { token: admin });
    const page = await api.get(`/api/reports/revenue?from=${today}&to=${today}&limit=1&page=2`, { token: admin });
    expect(page.body.data).toEqual([all.body.data[1]]);
    expect(page.body.pagination).toEqual({ page: 2, limit: 1, total: all.body.data.length });
    expect(page.body.totals).toEqual(all.body.totals);
  });

  it('CSV: same rows, text/csv, formula cells escaped', async () => {
    const json = await api.get(`/api/reports/revenue?by=reseller&from=${today}&to=${today}`, { token: admin });
    const csv = await api.get(`/api/reports/revenue?by=reseller&from=${today}&to=${today}&format=csv`, {
      token: admin,
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="revenue-/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe('period,key,name,currency,amount,count');
    expect(lines).toHaveLength(json.body.data.length + 1);
    expect(lines).toContain(`${today},${A1},"'=HYPERLINK(""http://x"")",USD,20.25,1`);
    const accept = await api.get(`/api/reports/revenue?by=reseller&from=${today}&to=${today}`, {
      token: admin,
      headers: { accept: 'text/csv' },
    });
    expect(accept.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(accept.text).toBe(csv.text);
    const forced = await api.get(`/api/reports/revenue?format=json`, { token: admin, headers: { accept: 'text/csv' } });
    expect(forced.headers.get('content-type')).toContain('application/json');
  });

  it('bad parameters are 400, an unknown report 404', async () => {
    expect((await api.get('/api/reports/revenue?group=year', { token: admin })).status).toBe(400);
    expect((await api.get('/api/reports/revenue?by=colour', { token: admin })).status).toBe(400);
    expect((await api.get('/api/reports/revenue?from=2026-13-01', { token: admin })).status).toBe(400);
    const order = await api.get('/api/reports/revenue?from=2026-02-01&to=2026-01-01', { token: admin });
    expect(order.status).toBe(400);
    expect(order.body.message).toBe('from must not be after to');
    expect((await api.get('/api/reports/revenue?format=xml', { token: admin })).status).toBe(400);
    const unknown = await api.get('/api/reports/profit', { token: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, message: 'report not found' });
  });
});

describe('GET /api/reports/reseller-statement', () => {
  it("opening + movements = closing = the reseller's balance", async () => {
    for (const [id, caller] of [
      [A, admin],
      [A1, resA],
    ] as const) {
      const res = await api.get(`/api/reports/reseller-statement?reseller_id=${id}&from=2000-01-01&to=${today}`, {
        token: caller,
      });
      expect(res.status).toBe(200);
      const s = res.body.statement;
      const balance = await one('select balance from resellers where id = $1', [id]);
      expect(cents(s.closing_balance)).toBe(balance);
      expect(s.opening_balance).toBe(0);
      const moved = res.body.data.reduce((sum: number, r: { amount: number }) => sum + cents(r.amount), 0);
      expect(cents(s.opening_balance) + moved).toBe(balance);
      expect(cents(res.body.data.at(-1).balance_after)).toBe(balance);
    }
    const a = await api.get(`/api/reports/reseller-statement?reseller_id=${A}&from=2000-01-01`, { token: admin });
    expect(a.body.statement.movements).toEqual({
      top_up: { amount: 1000, count: 1 },
      debit: { amount: -200, count: 1 },
      renewal: { amount: -30, count: 1 },
    });
    expect(a.body.data.map((r: { kind: string }) => r.kind)).toEqual(['top_up', 'debit', 'renewal']);
  });

  it('a range ending before today closes on the balance less what moved after it', async () => {
    const res = await api.get(
      `/api/reports/reseller-statement?reseller_id=${A}&from=2000-01-01&to=${addDays(today, -1)}`,
      {
        token: admin,
      },
    );
    expect(res.body.statement).toMatchObject({ opening_balance: 0, closing_balance: 0 });
    expect(res.body.data).toEqual([]);
  });

  it('reseller_id is required of an admin; a reseller gets its own; another tree is 403', async () => {
    const none = await api.get('/api/reports/reseller-statement', { token: admin });
    expect(none.status).toBe(400);
    expect(none.body.message).toBe('reseller_id is required');
    const own = await api.get('/api/reports/reseller-statement', { token: resA1 });
    expect(own.body.statement.reseller_id).toBe(A1);
    expect((await api.get(`/api/reports/reseller-statement?reseller_id=${A}`, { token: resB })).status).toBe(403);
    expect((await api.get(`/api/reports/reseller-statement?reseller_id=${A}`, { token: resA1 })).status).toBe(403);
  });
});

describe('the other reports', () => {
  it('aging: buckets by days past due, summing to the open balances', async () => {
    const { rows } = await t.pool.query<{ id: number }>(
      `select id from invoices where subscriber_id = $1 and status = 'partial'`,
      [subs.a1],
    );
    await t.pool.query(`update invoices set due_date = $2::date - 45 where id = $1`, [rows[0].id, today]);
    const res = await api.get('/api/reports/aging', { token: admin });
    expect(res.status).toBe(200);
    const a1 = res.body.data.find((r: { subscriber_id: number }) => r.subscriber_id === subs.a1);
    expect(a1).toMatchObject({ d31_60: 60.25, not_due: 0, total: 60.25, invoices: 1 });
    const total = res.body.data.reduce((s: number, r: { total: number }) => s + cents(r.total), 0);
    expect(total).toBe(
      await one(`select sum(total - paid_amount) from invoices where status in ('pending','partial','overdue')`),
    );
    const byReseller = await api.get('/api/reports/aging?by=reseller', { token: resA });
    expect(byReseller.body.data.map((r: { reseller_id: number }) => r.reseller_id).sort()).toEqual([A, A1].sort());
    expect((await api.get('/api/reports/aging?by=plan', { token: admin })).status).toBe(400);
  });

  it("aging: a permanently removed subscriber's open invoices are left out, and back with its row", async () => {
    const planId = await one('select service_id from subscribers where id = $1', [subs.b]);
    const gone = (await seedSubscriber(t.db, { resellerId: B, serviceId: planId, expiryDate: addDays(today, 100) })).id;
    await invoice(gone, 12.5);
    const rowsOf = async () => {
      const res = await api.get('/api/reports/aging?limit=500', { token: admin });
      const data = res.body.data as { subscriber_id: number; total: number }[];
      // The count of all rows comes from the grouping itself, before the names are joined.
      expect(res.body.pagination.total).toBe(data.length);
      return data;
    };
    expect((await rowsOf()).find((r) => r.subscriber_id === gone)).toMatchObject({ total: 12.5 });
    await t.pool.query('create table aging_gone as select * from subscribers where id = $1', [gone]);
    try {
      expect((await api.del(`/api/subscribers/${gone}/permanent`, { token: admin })).status).toBe(200);
      const after = await rowsOf();
      expect(after.find((r) => r.subscriber_id === gone)).toBeUndefined();
      expect(after.reduce((sum, r) => sum + cents(r.total), 0)).toBe(
        await one(
          `select sum(total - paid_amount) from invoices i where status in ('pending', 'partial', 'overdue')
              and exists (select 1 from subscribers s where s.id = i.subscriber_id)`,
        ),
      );
      // Per reseller the same: B's row is the sum of its subscribers' rows (before, it kept the 12.50).
      const perReseller = (await api.get('/api/reports/aging?by=reseller&limit=500', { token: admin })).body.data as {
        reseller_id: number;
        total: number;
      }[];
      const bOwes = after.filter((r) => (r as unknown as { reseller_id: number }).reseller_id === B);
      expect(cents(perReseller.find((r) => r.reseller_id === B)!.total)).toBe(
        bOwes.reduce((sum, r) => sum + cents(r.total), 0),
      );
      // The same id inserted again (a restore) is counted again.
      await t.pool.query('insert into subscribers select * from aging_gone');
      expect((await rowsOf()).find((r) => r.subscriber_id === gone)).toMatchObject({ total: 12.5 });
    } finally {
      await t.pool.query('drop table aging_gone');
    }
  });

  it('expiring: the range, auto-renew and whether the wallet covers the renewal', async () => {
    const res = await api.get(`/api/reports/expiring?from=${today}&to=${addDays(today, 7)}`, { token: admin });
    expect(res.status).toBe(200);
    // subs.a was renewed (expiry moved 30 days on); subs.a1 expired 40 days ago.
    expect(res.body.data.map((r: { id: number }) => r.id)).toEqual([subs.b]);
    await t.pool.query(`update subscribers set expiry_date = $2::date + 2, auto_renew = true where id = $1`, [
      subs.a,
      today,
    ]);
    const again = await api.get('/api/reports/expiring', { token: resA });
    expect(again.body.data).toEqual([
      expect.objectContaining({
        id: subs.a,
        auto_renew: true,
        renewal_price: 30,
        wallet_balance: 0,
        wallet_covers: false,
      }),
    ]);
    const b = await api.get('/api/reports/expiring', { token: resB });
    expect(b.body.data.map((r: { id: number }) => r.id)).toEqual([subs.b]);

    // With a 10% default tax the renewal invoice asks 33.00: 30.00 in the wallet does not cover it
    // (before, the report said it did and the sweep then refused the renewal).
    const covers = async () => (await api.get('/api/reports/expiring', { token: resA })).body.data[0].wallet_covers;
    expect((await api.put('/api/settings', { default_tax_rate: 10 }, { token: admin })).status).toBe(200);
    try {
      await t.pool.query('update subscribers set wallet_balance = 3000 where id = $1', [subs.a]);
      expect(await covers()).toBe(false);
      await t.pool.query('update subscribers set wallet_balance = 3300 where id = $1', [subs.a]);
      expect(await covers()).toBe(true);
    } finally {
      await t.pool.query('update subscribers set wallet_balance = 0 where id = $1', [subs.a]);
      await api.put('/api/settings', { default_tax_rate: 0 }, { token: admin });
    }
  });

  it('usage: top subscribers by bytes and totals per plan', async () => {
    await t.pool.query(
      `insert into daily_usage (subscriber_id, date, download_bytes, upload_bytes)
       values ($1, $4, 1000, 10), ($2, $4, 5000, 50), ($3, $4, 300, 3), ($1, $4::date - 400, 99999, 0)`,
      [subs.a, subs.a1, subs.b, today],
    );
    const res = await api.get('/api/reports/usage', { token: admin });
    expect(res.body.data.map((r: { subscriber_id: number }) => r.subscriber_id)).toEqual([subs.a1, subs.a, subs.b]);
    expect(res.body.data[0]).toMatchObject({ download_bytes: 5000, upload_bytes: 50, total_bytes: 5050 });
    expect(res.body.plans).toEqual([expect.objectContaining({ plan: 'Home 30', subscribers: 3, total_bytes: 6363 })]);
    const mine = await api.get('/api/reports/usage', { token: resB });
    expect(mine.body.data.map((r: { subscriber_id: number }) => r.subscriber_id)).toEqual([subs.b]);
  });

  it('usage: usage_monthly follows daily_usage, and any range equals sums over daily_usage', async () => {
    // Days over three months and a year back, written as the usage rollup writes (insert, then
    // insert ... on conflict do update), then corrected and deleted.
    await t.pool.query(
      `insert into daily_usage (subscriber_id, date, download_bytes, upload_bytes)
       select s, $4::date - d, s * 100 + d, d from unnest(array[$1, $2, $3]::int[]) s, generate_series(1, 75, 4) d
       on conflict (subscriber_id, date) do update
          set download_bytes = daily_usage.download_bytes + excluded.download_bytes,
              upload_bytes = daily_usage.upload_bytes + excluded.upload_bytes`,
      [subs.a, subs.a1, subs.b, today],
    );
    await t.pool.query(
      `insert into daily_usage as du (subscriber_id, date, download_bytes, upload_bytes)
       values ($1, $2::date - 5, 7, 7), ($1, $2::date - 6, 8, 8)
       on conflict (subscriber_id, date) do update set download_bytes = du.download_bytes + excluded.download_bytes`,
      [subs.b, today],
    );
    await t.pool.query(`update daily_usage set upload_bytes = upload_bytes + 1 where subscriber_id = $1`, [subs.a]);
    await t.pool.query(`delete from daily_usage where subscriber_id = $1 and date < $2::date - 60`, [subs.a1, today]);
    const monthly = await t.pool.query(`select month::text, subscriber_id, days, download_bytes, upload_bytes
                                          from usage_monthly where days <> 0 order by 1, 2`);
    const direct = await t.pool.query(`select date_trunc('month', date)::date::text as month, subscriber_id,
                                              count(*)::int as days, sum(download_bytes)::bigint as download_bytes,
                                              sum(upload_bytes)::bigint as upload_bytes
                                         from daily_usage group by 1, 2 order by 1, 2`);
    expect(monthly.rows).toEqual(direct.rows);

    const ranges = [
      { from: addDays(today, -365), to: today },
      { from: addDays(today, -30), to: today },
      { from: addDays(today, -70), to: addDays(today, -9) },
      { from: `${addDays(today, -40).slice(0, 7)}-01`, to: addDays(`${today.slice(0, 7)}-01`, -1) },
      { from: addDays(today, -3), to: addDays(today, -1) },
    ];
    for (const range of ranges)
      for (const [who, tok, path] of [
        ['admin', admin, null],
        ['reseller A', resA, await pathOf(A)],
      ] as const) {
        const res = await api.get(`/api/reports/usage?from=${range.from}&to=${range.to}&limit=2`, { token: tok });
        expect(res.status).toBe(200);
        const { rows } = await t.pool.query(
          `select u.subscriber_id, sum(download_bytes)::bigint as d, sum(upload_bytes)::bigint as u
             from daily_usage u join subscribers s on s.id = u.subscriber_id
            where date between $1 and $2 and ($3::text is null or s.reseller_id in (select id from resellers where path like $3))
            group by 1 order by sum(download_bytes + upload_bytes) desc, 1`,
          [range.from, range.to, path],
        );
        const label = `${who} ${range.from}..${range.to}`;
        expect({ label, total: res.body.pagination.total }).toEqual({ label, total: rows.length });
        expect({
          label,
          page: res.body.data.map((r: { subscriber_id: number; download_bytes: number; upload_bytes: number }) => [
            r.subscriber_id,
            r.download_bytes,
            r.upload_bytes,
          ]),
        }).toEqual({ label, page: rows.slice(0, 2).map((r) => [r.subscriber_id, Number(r.d), Number(r.u)]) });
        const planBytes = res.body.plans.reduce((sum: number, p: { total_bytes: number }) => sum + p.total_bytes, 0);
        expect({ label, planBytes }).toEqual({
          label,
          planBytes: rows.reduce((sum, r) => sum + Number(r.d) + Number(r.u), 0),
        });
      }
  });

  it('usage: plans, pages and counts follow random days, plan changes and moves to other resellers', async () => {
    // usage_monthly carries each subscriber's current plan and reseller (migration 0055): after every
    // step the report equals the plain sums over daily_usage joined to subscribers as they are now.
    const other = await seedPlan(t.db, { price: 100, name: 'Other' });
    const { rows: before } = await t.pool.query<{ id: number; service_id: number; reseller_id: number }>(
      'select id, service_id, reseller_id from subscribers where id = any($1) order by id',
      [[subs.a, subs.a1, subs.b]],
    );
    const plans = [before[0].service_id, other.id];
    const resellers = [A, A1, B];
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const ranges = [
      { from: addDays(today, -365), to: today },
      { from: addDays(today, -30), to: today },
      { from: addDays(today, -200), to: addDays(today, -20) },
      { from: addDays(today, -45), to: addDays(today, -44) },
    ];
    for (let step = 0; step < 6; step++) {
      const sub = before[rand(3)].id;
      await t.pool.query(
        `insert into daily_usage as du (subscriber_id, date, download_bytes, upload_bytes)
         select $1, $2::date - d, $3 + d, d % 7 from generate_series(0, 380, 1 + $4) d
         on conflict (subscriber_id, date) do update set download_bytes = du.download_bytes + excluded.download_bytes`,
        [sub, today, rand(5000), rand(40)],
      );
      if (step % 2 === 1)
        await t.pool.query('delete from daily_usage where subscriber_id = $1 and date = $2::date - 3', [sub, today]);
      await t.pool.query('update subscribers set service_id = $2, reseller_id = $3 where id = $1', [
        before[rand(3)].id,
        plans[rand(2)],
        resellers[rand(3)],
      ]);
      for (const range of ranges)
        for (const [who, tok, path] of [
          ['admin', admin, null],
          ['reseller A', resA, await pathOf(A)],
        ] as const) {
          const label = `step ${step} ${who} ${range.from}..${range.to}`;
          const { rows } = await t.pool.query<{ subscriber_id: number; service_id: number; total: string }>(
            `select u.subscriber_id, s.service_id, sum(download_bytes + upload_bytes)::bigint as total
               from daily_usage u join subscribers s on s.id = u.subscriber_id
              where date between $1 and $2 and ($3::text is null or s.reseller_id in (select id from resellers where path like $3))
              group by 1, 2 order by 3 desc, 1`,
            [range.from, range.to, path],
          );
          const perPlan = new Map<number, { subscribers: number; total_bytes: number }>();
          for (const r of rows) {
            const p = perPlan.get(r.service_id) ?? { subscribers: 0, total_bytes: 0 };
            perPlan.set(r.service_id, { subscribers: p.subscribers + 1, total_bytes: p.total_bytes + Number(r.total) });
          }
          for (const page of [1, 2]) {
            const res = await api.get(`/api/reports/usage?from=${range.from}&to=${range.to}&limit=2&page=${page}`, {
              token: tok,
            });
            expect(res.status).toBe(200);
            expect({
              label,
              total: res.body.pagination.total,
              page: res.body.data.map((r: { subscriber_id: number; total_bytes: number }) => [
                r.subscriber_id,
                r.total_bytes,
              ]),
              plans: Object.fromEntries(
                res.body.plans.map((p: { service_id: number; subscribers: number; total_bytes: number }) => [
                  p.service_id,
                  { subscribers: p.subscribers, total_bytes: p.total_bytes },
                ]),
              ),
            }).toEqual({
              label,
              total: rows.length,
              page: rows.slice((page - 1) * 2, page * 2).map((r) => [r.subscriber_id, Number(r.total)]),
              plans: Object.fromEntries(perPlan),
            });
          }
        }
    }
    const { rows: stale } = await t.pool.query(
      `select m.* from usage_monthly m join subscribers s on s.id = m.subscriber_id
        where m.service_id is distinct from s.service_id or m.reseller_id is distinct from s.reseller_id`,
    );
    expect(stale).toEqual([]);
    for (const s of before)
      await t.pool.query('update subscribers set service_id = $2, reseller_id = $3 where id = $1', [
        s.id,
        s.service_id,
        s.reseller_id,
      ]);
  });

  it('expiring: pages in expiry order, with the count of the whole range', async () => {
    const range = `from=${addDays(today, -60)}&to=${addDays(today, 60)}`;
    const first = await api.get(`/api/reports/expiring?${range}&limit=1`, { token: admin });
    const second = await api.get(`/api/reports/expiring?${range}&limit=1&page=2`, { token: admin });
    const expected = await t.pool.query<{ id: number }>(
      `select id from subscribers where deleted_at is null and expiry_date between $1::date - 60 and $1::date + 60
        order by expiry_date, id`,
      [today],
    );
    expect(expected.rows.length).toBeGreaterThan(1);
    expect(first.body.pagination.total).toBe(expected.rows.length);
    expect([first.body.data[0].id, second.body.data[0].id]).toEqual(expected.rows.slice(0, 2).map((r) => r.id));
    const mine = await api.get(`/api/reports/expiring?${range}&limit=1`, { token: resB });
    expect(mine.body.pagination.total).toBe(
      await one(
        `select count(*) from subscribers where deleted_at is null and reseller_id = $2
            and expiry_date between $1::date - 60 and $1::date + 60`,
        [today, B],
      ),
    );
  });

  it('cards: per batch sold, used and unused values', async () => {
    const made = await api.post('/api/cards/batches', { count: 3, value: 5 }, { token: admin });
    expect(made.status).toBe(201);
    const batchId = made.body.data.id;
    await t.pool.query(
      `update cards set status = 'used', used_at = now(), used_by_subscriber_id = $2 where id = (select min(id) from cards where batch_id = $1)`,
      [batchId, subs.a],
    );
    const res = await api.get('/api/reports/cards', { token: admin });
    expect(res.body.data).toEqual([
      expect.objectContaining({
        batch_id: batchId,
        count: 3,
        used: 1,
        unused: 2,
        sold_value: 15,
        used_value: 5,
        unused_value: 10,
      }),
    ]);
    // The operator's own batch is no reseller's.
    expect((await api.get('/api/reports/cards', { token: resA })).body.data).toEqual([]);
    const d = (await api.get('/api/dashboard', { token: admin })).body.data.cards;
    expect(d).toMatchObject({ sold: 15, redeemed: 5 });
    // view_all widens subscriber data to every tree, not card batches (shared/auth/policy.ts).
    const viewAll = token('reseller', { managerId: 43, resellerId: A, permissions: ['subscribers.view_all'] });
    expect((await api.get('/api/reports/cards', { token: viewAll })).body.data).toEqual([]);
    expect((await api.get(`/api/reports/cards?reseller_id=${B}`, { token: viewAll })).status).toBe(403);
    expect((await api.get('/api/dashboard', { token: viewAll })).body.data.cards).toMatchObject({
      sold: 0,
      redeemed: 0,
    });
    const otherTree = await api.get(`/api/dashboard?reseller_id=${B}`, { token: viewAll });
    expect(otherTree.status).toBe(200);
    expect(otherTree.body.data.cards).toMatchObject({ sold: 0, redeemed: 0 });
    const csv = await api.get('/api/reports/cards?format=csv', { token: admin });
    expect(csv.text.split('\r\n')[0]).toContain('batch_id,reseller_id');
  });
});

describe('malformed queries', () => {
  it('never reach a 5xx: every parameter of every route with bad values', async () => {
    const routes: Record<string, string[]> = {
      '/api/dashboard': ['reseller_id'],
      '/api/reports/revenue': ['from', 'to', 'group', 'by', 'reseller_id', 'page', 'limit', 'format'],
      '/api/reports/aging': ['by', 'reseller_id', 'page', 'limit', 'format'],
      '/api/reports/expiring': ['from', 'to', 'reseller_id', 'page', 'limit', 'format'],
      '/api/reports/usage': ['from', 'to', 'reseller_id', 'page', 'limit', 'format'],
      '/api/reports/reseller-statement': ['from', 'to', 'reseller_id', 'page', 'limit', 'format'],
      '/api/reports/cards': ['from', 'to', 'reseller_id', 'page', 'limit', 'format'],
    };
    const bad = ['', '%00', 'x', '-1', '1e999', '99999999999999999999', '0000-01-01', '9999-12-31', '2026-02-30', '[]'];
    const failures: string[] = [];
    for (const [path, params] of Object.entries(routes))
      for (const name of params)
        for (const value of bad)
          for (const caller of [admin, resA]) {
            const extra = path.endsWith('statement') && name !== 'reseller_id' ? `&reseller_id=${A}` : '';
            const res = await api.get(`${path}?${name}=${value}${extra}`, { token: caller });
            if (res.status >= 500) failures.push(`${path}?${name}=${value} -> ${res.status} ${res.text.slice(0, 80)}`);
          }
    expect(failures).toEqual([]);
  });
});

describe('plan change credits', () => {
  it('an upgrade and straight back moves neither revenue nor top-ups: the credit is a reversal, not cash', async () => {
    const C = (await seedReseller(t.db, { name: 'Gamma' })).id;
    const cheap = await seedPlan(t.db, { price: 3000 });
    const dear = await seedPlan(t.db, { price: 6000 });
    for (const p of [cheap, dear])
      expect(
        (
          await api.post(
            `/api/resellers/${C}/service-limits`,
            { service_id: p.id, max_subscribers: null },
            { token: admin },
          )
        ).status,
      ).toBe(200);
    const sub = (await seedSubscriber(t.db, { resellerId: C, serviceId: cheap.id, expiryDate: addDays(today, 15) })).id;
    const figures = async () => {
      const d = (await api.get('/api/dashboard', { token: admin })).body.data.revenue;
      const r = await api.get(`/api/reports/revenue?from=${today}&to=${today}&by=method`, { token: admin });
      return { today: d.today, topups: d.wallet_topups.today, report: r.body.totals[0].amount, rows: r.body.data };
    };
    const before = await figures();
    const move = async (serviceId: number) =>
      expect(
        (
          await api.post(
            `/api/subscribers/${sub}/change-service`,
            { service_id: serviceId, charge_difference: true },
            { token: admin },
          )
        ).status,
      ).toBe(200);
    // Up: 15 days at 60.00 against 30.00 a month, 15.00 invoiced. Back: 15.00 credited, which pays
    // that invoice from the wallet. No money came in.
    await move(dear.id);
    await move(cheap.id);
    const { rows: ledger } = await t.pool.query(
      `select type, method, amount from transactions where subscriber_id = $1 order by id`,
      [sub],
    );
    expect(ledger).toEqual([
      { type: 'plan_change_credit', method: null, amount: -1500 },
      { type: 'invoice_payment', method: 'wallet', amount: 1500 },
    ]);
    const after = await figures();
    // Before: the credit counted as a 15.00 top-up and its wallet payment as 15.00 of revenue.
    expect([after.today, after.topups, after.report]).toEqual([before.today, before.topups, before.report]);
    const today0 = (rows: { key: string; amount: number }[], key: string) =>
      rows.filter((r) => r.key === key).reduce((s, r) => s + cents(r.amount), 0);
    expect(today0(after.rows, 'plan_change_credit')).toBe(-1500);
    expect(today0(after.rows, 'wallet') - today0(before.rows, 'wallet')).toBe(1500);
  });
});
