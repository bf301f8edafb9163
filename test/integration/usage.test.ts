/**
 * The usage rollup (sessions' growth and Stops found through usage_seen, moved sessions' usage_deltas) and the FUP engine without
 * FreeRADIUS: radacct rows are written the way FreeRADIUS's PostgreSQL queries write them (insert at
 * Start, update of the cumulative octets at Interim-Update and Stop), so edge cases are cheap to reach.
 * freeradius.test.ts covers the same path end to end with radclient.
 */
import { eq } from 'drizzle-orm';
import fc from 'fast-check';
import { rollupUsage } from '../../shared/access/usage-rollup';
import { dailyUsage, outbox, subscribers } from '../../shared/db/schema';
import { GIB } from '../../shared/domain/fup';
import { RATE_LIMIT_EVENT } from '../../shared/fup-rate';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let reseller: number;
let plan: number;
const saved = {
  USAGE_INTERVAL_SECONDS: process.env.USAGE_INTERVAL_SECONDS,
  USAGE_ROLLUP_SECONDS: process.env.USAGE_ROLLUP_SECONDS,
};

beforeAll(async () => {
  // The tests run the engine and the rollup themselves: the app's timers would take their deltas
  // (a loaded CI run had the app's rollup apply 78 of the 120 deltas three concurrent rollups counted).
  process.env.USAGE_INTERVAL_SECONDS = '0';
  process.env.USAGE_ROLLUP_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (
    await api.post('/api/resellers', { name: 'usage shop', balance: 1000, currency: 'USD' }, { token: admin })
  ).body.data.id;
  plan = (
    await api.post(
      '/api/services',
      {
        name: 'metered',
        price: 10,
        duration_days: 30,
        currency: 'USD',
        rate_limit: '20M/20M',
        monthly_quota_gb: 10,
        fup_tiers: [
          { level: 1, threshold_gb: 1, rate_limit: '5M/5M' },
          { level: 3, threshold_gb: 0, rate_limit: '256k/256k' },
        ],
      },
      { token: admin },
    )
  ).body.data.id;
  await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: plan }, { token: admin });
});
afterAll(async () => {
  await t.close();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

let seq = 0;
async function mkSub() {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `u${seq}@usage`, password: 'secret1', service_id: plan, reseller_id: reseller },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data as { id: number; username: string };
}

const start = (username: string, session: string) =>
  t.pool.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime, acctinputoctets, acctoutputoctets)
   values ($1, $1, $2, '10.0.0.1', now(), now(), 0, 0)`,
    [session, username],
  );
const interim = (session: string, up: number, down: number) =>
  t.pool.query(
    'update radacct set acctinputoctets = $2, acctoutputoctets = $3, acctupdatetime = now() where acctuniqueid = $1 and acctstoptime is null',
    [session, up, down],
  );
const stop = (session: string, up: number, down: number) =>
  t.pool.query(
    'update radacct set acctinputoctets = $2, acctoutputoctets = $3, acctstoptime = now() where acctuniqueid = $1 and acctstoptime is null',
    [session, up, down],
  );
const rollup = () => rollupUsage(t.db);
const pendingDeltas = async () => Number((await t.pool.query('select count(*) from usage_deltas')).rows[0].count);
const sub = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const usageRows = (id: number) => t.db.select().from(dailyUsage).where(eq(dailyUsage.subscriberId, id));
const run = (today?: string) =>
  t.app.broker.call('usage.run', today ? { today } : {}) as Promise<{
    today: string;
    reset: number;
    evaluated: number;
    changed: number;
  }>;
const events = async (id: number) =>
  (await t.db.select().from(outbox).where(eq(outbox.event, RATE_LIMIT_EVENT)).orderBy(outbox.id))
    .map((o) => o.payload as { subscriber_id: number; fup_level: number; rate_limit: string })
    .filter((p) => p.subscriber_id === id);
const today = () => new Date().toISOString().slice(0, 10);

describe('rollup of radacct octets', () => {
  it('counts each increase once: repeated totals add nothing, a lower total adds nothing, a stop adds the rest', async () => {
    const s = await mkSub();
    await start(s.username, 'r1');
    // Interim-Updates fire no trigger: each rollup counts what the open session's totals grew by.
    for (const [up, down] of [
      [100, 1000],
      [100, 1000],
      [50, 900],
      [300, 1500],
    ]) {
      await interim('r1', up, down);
      expect(await pendingDeltas()).toBe(0);
      await rollup();
    }
    expect((await sub(s.id)).dailyQuotaUsed).toBe(1100 + 850);
    await stop('r1', 400, 2000);
    await stop('r1', 400, 2000); // a second Stop matches no open row
    // The Stop fires no trigger either: the next rollup finds the session closed and counts the rest.
    expect((await sub(s.id)).dailyQuotaUsed).toBe(1100 + 850);
    expect(await pendingDeltas()).toBe(0);
    await rollup();
    expect(await pendingDeltas()).toBe(0);
    const row = await sub(s.id);
    // 100+1000, then nothing, nothing (lower), +200+500 from the previous total (50/900), +100+500.
    expect(row.dailyQuotaUsed).toBe(1100 + 0 + 0 + (250 + 600) + (100 + 500));
    expect(row.monthlyQuotaUsed).toBe(row.dailyQuotaUsed);
    expect(row.usageDay).toBe(today());
    // Marked for the FUP engine in fup_queue (migration 0022), not by a flag on the row.
    const queued = await t.pool.query('select 1 from fup_queue where subscriber_id = $1', [s.id]);
    expect(queued.rowCount).toBe(1);
    expect(await usageRows(s.id)).toEqual([
      { subscriberId: s.id, date: today(), downloadBytes: 1000 + 600 + 500, uploadBytes: 100 + 250 + 100 },
    ]);
  });

  it('property: any sequence of cumulative totals (repeats, retransmits), rolled up at any points, counts exactly the final totals', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(5_000_000), fc.nat(50_000_000), fc.nat(2), fc.boolean()), {
          minLength: 1,
          maxLength: 12,
        }),
        async (steps) => {
          n += 1;
          const s = await mkSub();
          await start(s.username, `p${n}`);
          let up = 0;
          let down = 0;
          for (const [du, dd, repeats, rollupAfter] of steps) {
            up += du;
            down += dd;
            for (let i = 0; i <= repeats; i++) await interim(`p${n}`, up, down);
            if (rollupAfter) await rollup();
          }
          await stop(`p${n}`, up, down);
          await rollup();
          const row = await sub(s.id);
          expect(row.dailyQuotaUsed).toBe(up + down);
          const [day] = await usageRows(s.id);
          expect([day?.uploadBytes ?? 0, day?.downloadBytes ?? 0]).toEqual([up, down]);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('a session that starts with traffic already counted (Stop without Start) counts it once', async () => {
    const s = await mkSub();
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime, acctinputoctets, acctoutputoctets)
       values ('late', 'late', $1, '10.0.0.1', now(), now(), 7, 70)`,
      [s.username],
    );
    await rollup();
    expect((await sub(s.id)).dailyQuotaUsed).toBe(77);
  });

  it('ignores accounting of unknown and soft-deleted usernames', async () => {
    await start('ghost@usage', 'g1');
    await interim('g1', 10, 10);
    const s = await mkSub();
    expect((await api.del(`/api/subscribers/${s.id}`, { token: admin })).status).toBe(200);
    await start(s.username, 'd1');
    await interim('d1', 10, 10);
    await rollup();
    expect(await pendingDeltas()).toBe(0);
    expect((await sub(s.id)).dailyQuotaUsed).toBe(0);
    expect(await usageRows(s.id)).toEqual([]);
  });

  it('traffic on a new day restarts the daily counter, and on a new month the monthly one too', async () => {
    const s = await mkSub();
    await start(s.username, 'n1');
    await interim('n1', 0, 1000);
    await rollup();
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15))
      .toISOString()
      .slice(0, 10);
    await t.db.update(subscribers).set({ usageDay: lastMonth }).where(eq(subscribers.id, s.id));
    await interim('n1', 0, 1500);
    await rollup();
    let row = await sub(s.id);
    expect([row.dailyQuotaUsed, row.monthlyQuotaUsed, row.usageDay]).toEqual([500, 500, today()]);

    // Same month, another day: only the daily counter restarts. The trigger dates traffic by the
    // database's clock, so the other day is the 1st, or the 2nd when today is the 1st (any day but
    // today restarts the daily counter), and the check runs every day of the month.
    const otherDay = `${today().slice(0, 8)}${today().endsWith('-01') ? '02' : '01'}`;
    await t.db.update(subscribers).set({ usageDay: otherDay }).where(eq(subscribers.id, s.id));
    await interim('n1', 0, 1600);
    await rollup();
    row = await sub(s.id);
    expect([row.dailyQuotaUsed, row.monthlyQuotaUsed, row.usageDay]).toEqual([100, 600, today()]);
  });
});

