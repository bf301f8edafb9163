/**
 * A real FreeRADIUS (Debian's freeradius + freeradius-postgresql) on the shipped configuration
 * (deploy/freeradius, started by its run.sh on this test's database and on free ports), driven
 * with radclient. Subscribers, plans and the NAS are made through the API; the assertions read the
 * RADIUS answers, the API and the database rows.
 */
import { eq, sql } from 'drizzle-orm';
import { rollupUsage } from '../../shared/access/usage-rollup';
import { outbox, radcheck, subscribers } from '../../shared/db/schema';
import { GIB } from '../../shared/domain/fup';
import { RATE_LIMIT_EVENT } from '../../shared/fup-rate';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { startFreeradius, type Radius } from '../helpers/freeradius';
import { waitFor } from '../helpers/wait';

const SECRET = 'radius-test-secret';

let t: TestApp;
let api: ReturnType<typeof client>;
let radius: Radius;
const admin = adminToken();
let reseller: number;
let home: number; // pool + rate limit + fair-use tiers
let bound: number; // binds MACs

const login = (username: string, password: string, mac?: string) => radius.login(username, password, mac);
const acct = (username: string, session: string, status: string, extra: Record<string, string | number> = {}) =>
  radius.acct(username, session, status, extra);

let seq = 0;
async function mkSub(extra: Record<string, unknown> = {}) {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    {
      username: `fr${seq}@isp`,
      password: `pass-${seq}`,
      service_id: home,
      reseller_id: reseller,
      ...extra,
    },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return { ...(res.body.data as { id: number; username: string }), password: `pass-${seq}` };
}

/** The MAC binding's radcheck rows of a user: the bound MAC, or the mark that one is to be bound. */
const macRows = async (username: string) =>
  (
    await t.db
      .select()
      .from(radcheck)
      .where(
        sql`${radcheck.username} = ${username} and ${radcheck.attribute} in ('Calling-Station-Id', 'Tmp-String-1')`,
      )
  ).map((r) => [r.attribute, r.op, r.value]);
const detail = async (id: number) => (await api.get(`/api/subscribers/${id}`, { token: admin })).body;
const runUsage = (today?: string) => t.app.broker.call('usage.run', today ? { today } : {});
const rateEvents = async (id: number) =>
  (await t.db.select().from(outbox).where(eq(outbox.event, RATE_LIMIT_EVENT)).orderBy(outbox.id))
    .map((o) => o.payload as { subscriber_id: number; username: string; rate_limit: string | null; fup_level: number })
    .filter((p) => p.subscriber_id === id);

const savedInterval = process.env.USAGE_INTERVAL_SECONDS;
const savedRollup = process.env.USAGE_ROLLUP_SECONDS;

beforeAll(async () => {
  // The usage service runs only when called, so each step's outcome is the test's own run's.
  process.env.USAGE_INTERVAL_SECONDS = '0';
  // The app's own rollup, every second: the first accounting test waits for it rather than calling it.
  process.env.USAGE_ROLLUP_SECONDS = '1';
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (
    await api.post('/api/resellers', { name: 'radius shop', balance: 1000, currency: 'USD' }, { token: admin })
  ).body.data.id;
  home = (
    await api.post(
      '/api/services',
      {
        name: 'home',
        price: 10,
        duration_days: 30,
        currency: 'USD',
        rate_limit: '10M/20M',
        pool_name: 'home_pool',
        fup_tiers: [
          { level: 1, threshold_gb: 2, rate_limit: '4M/4M' },
          { level: 2, threshold_gb: 6, rate_limit: '1M/1M' },
        ],
      },
      { token: admin },
    )
  ).body.data.id;
  bound = (
    await api.post(
      '/api/services',
      { name: 'bound', price: 10, duration_days: 30, currency: 'USD', rate_limit: '5M/5M', mac_binding: true },
      { token: admin },
    )
  ).body.data.id;
  for (const plan of [home, bound]) {
    expect(
      (await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: plan }, { token: admin })).status,
    ).toBe(200);
  }
  // FreeRADIUS reads its clients from the nas table once, at start: the NAS exists first.
  expect(
    (await api.post('/api/nas', { name: 'lab', ip_address: '127.0.0.1', secret: SECRET }, { token: admin })).status,
  ).toBe(201);

  radius = await startFreeradius(t, SECRET);
}, 60_000);

