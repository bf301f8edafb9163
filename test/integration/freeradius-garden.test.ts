/**
 * Blocked access against a real FreeRADIUS (deploy/freeradius through run.sh, test/helpers/freeradius.ts)
 * driven with radclient: an expired subscriber is rejected, or with `blocked_access` =
 * `walled_garden` accepted with the garden's replies instead of its plan's; the setting and the
 * garden's attributes apply at the next Access-Request with no restart; an inactive subscriber and
 * a wrong password are always rejected; renew and add-days bring the plan back with a
 * Session-Timeout that ends with the paid time. FreeRADIUS runs in a time zone far from UTC, so a
 * Session-Timeout computed from local midnight instead of UTC midnight fails the bounds (run.sh
 * pins TZ=UTC), and so does a radpostauth time read in the database role's zone (run.sh: PGTZ=UTC).
 *
 * The steps share one database and the settings are global: the describe blocks run in order,
 * each leaving the mode the next one expects.
 */
import { GIB } from '../../shared/domain/fup';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import { startFreeradius, type Radius, type RadiusAnswer } from '../helpers/freeradius';

const SECRET = 'radius-garden-secret';
const DAY_MS = 86_400_000;
/** UTC+14: local midnight is 14 hours before UTC midnight. */
const FAR_ZONE = 'Pacific/Kiritimati';

let t: TestApp;
let api: ReturnType<typeof client>;
let radius: Radius;
const admin = adminToken();
let reseller: number;
let home: number; // pool + rate limit, no fair-use tiers
let capped: number; // a daily quota and no tiers: reaching it blocks
let cappedMonthly: number; // a monthly quota and no tiers

const utcDay = (offsetDays = 0) => new Date(Date.now() + offsetDays * DAY_MS).toISOString().slice(0, 10);
const plusDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);

let seq = 0;
async function mkSub(extra: Record<string, unknown> = {}) {
  seq += 1;
  const password = `garden-${seq}`;
  const res = await api.post(
    '/api/subscribers',
    { username: `g${seq}@isp`, password, service_id: home, reseller_id: reseller, ...extra },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return { ...(res.body.data as { id: number; username: string }), password };
}

const detail = async (id: number) => (await api.get(`/api/subscribers/${id}`, { token: admin })).body.data;
const setSettings = (body: Record<string, unknown>) => api.put('/api/settings', body, { token: admin });
const groupRows = async (table: 'radgroupcheck' | 'radgroupreply') =>
  (await t.pool.query(`select attribute, op, value from ${table} where groupname = 'billing_blocked' order by id`))
    .rows as { attribute: string; op: string; value: string }[];
const groupsOf = async (username: string) =>
  (
    await t.pool.query('select groupname from radusergroup where username = $1 order by groupname', [username])
  ).rows.map((r) => r.groupname as string);

/** A login whose Session-Timeout is checked against the end of `expiry` (UTC), from the request's own time. */
async function loginUntil(username: string, password: string, expiry: string): Promise<RadiusAnswer> {
  const before = Math.floor(Date.now() / 1000);
  const res = await radius.login(username, password);
  const after = Math.floor(Date.now() / 1000);
  expect(res.code).toBe('Access-Accept');
  const end = (Date.parse(`${expiry}T00:00:00Z`) + DAY_MS) / 1000;
  const timeout = Number(res.attrs['Session-Timeout']);
  // FreeRADIUS sets Session-Timeout = Expiration - the request's second; the request's second lies
  // between `before` and `after`.
  expect(timeout).toBeLessThanOrEqual(end - before);
  expect(timeout).toBeGreaterThanOrEqual(end - after);
  return res;
}

function expectGarden(res: RadiusAnswer, addressList = 'billing-blocked', rate = '256k/256k'): void {
  expect(res.code).toBe('Access-Accept');
  expect(res.attrs['Mikrotik-Address-List']).toBe(addressList);
  expect(res.attrs['Mikrotik-Rate-Limit']).toBe(rate);
  expect(res.attrs['Framed-Pool']).toBeUndefined();
  expect(res.attrs['Session-Timeout']).toBeUndefined();
}

function expectPlan(res: RadiusAnswer, rate = '10M/20M'): void {
  expect(res.code).toBe('Access-Accept');
  expect(res.attrs['Framed-Pool']).toBe('home_pool');
  expect(res.attrs['Mikrotik-Rate-Limit']).toBe(rate);
  expect(res.attrs['Mikrotik-Address-List']).toBeUndefined();
}

const savedInterval = process.env.USAGE_INTERVAL_SECONDS;

beforeAll(async () => {
  // The usage service runs only when called, so a quota is reached when the test says.
  process.env.USAGE_INTERVAL_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (
    await api.post('/api/resellers', { name: 'garden shop', balance: 1000, currency: 'USD' }, { token: admin })
  ).body.data.id;
  const plan = async (body: Record<string, unknown>) => {
    const res = await api.post(
      '/api/services',
      { price: 10, duration_days: 30, currency: 'USD', ...body },
      { token: admin },
    );
    expect(res.status).toBe(201);
    const id = res.body.data.id as number;
    expect(
      (await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: id }, { token: admin })).status,
    ).toBe(200);
    return id;
  };
  home = await plan({ name: 'home', rate_limit: '10M/20M', pool_name: 'home_pool' });
  capped = await plan({ name: 'capped', rate_limit: '8M/8M', pool_name: 'home_pool', daily_quota_gb: 1 });
  cappedMonthly = await plan({ name: 'monthly', rate_limit: '6M/6M', pool_name: 'home_pool', monthly_quota_gb: 1 });
  expect(
    (await api.post('/api/nas', { name: 'lab', ip_address: '127.0.0.1', secret: SECRET }, { token: admin })).status,
  ).toBe(201);
  radius = await startFreeradius(t, SECRET, { env: { TZ: FAR_ZONE }, roleTimeZone: FAR_ZONE });
}, 60_000);