describe('Stops through the rollup (migration 0032)', () => {
  it('a Stop clears the online state and adds its octets at the rollup; with no new octets it only clears it', async () => {
    const s = await mkSub();
    await start(s.username, 'st1');
    expect((await sub(s.id)).isOnline).toBe(true);
    await interim('st1', 10, 100);
    await rollup();
    // Another day of the same month: the Stop restarts the daily counter and keeps the monthly one.
    const otherDay = `${today().slice(0, 8)}${today().endsWith('-01') ? '02' : '01'}`;
    await t.db.update(subscribers).set({ usageDay: otherDay }).where(eq(subscribers.id, s.id));
    await stop('st1', 30, 300);
    expect((await sub(s.id)).isOnline).toBe(true);
    await rollup();
    let row = await sub(s.id);
    expect([row.isOnline, row.ipAddress, row.dailyQuotaUsed, row.monthlyQuotaUsed, row.usageDay]).toEqual([
      false,
      null,
      220,
      330,
      today(),
    ]);

    await start(s.username, 'st2');
    expect((await sub(s.id)).isOnline).toBe(true);
    await stop('st2', 0, 0);
    await rollup();
    row = await sub(s.id);
    expect([row.isOnline, row.dailyQuotaUsed, row.monthlyQuotaUsed]).toEqual([false, 220, 330]);
    expect(await usageRows(s.id)).toEqual([
      { subscriberId: s.id, date: today(), downloadBytes: 100 + 200, uploadBytes: 10 + 20 },
    ]);
  });

  it('stopping one of two sessions keeps the subscriber online and counts the octets', async () => {
    const s = await mkSub();
    await start(s.username, 'tw1');
    await start(s.username, 'tw2');
    await stop('tw1', 5, 50);
    await rollup();
    let row = await sub(s.id);
    expect([row.isOnline, row.dailyQuotaUsed]).toEqual([true, 55]);
    await stop('tw2', 1, 1);
    await rollup();
    row = await sub(s.id);
    expect([row.isOnline, row.dailyQuotaUsed]).toEqual([false, 57]);
  });

  it('a session moved to another username: the old subscriber goes offline, the new one online with the new octets', async () => {
    const a = await mkSub();
    const b = await mkSub();
    await start(a.username, 'mv1');
    await interim('mv1', 1, 10);
    await t.pool.query(
      `update radacct set username = $2, acctinputoctets = 3, acctoutputoctets = 30 where acctuniqueid = $1`,
      ['mv1', b.username],
    );
    await rollup();
    const [ra, rb] = [await sub(a.id), await sub(b.id)];
    expect([ra.isOnline, ra.dailyQuotaUsed]).toEqual([false, 11]);
    expect([rb.isOnline, rb.dailyQuotaUsed]).toEqual([true, 22]);
  });
});