afterAll(async () => {
  if (radius) await radius.stop();
  if (t) await t.close();
  if (savedInterval === undefined) delete process.env.USAGE_INTERVAL_SECONDS;
  else process.env.USAGE_INTERVAL_SECONDS = savedInterval;
  if (savedRollup === undefined) delete process.env.USAGE_ROLLUP_SECONDS;
  else process.env.USAGE_ROLLUP_SECONDS = savedRollup;
});

describe('Access-Request', () => {
  it('accepts an active subscriber with the plan pool and Mikrotik-Rate-Limit; a static address comes as Framed-IP-Address', async () => {
    const s = await mkSub();
    const res = await login(s.username, s.password);
    expect(res.code).toBe('Access-Accept');
    expect(res.attrs['Framed-Pool']).toBe('home_pool');
    expect(res.attrs['Mikrotik-Rate-Limit']).toBe('10M/20M');

    const fixed = await mkSub({ static_ip: '10.20.0.7' });
    const res2 = await login(fixed.username, fixed.password);
    expect(res2.code).toBe('Access-Accept');
    expect(res2.attrs['Framed-IP-Address']).toBe('10.20.0.7');
    expect(res2.attrs['Mikrotik-Rate-Limit']).toBe('10M/20M');
  });

  it('rejects a wrong password and an unknown user', async () => {
    const s = await mkSub();
    expect((await login(s.username, 'not-the-password')).code).toBe('Access-Reject');
    expect((await login('nobody@isp', 'whatever')).code).toBe('Access-Reject');
  });

  it('rejects an inactive subscriber, and accepts it again once activated', async () => {
    const s = await mkSub();
    expect((await api.post(`/api/subscribers/${s.id}/deactivate`, {}, { token: admin })).status).toBe(200);
    expect((await login(s.username, s.password)).code).toBe('Access-Reject');
    expect((await api.post(`/api/subscribers/${s.id}/activate`, {}, { token: admin })).status).toBe(200);
    expect((await login(s.username, s.password)).code).toBe('Access-Accept');
  });

  it('rejects an expired subscriber: created past expiry, and one whose Expiration day came since its rows were written', async () => {
    const past = await mkSub({ expiry_date: '2020-01-31' });
    expect((await login(past.username, past.password)).code).toBe('Access-Reject');

    const s = await mkSub();
    expect((await login(s.username, s.password)).code).toBe('Access-Accept');
    // Time passing, without any job: the Expiration row now names a day already begun.
    await t.db
      .update(radcheck)
      .set({ value: sql`to_char(current_date, 'Mon DD YYYY') || ' 00:00:00'` })
      .where(sql`${radcheck.username} = ${s.username} and ${radcheck.attribute} = 'Expiration'`);
    expect((await login(s.username, s.password)).code).toBe('Access-Reject');
  });

  it('rejects a soft-deleted subscriber', async () => {
    const s = await mkSub();
    expect((await api.del(`/api/subscribers/${s.id}`, { token: admin })).status).toBe(200);
    expect((await login(s.username, s.password)).code).toBe('Access-Reject');
  });
});