afterAll(async () => {
  if (radius) await radius.stop();
  if (t) await t.close();
  if (savedInterval === undefined) delete process.env.USAGE_INTERVAL_SECONDS;
  else process.env.USAGE_INTERVAL_SECONDS = savedInterval;
});

// Made in the first step, used through all of them.
let expired: Awaited<ReturnType<typeof mkSub>>;
let inactive: Awaited<ReturnType<typeof mkSub>>;
let expiredInactive: Awaited<ReturnType<typeof mkSub>>;
let ruled: Awaited<ReturnType<typeof mkSub>>;

describe('reject mode (the default)', () => {
  it('puts an expired subscriber in billing_blocked alone, without Expiration or Auth-Type rows', async () => {
    expired = await mkSub({ expiry_date: utcDay(-1) });
    expect((await detail(expired.id)).blocked_reason).toBe('expired');
    expect(await groupsOf(expired.username)).toEqual(['billing_blocked']);
    const checks = await t.pool.query('select attribute from radcheck where username = $1 order by attribute', [
      expired.username,
    ]);
    expect(checks.rows.map((r) => r.attribute)).toEqual(['NT-Password']);
    expect(await groupRows('radgroupcheck')).toEqual([{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }]);
    expect(await groupRows('radgroupreply')).toEqual([]);
  });

  it('rejects the expired subscriber with its right password, an inactive one and a wrong password', async () => {
    expect((await radius.login(expired.username, expired.password)).code).toBe('Access-Reject');
    expect((await radius.login(expired.username, 'not-it')).code).toBe('Access-Reject');
    // The post-auth log's time ('%S', FreeRADIUS's local time) is read as UTC.
    const logged = await t.pool.query(
      'select extract(epoch from now() - authdate)::float as age from radpostauth where username = $1',
      [expired.username],
    );
    expect(logged.rows).toHaveLength(2);
    for (const r of logged.rows) expect(Math.abs(r.age)).toBeLessThan(60);

    inactive = await mkSub();
    expect((await api.post(`/api/subscribers/${inactive.id}/deactivate`, {}, { token: admin })).status).toBe(200);
    expect((await radius.login(inactive.username, inactive.password)).code).toBe('Access-Reject');

    expiredInactive = await mkSub({ expiry_date: utcDay(-3) });
    expect((await api.post(`/api/subscribers/${expiredInactive.id}/deactivate`, {}, { token: admin })).status).toBe(
      200,
    );
    expect((await radius.login(expiredInactive.username, expiredInactive.password)).code).toBe('Access-Reject');

    // A subscriber with its own rate (a permanent bandwidth rule: radreply Mikrotik-Rate-Limit :=).
    ruled = await mkSub();
    expect(
      (
        await api.post(
          `/api/subscribers/${ruled.id}/bandwidth-rules`,
          { direction: 'both', rate_kbps: 3000 },
          { token: admin },
        )
      ).status,
    ).toBe(201);
    expectPlan(await radius.login(ruled.username, ruled.password), '3000k/3000k');
  });

  it('refuses through the Expiration row between midnight and the sweep, while the subscriber is not yet blocked', async () => {
    const s = await mkSub();
    await loginUntil(s.username, s.password, (await detail(s.id)).expiry_date);
    // Midnight passed and no sweep ran: the rows still say "not blocked", the Expiration day has begun.
    await t.pool.query(
      `update radcheck set value = to_char(now() at time zone 'UTC', 'Mon DD YYYY') || ' 00:00:00'
        where username = $1 and attribute = 'Expiration'`,
      [s.username],
    );
    expect((await radius.login(s.username, s.password)).code).toBe('Access-Reject');
  });
});