describe('the rollup itself', () => {
  it('deltas of two days: the daily counter and usage_day take the later day, the month both, daily_usage one row each', async () => {
    const s = await mkSub();
    // Fixed days of one month: the rollup compares them with usage_day only, not with today.
    const [day1, day2] = ['2026-03-10', '2026-03-11'];
    await t.pool.query(
      `insert into usage_deltas (username, day, upload, download, refresh) values ($1, $2, 1, 10, false), ($1, $3, 2, 20, false), ($1, $3, 3, 30, false)`,
      [s.username, day1, day2],
    );
    await rollup();
    const row = await sub(s.id);
    expect([row.dailyQuotaUsed, row.monthlyQuotaUsed, row.usageDay]).toEqual([55, 66, day2]);
    expect((await usageRows(s.id)).sort((a, b) => a.date.localeCompare(b.date))).toEqual([
      { subscriberId: s.id, date: day1, downloadBytes: 10, uploadBytes: 1 },
      { subscriberId: s.id, date: day2, downloadBytes: 50, uploadBytes: 5 },
    ]);
  });

  it('rollups at once apply each delta and each session growth once, and a backlog larger than a batch goes in batches', async () => {
    const subs = await Promise.all([mkSub(), mkSub(), mkSub()]);
    for (const [i, s] of subs.entries()) await start(s.username, `rb${i}`);
    for (let step = 1; step <= 40; step++) for (const [i] of subs.entries()) await interim(`rb${i}`, step, 10 * step);
    for (const s of subs) {
      await t.pool.query(
        `insert into usage_deltas (username, day, upload, download, refresh)
         select $1, (now() at time zone 'UTC')::date, 1, 10, false from generate_series(1, 40)`,
        [s.username],
      );
    }
    const results = await Promise.all([rollupUsage(t.db, 7), rollupUsage(t.db, 7), rollupUsage(t.db, 7)]);
    // Each waited for the lock: none returned before every delta was applied, none applied one twice.
    expect(await pendingDeltas()).toBe(0);
    expect(results.reduce((n, r) => n + r.deltas, 0)).toBe(120);
    expect(results.reduce((n, r) => n + r.sessions, 0)).toBe(3);
    for (const s of subs) expect((await sub(s.id)).dailyQuotaUsed).toBe(2 * (40 + 400));
  });

  it('a session deleted while open loses its usage_seen row at the next rollup, counting nothing', async () => {
    const s = await mkSub();
    await start(s.username, 'gone1');
    await interim('gone1', 5, 50);
    const seenRows = async () =>
      Number(
        (
          await t.pool.query(
            `select count(*) from usage_seen v join radacct r using (radacctid) where r.acctuniqueid = 'gone1'`,
          )
        ).rows[0].count,
      );
    expect(await seenRows()).toBe(1);
    const { rows } = await t.pool.query(`delete from radacct where acctuniqueid = 'gone1' returning radacctid`);
    await rollup();
    expect(
      Number(
        (await t.pool.query('select count(*) from usage_seen where radacctid = $1', [rows[0].radacctid])).rows[0].count,
      ),
    ).toBe(0);
    expect((await sub(s.id)).dailyQuotaUsed).toBe(0);
  });

  it('a Stop during a rollup is counted once, from the totals that rollup stored', async () => {
    const s = await mkSub();
    await start(s.username, 'rs1');
    await interim('rs1', 10, 100);
    // The Stop commits while the rollup's transaction, which stored 10/100 for the session, is open
    // (it fires no trigger, so it does not wait for the rollup's row lock).
    await t.db.transaction(async (tx) => {
      expect((await rollupUsage(tx)).sessions).toBe(1);
      await stop('rs1', 30, 300);
    });
    await rollup();
    expect((await sub(s.id)).dailyQuotaUsed).toBe(330);
  });
});