describe('MAC binding', () => {
  it('binds the first accepted Calling-Station-Id, rejects other MACs, and reset-mac lets the next login rebind', async () => {
    const s = await mkSub({ service_id: bound });
    expect(await macRows(s.username)).toEqual([['Tmp-String-1', ':=', 'bind-mac']]);
    // A wrong password from a new MAC binds nothing.
    expect((await login(s.username, 'wrong', '11:22:33:44:55:66')).code).toBe('Access-Reject');
    expect((await detail(s.id)).data.mac_address).toBeNull();

    // Routers spell MACs in several ways; the bound form is the API's.
    expect((await login(s.username, s.password, 'aa-bb-cc-dd-ee-01')).code).toBe('Access-Accept');
    expect((await detail(s.id)).data.mac_address).toBe('AA:BB:CC:DD:EE:01');
    expect(await macRows(s.username)).toEqual([['Calling-Station-Id', '==', 'AA:BB:CC:DD:EE:01']]);

    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:02')).code).toBe('Access-Reject');
    expect((await login(s.username, s.password, 'aabb.ccdd.ee01')).code).toBe('Access-Accept');

    expect((await api.post(`/api/subscribers/${s.id}/reset-mac`, {}, { token: admin })).status).toBe(200);
    expect((await detail(s.id)).data.mac_address).toBeNull();
    expect(await macRows(s.username)).toEqual([['Tmp-String-1', ':=', 'bind-mac']]);
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:02')).code).toBe('Access-Accept');
    expect((await detail(s.id)).data.mac_address).toBe('AA:BB:CC:DD:EE:02');
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:01')).code).toBe('Access-Reject');
  });

  it('keeps the binding through a resync of the access rows, and binds nothing on a plan without binding', async () => {
    const s = await mkSub({ service_id: bound });
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:10')).code).toBe('Access-Accept');
    // Deactivate + activate rebuild the derived radcheck rows from the subscriber.
    await api.post(`/api/subscribers/${s.id}/deactivate`, {}, { token: admin });
    await api.post(`/api/subscribers/${s.id}/activate`, {}, { token: admin });
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:11')).code).toBe('Access-Reject');
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:10')).code).toBe('Access-Accept');

    const free = await mkSub();
    expect(await macRows(free.username)).toEqual([]);
    expect((await login(free.username, free.password, 'AA:BB:CC:DD:EE:20')).code).toBe('Access-Accept');
    expect((await login(free.username, free.password, 'AA:BB:CC:DD:EE:21')).code).toBe('Access-Accept');
    expect((await detail(free.id)).data.mac_address).toBeNull();
  });

  it('post-auth calls radius_bind_mac only for a subscriber with the bind-mac row', async () => {
    const s = await mkSub({ service_id: bound });
    await t.db
      .delete(radcheck)
      .where(sql`${radcheck.username} = ${s.username} and ${radcheck.attribute} = 'Tmp-String-1'`);
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:40')).code).toBe('Access-Accept');
    expect((await detail(s.id)).data.mac_address).toBeNull();
  });

  it("switching a plan's mac_binding on enforces the MACs already stored; off frees them", async () => {
    const plan = (
      await api.post(
        '/api/services',
        { name: 'switchable', price: 10, duration_days: 30, currency: 'USD' },
        { token: admin },
      )
    ).body.data.id;
    await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: plan }, { token: admin });
    const s = await mkSub({ service_id: plan, mac_address: 'AA:BB:CC:DD:EE:30' });
    const unbound = await mkSub({ service_id: plan });
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:31')).code).toBe('Access-Accept');
    expect((await login(unbound.username, unbound.password, 'AA:BB:CC:DD:EE:32')).code).toBe('Access-Accept');
    expect((await detail(unbound.id)).data.mac_address).toBeNull();
    expect((await api.put(`/api/services/${plan}`, { mac_binding: true }, { token: admin })).status).toBe(200);
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:31')).code).toBe('Access-Reject');
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:30')).code).toBe('Access-Accept');
    // One with no MAC stored binds at its next login.
    expect((await login(unbound.username, unbound.password, 'AA:BB:CC:DD:EE:33')).code).toBe('Access-Accept');
    expect((await detail(unbound.id)).data.mac_address).toBe('AA:BB:CC:DD:EE:33');
    expect((await api.put(`/api/services/${plan}`, { mac_binding: false }, { token: admin })).status).toBe(200);
    expect((await login(s.username, s.password, 'AA:BB:CC:DD:EE:31')).code).toBe('Access-Accept');
    expect(await macRows(unbound.username)).toEqual([]);
  });

  it('never stores a password in radpostauth', async () => {
    const s = await mkSub();
    await login(s.username, s.password);
    await login(s.username, 'wrong-one');
    const res = await t.pool.query('select pass, reply from radpostauth where username = $1 order by id', [s.username]);
    expect(res.rows.map((r) => r.reply)).toEqual(['Access-Accept', 'Access-Reject']);
    expect(res.rows.every((r) => !r.pass)).toBe(true);
  });
});