describe('walled garden mode', () => {
  it('switches at the next Access-Request: the expired subscriber gets the garden replies, not its plan', async () => {
    const res = await setSettings({ blocked_access: 'walled_garden' });
    expect(res.status).toBe(200);
    expect(res.body.data.blocked_access).toBe('walled_garden');
    expect(await groupRows('radgroupcheck')).toEqual([]);
    expect(await groupRows('radgroupreply')).toEqual([
      { attribute: 'Mikrotik-Address-List', op: ':=', value: 'billing-blocked' },
      { attribute: 'Mikrotik-Rate-Limit', op: ':=', value: '256k/256k' },
    ]);
    expectGarden(await radius.login(expired.username, expired.password));
  });

  it('still rejects a wrong password, an inactive subscriber (expired or not) and an unknown user', async () => {
    expect((await radius.login(expired.username, 'not-it')).code).toBe('Access-Reject');
    expect((await radius.login(inactive.username, inactive.password)).code).toBe('Access-Reject');
    expect((await radius.login(expiredInactive.username, expiredInactive.password)).code).toBe('Access-Reject');
    expect((await radius.login('nobody@isp', 'whatever')).code).toBe('Access-Reject');
  });

  it('refuses, even in the garden mode, between midnight and the sweep that moves the subscriber into billing_blocked', async () => {
    const s = await mkSub();
    expectPlan(await radius.login(s.username, s.password));
    await t.pool.query(
      `update radcheck set value = to_char(now() at time zone 'UTC', 'Mon DD YYYY') || ' 00:00:00'
        where username = $1 and attribute = 'Expiration'`,
      [s.username],
    );
    expect((await radius.login(s.username, s.password)).code).toBe('Access-Reject');
  });

  it("the garden's rate replaces the subscriber's own bandwidth-rule rate once it is blocked", async () => {
    expect((await api.put(`/api/subscribers/${ruled.id}`, { expiry_date: utcDay(-1) }, { token: admin })).status).toBe(
      200,
    );
    expect((await detail(ruled.id)).blocked_reason).toBe('expired');
    expectGarden(await radius.login(ruled.username, ruled.password));
  });

  it('applies custom walled_garden_attributes at the next request; a bad line is a 400 naming it and changes nothing', async () => {
    const custom =
      'Mikrotik-Address-List := "unpaid"\nMikrotik-Rate-Limit := "128k/128k"\n\nReply-Message := "Please pay"';
    expect((await setSettings({ walled_garden_attributes: custom })).status).toBe(200);
    const res = await radius.login(expired.username, expired.password);
    expectGarden(res, 'unpaid', '128k/128k');
    expect(res.attrs['Reply-Message']).toBe('Please pay');

    const before = await groupRows('radgroupreply');
    const bad = await setSettings({ walled_garden_attributes: 'Mikrotik-Rate-Limit := "64k/64k"\nredirect me please' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^walled_garden_attributes: line 2 is not a RADIUS pair/);
    expect(await groupRows('radgroupreply')).toEqual(before);
    expectGarden(await radius.login(expired.username, expired.password), 'unpaid', '128k/128k');

    // Back to the defaults for the steps below.
    const defaults = 'Mikrotik-Address-List := "billing-blocked"\nMikrotik-Rate-Limit := "256k/256k"';
    expect((await setSettings({ walled_garden_attributes: defaults })).status).toBe(200);
    expectGarden(await radius.login(expired.username, expired.password));
  });

  it('renew brings the plan back, with a Session-Timeout ending with the new paid time', async () => {
    const res = await api.post(`/api/subscribers/${expired.id}/renew`, {}, { token: admin });
    expect(res.status).toBe(200);
    const d = await detail(expired.id);
    expect(d.expiry_date).toBe(plusDays(utcDay(), 30));
    expect(d.blocked_reason).toBeNull();
    expect(await groupsOf(expired.username)).toEqual([`plan_${home}`]);
    expectPlan(await loginUntil(expired.username, expired.password, d.expiry_date));
  });

  it('add-days moves the Session-Timeout, and restores a subscriber it brings past today', async () => {
    const s = await mkSub();
    const first = (await detail(s.id)).expiry_date;
    const a = await loginUntil(s.username, s.password, first);
    expect(
      (await api.post(`/api/subscribers/${s.id}/add-days`, { days: 5, reason: 'outage credit' }, { token: admin }))
        .status,
    ).toBe(200);
    expect((await detail(s.id)).expiry_date).toBe(plusDays(first, 5));
    const b = await loginUntil(s.username, s.password, plusDays(first, 5));
    const moved = Number(b.attrs['Session-Timeout']) - Number(a.attrs['Session-Timeout']);
    expect(Math.abs(moved - 5 * 86_400)).toBeLessThanOrEqual(5);

    expectGarden(await radius.login(ruled.username, ruled.password));
    expect(
      (await api.post(`/api/subscribers/${ruled.id}/add-days`, { days: 3, reason: 'goodwill' }, { token: admin }))
        .status,
    ).toBe(200);
    const d = await detail(ruled.id);
    expect(d.expiry_date).toBe(plusDays(utcDay(), 2));
    expect(d.blocked_reason).toBeNull();
    expectPlan(await loginUntil(ruled.username, ruled.password, d.expiry_date), '3000k/3000k');
  });
});

describe('back to reject mode', () => {
  it('rejects a blocked subscriber again at the next request; a paid one stays accepted', async () => {
    const blocked = await mkSub({ expiry_date: utcDay(-2) });
    expectGarden(await radius.login(blocked.username, blocked.password));
    expect((await setSettings({ blocked_access: 'reject' })).status).toBe(200);
    expect(await groupRows('radgroupcheck')).toEqual([{ attribute: 'Auth-Type', op: ':=', value: 'Reject' }]);
    expect(await groupRows('radgroupreply')).toEqual([]);
    expect((await radius.login(blocked.username, blocked.password)).code).toBe('Access-Reject');
    expectPlan(await radius.login(expired.username, expired.password));
  });
});

describe('a quota used up on a plan without tiers', () => {
  it('blocks once fup_level > 0: gardened in walled_garden mode, rejected in reject mode', async () => {
    const s = await mkSub({ service_id: capped });
    expect((await radius.login(s.username, s.password)).attrs['Mikrotik-Rate-Limit']).toBe('8M/8M');
    await radius.acct(s.username, 'q-1', 'Start', { 'Framed-IP-Address': '100.64.9.1' });
    await radius.acct(s.username, 'q-1', 'Interim-Update', { 'Acct-Output-Octets': GIB + 5 });
    await t.app.broker.call('usage.run', {});
    const d = await detail(s.id);
    expect(d.fup_level).toBe(1);
    expect(d.blocked_reason).toBe('quota');
    expect(await groupsOf(s.username)).toEqual(['billing_blocked']);
    expect((await radius.login(s.username, s.password)).code).toBe('Access-Reject');
    expect((await setSettings({ blocked_access: 'walled_garden' })).status).toBe(200);
    expectGarden(await radius.login(s.username, s.password));

    // reset-fup lifts the block: the plan again, with its Session-Timeout.
    expect((await api.post(`/api/subscribers/${s.id}/reset-fup`, {}, { token: admin })).status).toBe(200);
    const after = await detail(s.id);
    expect(after.blocked_reason).toBeNull();
    expectPlan(await loginUntil(s.username, s.password, after.expiry_date), '8M/8M');
  });

  it('a monthly quota blocks at level 3 (still gardened); topup-data lifts it at once', async () => {
    expect((await setSettings({ blocked_access: 'walled_garden' })).status).toBe(200);
    const s = await mkSub({ service_id: cappedMonthly });
    await radius.acct(s.username, 'q-2', 'Start', { 'Framed-IP-Address': '100.64.9.2' });
    await radius.acct(s.username, 'q-2', 'Interim-Update', { 'Acct-Output-Octets': GIB + 5 });
    await t.app.broker.call('usage.run', {});
    const d = await detail(s.id);
    expect([d.fup_level, d.blocked_reason]).toEqual([3, 'quota']);
    expectGarden(await radius.login(s.username, s.password));

    expect((await api.post(`/api/subscribers/${s.id}/topup-data`, { gb: 1 }, { token: admin })).status).toBe(200);
    // The FUP engine evaluates the top-up at once (usage.pending): no periodic run here
    // (USAGE_INTERVAL_SECONDS 0) could lift it. How fast is for a bench, not a loaded CI run.
    const after = await waitFor('the top-up lifting the quota block', async () => {
      const d = await detail(s.id);
      return d.blocked_reason === null && d;
    });
    expect(after.fup_level).toBe(0);
    const res = await loginUntil(s.username, s.password, after.expiry_date);
    expect(res.attrs['Mikrotik-Rate-Limit']).toBe('6M/6M');
    expect(res.attrs['Mikrotik-Address-List']).toBeUndefined();

    // Leave the default mode for whoever runs after.
    expect((await setSettings({ blocked_access: 'reject' })).status).toBe(200);
  });
});