describe('FUP engine', () => {
  it('a used-up monthly quota drops to the last tier; level changes write the tier group and one event each', async () => {
    const s = await mkSub();
    await start(s.username, 'f1');
    await interim('f1', 0, 2 * GIB);
    await run();
    expect((await sub(s.id)).fupLevel).toBe(1);
    await interim('f1', 0, 3 * GIB);
    await t.pool.query('update radacct set acctoutputoctets = acctoutputoctets + $2 where acctuniqueid = $1', [
      'f1',
      8 * GIB,
    ]);
    await run();
    expect((await sub(s.id)).fupLevel).toBe(3);
    const groups = await t.pool.query(
      'select groupname, priority from radusergroup where username = $1 order by priority',
      [s.username],
    );
    expect(groups.rows).toEqual([
      { groupname: `plan_${plan}_fup3`, priority: 0 },
      { groupname: `plan_${plan}`, priority: 1 },
    ]);
    expect((await events(s.id)).map((e) => [e.fup_level, e.rate_limit])).toEqual([
      [1, '5M/5M'],
      [3, '256k/256k'],
    ]);
  });

  it('two engines running at once apply each change once', async () => {
    const subs = await Promise.all([mkSub(), mkSub(), mkSub()]);
    for (const [i, s] of subs.entries()) {
      await start(s.username, `c${i}`);
      await interim(`c${i}`, 0, 2 * GIB);
    }
    await Promise.all([run(), run(), run()]);
    for (const s of subs) {
      expect((await sub(s.id)).fupLevel).toBe(1);
      expect(await events(s.id)).toHaveLength(1);
    }
  });

  it("the plan's tier groups carry the tier rate (:=) and Fall-Through so the plan group still applies", async () => {
    const res = await t.pool.query(
      // MikroTik's plain groups; each other vendor's copy (`plan_<id>@cisco`...) is freeradius-vendors.test.ts's.
      `select groupname, attribute, op, value from radgroupreply where groupname like $1 and groupname not like '%@%' order by groupname, attribute`,
      [`plan_${plan}%`],
    );
    expect(res.rows).toEqual([
      { groupname: `plan_${plan}`, attribute: 'Mikrotik-Rate-Limit', op: '=', value: '20M/20M' },
      { groupname: `plan_${plan}_fup1`, attribute: 'Fall-Through', op: '=', value: 'Yes' },
      { groupname: `plan_${plan}_fup1`, attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '5M/5M' },
      { groupname: `plan_${plan}_fup3`, attribute: 'Fall-Through', op: '=', value: 'Yes' },
      { groupname: `plan_${plan}_fup3`, attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '256k/256k' },
    ]);
  });

  it('bulk reset_fup lifts every throttled subscriber of the batch with one rate event each; unthrottled ones get none', async () => {
    const [a, b, c] = [await mkSub(), await mkSub(), await mkSub()];
    for (const s of [a, b]) {
      await start(s.username, `b-${s.id}`);
      await interim(`b-${s.id}`, 0, 2 * GIB);
    }
    await run();
    const res = await api.post(
      '/api/subscribers/bulk-action',
      { ids: [a.id, b.id, c.id], action: 'reset_fup', payload: {} },
      { token: admin },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.succeeded).toEqual([a.id, b.id, c.id]);
    for (const s of [a, b]) {
      expect((await sub(s.id)).fupLevel).toBe(0);
      expect((await events(s.id)).map((e) => [e.fup_level, e.rate_limit])).toEqual([
        [1, '5M/5M'],
        [0, '20M/20M'],
      ]);
    }
    expect(await events(c.id)).toEqual([]);
    const groups = await t.pool.query('select groupname from radusergroup where username = any($1) order by username', [
      [a.username, b.username],
    ]);
    expect(groups.rows).toEqual([{ groupname: `plan_${plan}` }, { groupname: `plan_${plan}` }]);
  });

  it('renew resets counters and level and removes the tier group (the reconnect applies the plan rate)', async () => {
    const s = await mkSub();
    await start(s.username, 'rn');
    await interim('rn', 0, 2 * GIB);
    await run();
    expect((await sub(s.id)).fupLevel).toBe(1);
    expect((await api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin })).status).toBe(200);
    const row = await sub(s.id);
    expect([row.fupLevel, row.dailyQuotaUsed, row.monthlyQuotaUsed]).toEqual([0, 0, 0]);
    const groups = await t.pool.query('select groupname from radusergroup where username = $1', [s.username]);
    expect(groups.rows).toEqual([{ groupname: `plan_${plan}` }]);
  });
});