describe('Accounting', () => {
  it('Start, Interim-Update and Stop drive is_online, ip_address, daily_breakdown and the counters, each delta once', async () => {
    const s = await mkSub();
    const start = await acct(s.username, 'sess-1', 'Start', { 'Framed-IP-Address': '100.64.0.9' });
    expect(start.code).toBe('Accounting-Response');
    let d = await detail(s.id);
    expect(d.data.is_online).toBe(true);
    expect(d.data.ip_address).toBe('100.64.0.9');

    await acct(s.username, 'sess-1', 'Interim-Update', {
      'Framed-IP-Address': '100.64.0.9',
      'Acct-Input-Octets': 1000,
      'Acct-Output-Octets': 50_000,
    });
    // A retransmitted or repeated interim carries the same totals: nothing new.
    await acct(s.username, 'sess-1', 'Interim-Update', {
      'Framed-IP-Address': '100.64.0.9',
      'Acct-Input-Octets': 1000,
      'Acct-Output-Octets': 50_000,
    });
    // Counted by the network-access unit's usage rollup (USAGE_ROLLUP_SECONDS), not in the packet's transaction.
    d = await waitFor('the rollup counting the interim', async () => {
      const body = await detail(s.id);
      return body.data.daily_quota_used > 0 && body;
    });
    const today = new Date().toISOString().slice(0, 10);
    expect(d.daily_breakdown).toEqual([{ date: today, download_bytes: 50_000 }]);
    expect(d.data.daily_quota_used).toBe(51_000);
    expect(d.data.counters.monthly_quota_used).toBe(51_000);

    // Stop with gigawords: 2^32 + 70,000 bytes down in total.
    await acct(s.username, 'sess-1', 'Stop', {
      'Framed-IP-Address': '100.64.0.9',
      'Acct-Input-Octets': 3000,
      'Acct-Output-Octets': 70_000,
      'Acct-Output-Gigawords': 1,
      'Acct-Session-Time': 600,
    });
    d = await waitFor('the rollup taking the subscriber offline', async () => {
      const body = await detail(s.id);
      return !body.data.is_online && body;
    });
    expect(d.data.is_online).toBe(false);
    expect(d.data.ip_address).toBeNull();
    expect(d.daily_breakdown).toEqual([{ date: today, download_bytes: 2 ** 32 + 70_000 }]);
    expect(d.data.daily_quota_used).toBe(2 ** 32 + 73_000);
    // A duplicate Stop changes nothing.
    await acct(s.username, 'sess-1', 'Stop', {
      'Acct-Input-Octets': 3000,
      'Acct-Output-Octets': 70_000,
      'Acct-Output-Gigawords': 1,
    });
    await rollupUsage(t.db);
    expect((await detail(s.id)).data.daily_quota_used).toBe(2 ** 32 + 73_000);

    // A second session adds its own traffic to the same day.
    await acct(s.username, 'sess-2', 'Start', { 'Framed-IP-Address': '100.64.0.10' });
    await acct(s.username, 'sess-2', 'Interim-Update', {
      'Framed-IP-Address': '100.64.0.10',
      'Acct-Input-Octets': 10,
      'Acct-Output-Octets': 90,
    });
    await rollupUsage(t.db);
    d = await detail(s.id);
    expect(d.data.is_online).toBe(true);
    expect(d.data.ip_address).toBe('100.64.0.10');
    expect(d.daily_breakdown).toEqual([{ date: today, download_bytes: 2 ** 32 + 70_090 }]);
    expect(d.data.daily_quota_used).toBe(2 ** 32 + 73_100);
  });

  it('moves the FUP level with usage: tier rate on the next login and a rate_limit event; top-up and reset-fup lift it', async () => {
    const s = await mkSub();
    await acct(s.username, 'fup-1', 'Start', { 'Framed-IP-Address': '100.64.1.1' });
    // 3 GiB: past tier 1 (2 GB), below tier 2 (6 GB).
    await acct(s.username, 'fup-1', 'Interim-Update', {
      'Acct-Input-Octets': 0,
      'Acct-Output-Octets': 0,
      'Acct-Output-Gigawords': 0,
    });
    await acct(s.username, 'fup-1', 'Interim-Update', {
      'Acct-Output-Octets': GIB,
      'Acct-Output-Gigawords': 0,
      'Acct-Input-Octets': 0,
    });
    await acct(s.username, 'fup-1', 'Interim-Update', {
      'Acct-Output-Octets': 2 ** 31 + GIB,
      'Acct-Output-Gigawords': 0,
    });
    await rollupUsage(t.db);
    expect((await detail(s.id)).data.counters.monthly_quota_used).toBe(3 * GIB);
    expect((await detail(s.id)).data.fup_level).toBe(0);

    const run = await runUsage();
    expect(run).toMatchObject({ changed: expect.any(Number) });
    expect((await detail(s.id)).data.fup_level).toBe(1);
    expect(await rateEvents(s.id)).toEqual([
      { subscriber_id: s.id, username: s.username, rate_limit: '4M/4M', fup_level: 1 },
    ]);
    const throttled = await login(s.username, s.password);
    expect(throttled.code).toBe('Access-Accept');
    expect(throttled.attrs['Mikrotik-Rate-Limit']).toBe('4M/4M');
    expect(throttled.attrs['Framed-Pool']).toBe('home_pool');

    // Running again with nothing new changes nothing and queues nothing.
    await runUsage();
    expect(await rateEvents(s.id)).toHaveLength(1);

    // 7 GiB: tier 2.
    await acct(s.username, 'fup-1', 'Interim-Update', { 'Acct-Output-Octets': 3 * GIB, 'Acct-Output-Gigawords': 1 });
    await runUsage();
    expect((await detail(s.id)).data.fup_level).toBe(2);
    expect((await login(s.username, s.password)).attrs['Mikrotik-Rate-Limit']).toBe('1M/1M');

    // 5 GB of top-up data lift every threshold by 5 GB: 7 GiB is now past tier 1 only.
    // topup-data has the FUP engine evaluate at once (usage.pending); a run of ours meanwhile skips
    // the row that evaluation holds (SKIP LOCKED), so wait for the outcome rather than for our run.
    expect((await api.post(`/api/subscribers/${s.id}/topup-data`, { gb: 5 }, { token: admin })).status).toBe(200);
    await runUsage();
    await waitFor('the top-up lowering the level to 1', async () => (await detail(s.id)).data.fup_level === 1);

    // reset-fup: daily counter and level to 0 at once (monthly untouched), plan rate back by CoA.
    expect((await api.post(`/api/subscribers/${s.id}/reset-fup`, {}, { token: admin })).status).toBe(200);
    const after = await detail(s.id);
    expect(after.data.fup_level).toBe(0);
    expect(after.data.daily_quota_used).toBe(0);
    expect(after.data.counters.monthly_quota_used).toBe(7 * GIB);
    expect((await rateEvents(s.id)).map((e) => [e.fup_level, e.rate_limit])).toEqual([
      [1, '4M/4M'],
      [2, '1M/1M'],
      [1, '4M/4M'],
      [0, '10M/20M'],
    ]);
    expect((await login(s.username, s.password)).attrs['Mikrotik-Rate-Limit']).toBe('10M/20M');

    // The monthly tier still holds: the next usage puts it back in tier 1.
    await acct(s.username, 'fup-1', 'Interim-Update', {
      'Acct-Output-Octets': 3 * GIB + 1000,
      'Acct-Output-Gigawords': 1,
    });
    await runUsage();
    expect((await detail(s.id)).data.fup_level).toBe(1);

    // refill: daily and monthly to 0, level 0, plan rate back.
    expect((await api.post(`/api/subscribers/${s.id}/refill`, {}, { token: admin })).status).toBe(200);
    const refilled = await detail(s.id);
    expect([
      refilled.data.fup_level,
      refilled.data.daily_quota_used,
      refilled.data.counters.monthly_quota_used,
    ]).toEqual([0, 0, 0]);
    expect((await rateEvents(s.id)).at(-1)).toEqual({
      subscriber_id: s.id,
      username: s.username,
      rate_limit: '10M/20M',
      fup_level: 0,
    });
    await runUsage();
    expect((await detail(s.id)).data.fup_level).toBe(0);
  });

  it('a daily quota throttles for the day only: the day boundary resets the daily counter and lifts the level', async () => {
    const plan = (
      await api.post(
        '/api/services',
        {
          name: 'daily',
          price: 10,
          duration_days: 30,
          currency: 'USD',
          rate_limit: '8M/8M',
          daily_quota_gb: 1,
          fup_tiers: [{ level: 1, threshold_gb: 0, rate_limit: '512k/512k' }],
        },
        { token: admin },
      )
    ).body.data.id;
    await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: plan }, { token: admin });
    const s = await mkSub({ service_id: plan });
    await acct(s.username, 'day-1', 'Start');
    await acct(s.username, 'day-1', 'Interim-Update', { 'Acct-Output-Octets': GIB + 5 });
    await runUsage();
    expect((await detail(s.id)).data.fup_level).toBe(1);
    expect((await login(s.username, s.password)).attrs['Mikrotik-Rate-Limit']).toBe('512k/512k');

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const newMonth = tomorrow.slice(0, 7) !== new Date().toISOString().slice(0, 7);
    const run = (await runUsage(tomorrow)) as { reset: number };
    expect(run.reset).toBeGreaterThanOrEqual(1);
    const d = await detail(s.id);
    expect(d.data.daily_quota_used).toBe(0);
    expect(d.data.counters.monthly_quota_used).toBe(newMonth ? 0 : GIB + 5);
    expect(d.data.fup_level).toBe(0);
    expect((await rateEvents(s.id)).map((e) => [e.fup_level, e.rate_limit])).toEqual([
      [1, '512k/512k'],
      [0, '8M/8M'],
    ]);
    const [row] = await t.db
      .select({ usageDay: subscribers.usageDay })
      .from(subscribers)
      .where(eq(subscribers.id, s.id));
    expect(row.usageDay).toBe(tomorrow);
  });
});