// Last: a run with a future date moves every subscriber's counters to that day.
describe('day and month boundaries', () => {
  it('usage.run resets the counters of an earlier day (monthly kept in the same month, reset in a new one)', async () => {
    const a = await mkSub();
    const b = await mkSub();
    await t.db
      .update(subscribers)
      .set({ dailyQuotaUsed: 10, monthlyQuotaUsed: 100, usageDay: '2031-05-10' })
      .where(eq(subscribers.id, a.id));
    await t.db
      .update(subscribers)
      .set({ dailyQuotaUsed: 10, monthlyQuotaUsed: 100, usageDay: '2031-04-30' })
      .where(eq(subscribers.id, b.id));
    const res = await run('2031-05-11');
    expect(res.reset).toBeGreaterThanOrEqual(2);
    const [ra, rb] = [await sub(a.id), await sub(b.id)];
    expect([ra.dailyQuotaUsed, ra.monthlyQuotaUsed, ra.usageDay]).toEqual([0, 100, '2031-05-11']);
    expect([rb.dailyQuotaUsed, rb.monthlyQuotaUsed, rb.usageDay]).toEqual([0, 0, '2031-05-11']);
  });

  it("usage.run takes the database's UTC date by default and refuses a malformed one", async () => {
    const res = await run();
    const [{ today: dbToday }] = (await t.pool.query("select ((now() at time zone 'UTC')::date)::text as today")).rows;
    expect(res).toMatchObject({ today: dbToday });
    await expect(run('11/05/2031')).rejects.toMatchObject({ code: 400, message: 'today must be a date (YYYY-MM-DD)' });
  });
});
