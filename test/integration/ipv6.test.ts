/**
 * Dual-stack subscribers (issue 41, docs/ipv6.md): IPv6 prefixes on the subscriber,
 * validated, normalised and never overlapping among live subscribers; IPv6 pools the billing keeps
 * and hands out from, concurrently, never twice; plan pool names for the NAS's own pools; and the
 * Access-Accept of the stock FreeRADIUS carrying both families.
 */
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { startFreeradius, type Radius } from '../helpers/freeradius';

const SECRET = 'radius-ipv6-secret';

let t: TestApp;
let api: ReturnType<typeof client>;
let radius: Radius;
const admin = adminToken();
let reseller: number;
let plain: number; // no IPv6 pools
let nasPools: number; // pool names the NAS keeps
let ourPools: number; // pools the billing keeps

let seq = 0;
async function create(extra: Record<string, unknown> = {}, plan = plain) {
  seq += 1;
  return api.post(
    '/api/subscribers',
    { username: `v6u${seq}`, password: `pass-${seq}`, service_id: plan, reseller_id: reseller, ...extra },
    { token: admin },
  );
}
async function mkSub(extra: Record<string, unknown> = {}, plan = plain) {
  const res = await create(extra, plan);
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return {
    ...(res.body.data as {
      id: number;
      username: string;
      ipv6_prefix: string | null;
      delegated_ipv6_prefix: string | null;
    }),
    password: `pass-${seq}`,
  };
}
async function plan(name: string, extra: Record<string, unknown> = {}) {
  const res = await api.post(
    '/api/services',
    { name, price: 10, duration_days: 30, currency: 'USD', rate_limit: '10M/10M', ...extra },
    { token: admin },
  );
  expect(res.status).toBe(201);
  const id = res.body.data.id as number;
  expect(
    (await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: id }, { token: admin })).status,
  ).toBe(200);
  return id;
}
const bulk = (body: unknown) => api.post('/api/subscribers/bulk-action', body, { token: admin });
const assignments = async (pool: string) =>
  (
    await t.pool.query<{ index: number; subscriber_id: number }>(
      `select index::int, subscriber_id from ipv6_pool_assignments where pool_name = $1 order by index`,
      [pool],
    )
  ).rows;
const replyRows = async (username: string) =>
  (
    await t.pool.query<{ attribute: string; value: string }>(
      `select attribute, value from radreply where username = $1 and attribute like '%IPv6%' order by attribute`,
      [username],
    )
  ).rows.map((r) => `${r.attribute}=${r.value}`);

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (await api.post('/api/resellers', { name: 'v6 shop', balance: 1000, currency: 'USD' }, { token: admin }))
    .body.data.id;
  plain = await plan('v6-plain');
  nasPools = await plan('v6-nas-pools', { framed_ipv6_pool: 'wan6', delegated_ipv6_pool: 'pd6' });
  expect(
    (
      await api.post(
        '/api/ipv6-pools',
        { name: 'our-pd', prefix: '2001:DB8:100::/44', prefix_length: 48 },
        { token: admin },
      )
    ).status,
  ).toBe(201);
  ourPools = await plan('v6-our-pools', { delegated_ipv6_pool: 'our-pd' });
  expect(
    (await api.post('/api/nas', { name: 'lab6', ip_address: '127.0.0.1', secret: SECRET }, { token: admin })).status,
  ).toBe(201);
  radius = await startFreeradius(t, SECRET);
}, 60_000);

afterAll(async () => {
  if (radius) await radius.stop();
  if (t) await t.close();
});

describe('IPv6 prefixes of a subscriber', () => {
  it('are normalised to one spelling and shown on the subscriber', async () => {
    const s = await mkSub({ ipv6_prefix: '2001:0DB8:0000:0001::/64', delegated_ipv6_prefix: '2001:db8:a:0:0::/56' });
    expect(s.ipv6_prefix).toBe('2001:db8:0:1::/64');
    expect(s.delegated_ipv6_prefix).toBe('2001:db8:a::/56');
    const got = (await api.get(`/api/subscribers/${s.id}`, { token: admin })).body.data;
    expect([got.ipv6_prefix, got.delegated_ipv6_prefix]).toEqual(['2001:db8:0:1::/64', '2001:db8:a::/56']);
    expect(await replyRows(s.username)).toEqual([
      'Delegated-IPv6-Prefix=2001:db8:a::/56',
      'Framed-IPv6-Prefix=2001:db8:0:1::/64',
    ]);
  });

  it('refuses what is no prefix of the right length with a 400 that shows a valid one', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ ipv6_prefix: '10.0.0.1' }, 'ipv6_prefix must be an IPv6 prefix'],
      [{ ipv6_prefix: '2001:db8::1/64' }, 'ipv6_prefix must be an IPv6 prefix'],
      [{ ipv6_prefix: '2001:db8::/32' }, 'length 48-128'],
      [
        { delegated_ipv6_prefix: '2001:db8::/72' },
        'delegated_ipv6_prefix must be an IPv6 prefix such as 2001:db8:1::/48 (length 48-64',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.message).toContain(message);
    }
  });

  it('refuses an overlap with a live subscriber: 409 naming the field and the prefix held', async () => {
    await mkSub({ delegated_ipv6_prefix: '2001:db8:77::/48' });
    const inside = await create({ delegated_ipv6_prefix: '2001:db8:77:1::/64' });
    expect(inside.status).toBe(409);
    expect(inside.body.message).toBe(
      'delegated_ipv6_prefix overlaps 2001:db8:77::/48, already used by another subscriber',
    );
    const wan = await mkSub({ ipv6_prefix: '2001:db8:f00::1' });
    expect(wan.ipv6_prefix).toBe('2001:db8:f00::1/128');
    const again = await mkSub();
    const put = await api.put(`/api/subscribers/${again.id}`, { ipv6_prefix: '2001:db8:f00::1/128' }, { token: admin });
    expect(put.status).toBe(409);
    // The holder itself may save its own prefix again.
    expect(
      (await api.put(`/api/subscribers/${wan.id}`, { ipv6_prefix: '2001:db8:f00:0::1' }, { token: admin })).status,
    ).toBe(200);
  });

  it('frees the prefix when its holder is deleted, and the exclusion constraint holds without the check', async () => {
    const s = await mkSub({ delegated_ipv6_prefix: '2001:db8:88::/48' });
    expect((await api.del(`/api/subscribers/${s.id}`, { token: admin })).status).toBe(200);
    expect((await create({ delegated_ipv6_prefix: '2001:db8:88::/48' })).status).toBe(201);
    const other = await mkSub();
    await expect(
      t.pool.query(`update subscribers set delegated_ipv6_prefix = '2001:db8:88:8::/64' where id = $1`, [other.id]),
    ).rejects.toThrow(/subscribers_delegated_ipv6_prefix_no_overlap/);
  });

  it('are found by the subscriber search, by an address inside them', async () => {
    const s = await mkSub({ delegated_ipv6_prefix: '2001:db8:5ea::/48' });
    const res = await api.get(`/api/subscribers?search=${encodeURIComponent('2001:db8:5ea:12::99')}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: number }) => r.id)).toEqual([s.id]);
  });

  it('are changed with a disconnect, and a reseller of another tree cannot read them', async () => {
    const s = await mkSub();
    const res = await api.put(
      `/api/subscribers/${s.id}`,
      { delegated_ipv6_prefix: '2001:db8:99::/48' },
      { token: admin },
    );
    expect(res.status).toBe(200);
    const { rows } = await t.pool.query(
      `select payload->>'reason' as reason from outbox where payload->>'subscriber_id' = $1 order by id desc limit 1`,
      [String(s.id)],
    );
    expect(rows[0].reason).toBe('ipv6_prefix');
    const stranger = (
      await api.post('/api/resellers', { name: 'other v6', balance: 0, currency: 'USD' }, { token: admin })
    ).body.data.id;
    const get = await api.get(`/api/subscribers/${s.id}`, {
      token: token('reseller', { resellerId: stranger, permissions: ['subscribers.view'] }),
    });
    expect(get.status).toBe(403);
  });
});

describe('IPv6 pools kept by the billing', () => {
  it('are created, listed with their use, and refused when malformed, overlapping or not the admin', async () => {
    const list = await api.get('/api/ipv6-pools', { token: admin });
    expect(list.body.data).toContainEqual({
      name: 'our-pd',
      prefix: '2001:db8:100::/44',
      prefix_length: 48,
      size: '16',
      used: expect.any(Number),
    });
    const bad = [
      [{ name: 'x', prefix: '10.0.0.0/8', prefix_length: 16 }, 400],
      [{ name: 'x', prefix: '2001:db8::/40', prefix_length: 40 }, 400],
      [{ name: 'x', prefix: '2001:db8::/24', prefix_length: 64 }, 400],
      [{ name: 'overlap', prefix: '2001:db8:100::/40', prefix_length: 56 }, 409],
      [{ name: 'our-pd', prefix: '2001:db9::/40', prefix_length: 56 }, 409],
    ] as const;
    for (const [body, status] of bad)
      expect((await api.post('/api/ipv6-pools', body, { token: admin })).status).toBe(status);
    const reseller403 = await api.get('/api/ipv6-pools', { token: token('reseller', { resellerId: reseller }) });
    expect(reseller403.status).toBe(403);
  });

  it('hand each new subscriber of a plan naming one the lowest free prefix, written for FreeRADIUS', async () => {
    const a = await mkSub({}, ourPools);
    const b = await mkSub({}, ourPools);
    expect(a.delegated_ipv6_prefix).toMatch(/^2001:db8:10[0-9a-f]::\/48$/);
    expect(b.delegated_ipv6_prefix).not.toBe(a.delegated_ipv6_prefix);
    expect(await replyRows(b.username)).toEqual([`Delegated-IPv6-Prefix=${b.delegated_ipv6_prefix}`]);
    // One typed in by hand is kept, not replaced from the pool.
    const own = await mkSub({ delegated_ipv6_prefix: '2001:db8:200::/48' }, ourPools);
    expect(own.delegated_ipv6_prefix).toBe('2001:db8:200::/48');
  });

  it('never give one prefix to two holders under concurrent creates, and say so when none is left', async () => {
    await t.pool.query(`insert into ipv6_pools (name, prefix, prefix_length) values ('tiny', '2001:db8:300::/60', 64)`);
    const tiny = await plan('v6-tiny', { delegated_ipv6_pool: 'tiny' });
    const results = await Promise.all(Array.from({ length: 24 }, () => create({}, tiny)));
    const ok = results.filter((r) => r.status === 201).map((r) => r.body.data.delegated_ipv6_prefix as string);
    const refused = results.filter((r) => r.status === 409);
    expect(ok).toHaveLength(16);
    expect(new Set(ok).size).toBe(16);
    expect(refused).toHaveLength(8);
    expect(refused[0].body.message).toBe('IPv6 pool tiny has no free prefix');
    const { rows } = await t.pool.query(
      `select count(*)::int as n, count(distinct prefix)::int as d from ipv6_pool_assignments where pool_name = 'tiny'`,
    );
    expect(rows[0]).toEqual({ n: 16, d: 16 });
  }, 60_000);

  it("skip a prefix typed in by hand to its end, however many of the pool's prefixes it covers", async () => {
    await t.pool.query(`insert into ipv6_pools (name, prefix, prefix_length) values ('skip', '2001:db8:500::/44', 56)`);
    const skipping = await plan('v6-skip', { delegated_ipv6_pool: 'skip' });
    // A /48 over the pool's first 256 /56s, then a /56 over the next one.
    await mkSub({ delegated_ipv6_prefix: '2001:db8:500::/48' });
    await mkSub({ delegated_ipv6_prefix: '2001:db8:501::/56' });
    const a = await mkSub({}, skipping);
    expect(a.delegated_ipv6_prefix).toBe('2001:db8:501:100::/56');
    await mkSub({ delegated_ipv6_prefix: '2001:db8:501:200::/56' });
    const b = await mkSub({}, skipping);
    const c = await mkSub({}, skipping);
    expect([b.delegated_ipv6_prefix, c.delegated_ipv6_prefix]).toEqual([
      '2001:db8:501:300::/56',
      '2001:db8:501:400::/56',
    ]);
    expect(await assignments('skip')).toEqual([
      { index: 257, subscriber_id: a.id },
      { index: 259, subscriber_id: b.id },
      { index: 260, subscriber_id: c.id },
    ]);
  });

  it('take a prefix back when its holder is deleted, one at a time or in bulk', async () => {
    await t.pool.query(`insert into ipv6_pools (name, prefix, prefix_length) values ('one', '2001:db8:400::/64', 64)`);
    const single = await plan('v6-one', { delegated_ipv6_pool: 'one' });
    const s = await mkSub({}, single);
    expect(s.delegated_ipv6_prefix).toBe('2001:db8:400::/64');
    expect((await create({}, single)).status).toBe(409);
    expect((await api.del(`/api/subscribers/${s.id}`, { token: admin })).status).toBe(200);
    expect(await assignments('one')).toEqual([]);
    const next = await mkSub({}, single);
    expect(next.delegated_ipv6_prefix).toBe('2001:db8:400::/64');
    expect((await bulk({ ids: [next.id], action: 'delete' })).body.data).toEqual({ succeeded: [next.id], failed: [] });
    expect(await assignments('one')).toEqual([]);
    const last = await mkSub({}, single);
    expect(last.delegated_ipv6_prefix).toBe('2001:db8:400::/64');
    expect(await assignments('one')).toEqual([{ index: 0, subscriber_id: last.id }]);
    expect((await api.del('/api/ipv6-pools/one', { token: admin })).status).toBe(409);
    expect((await api.del(`/api/subscribers/${last.id}/permanent`, { token: admin })).status).toBe(200);
    expect(await assignments('one')).toEqual([]);
  });

  it('serve a holder drawing again from its own pool (bulk set_static_ipv6): its prefix goes back first', async () => {
    await t.pool.query(
      `insert into ipv6_pools (name, prefix, prefix_length) values ('redraw', '2001:db8:600::/62', 64)`,
    );
    const redraw = await plan('v6-redraw', { delegated_ipv6_pool: 'redraw' });
    const [a, b, c] = [await mkSub({}, redraw), await mkSub({}, redraw), await mkSub({}, redraw)];
    expect(c.delegated_ipv6_prefix).toBe('2001:db8:600:2::/64');
    expect((await api.del(`/api/subscribers/${a.id}`, { token: admin })).status).toBe(200);
    const draw = (ids: number[]) =>
      bulk({ ids, action: 'set_static_ipv6', payload: { field: 'delegated_ipv6_prefix', pool_name: 'redraw' } });
    const res = await draw([b.id, c.id]);
    expect([res.status, res.body.data]).toEqual([200, { succeeded: [b.id, c.id], failed: [] }]);
    expect(await assignments('redraw')).toEqual([
      { index: 0, subscriber_id: b.id },
      { index: 1, subscriber_id: c.id },
    ]);
    const prefixOf = async (id: number) =>
      (await t.pool.query(`select delegated_ipv6_prefix::text as p from subscribers where id = $1`, [id])).rows[0].p;
    expect([await prefixOf(b.id), await prefixOf(c.id)]).toEqual(['2001:db8:600::/64', '2001:db8:600:1::/64']);
    // Drawn again when its own is the lowest free: kept as it is, and the session left alone.
    const disconnects = async () =>
      (await t.pool.query(`select 1 from outbox where payload->>'subscriber_id' = $1`, [String(b.id)])).rows.length;
    const before = await disconnects();
    expect((await draw([b.id])).body.data).toEqual({ succeeded: [b.id], failed: [] });
    expect(await prefixOf(b.id)).toBe('2001:db8:600::/64');
    expect(await assignments('redraw')).toEqual([
      { index: 0, subscriber_id: b.id },
      { index: 1, subscriber_id: c.id },
    ]);
    expect(await disconnects()).toBe(before);
  });

  it('give a subscriber one prefix each: no plan names one for both kinds, and a draw of the other kind is refused', async () => {
    await t.pool.query(`insert into ipv6_pools (name, prefix, prefix_length) values ('both', '2001:db8:700::/60', 64)`);
    const body = { price: 10, duration_days: 30, currency: 'USD' };
    const twice = await api.post(
      '/api/services',
      { name: 'v6-both', ...body, framed_ipv6_pool: 'both', delegated_ipv6_pool: 'both' },
      { token: admin },
    );
    expect([twice.status, twice.body.message]).toEqual([
      400,
      'delegated_ipv6_pool must name another pool than framed_ipv6_pool: IPv6 pool both gives a subscriber one prefix',
    ]);
    const wan = await plan('v6-both-wan', { framed_ipv6_pool: 'both' });
    const put = await api.put(`/api/services/${wan}`, { delegated_ipv6_pool: 'both' }, { token: admin });
    expect([put.status, put.body.message]).toEqual([400, twice.body.message]);
    // Names the NAS keeps may be one for both; a pool of ours cannot then take that name.
    await plan('v6-both-nas', { framed_ipv6_pool: 'nas-both', delegated_ipv6_pool: 'nas-both' });
    const pool = await api.post(
      '/api/ipv6-pools',
      { name: 'nas-both', prefix: '2001:db8:710::/60', prefix_length: 64 },
      { token: admin },
    );
    expect([pool.status, pool.body.message]).toEqual([
      409,
      'plan v6-both-nas names IPv6 pool nas-both as both framed_ipv6_pool and delegated_ipv6_pool',
    ]);
    const s = await mkSub({}, wan);
    expect(s.ipv6_prefix).toBe('2001:db8:700::/64');
    const res = await bulk({
      ids: [s.id],
      action: 'set_static_ipv6',
      payload: { field: 'delegated_ipv6_prefix', pool_name: 'both' },
    });
    expect(res.body.data).toEqual({
      succeeded: [],
      failed: [{ id: s.id, reason: 'IPv6 pool both already gives this subscriber its ipv6_prefix' }],
    });
    expect(await assignments('both')).toEqual([{ index: 0, subscriber_id: s.id }]);
    // A plan saved so before this rule: a create says why it fails, not "username already exists".
    await t.pool.query(`update services set delegated_ipv6_pool = 'both' where id = $1`, [wan]);
    const refused = await create({}, wan);
    expect([refused.status, refused.body.message]).toEqual([
      409,
      'IPv6 pool both already gives this subscriber its ipv6_prefix',
    ]);
    expect(await assignments('both')).toEqual([{ index: 0, subscriber_id: s.id }]);
  });

  it('serve a plan only prefixes its field takes: /48 to /64 delegated, /48 to /128 WAN', async () => {
    const pool = (name: string, prefix: string, prefix_length: number) =>
      api.post('/api/ipv6-pools', { name, prefix, prefix_length }, { token: admin });
    expect((await pool('wide', '2001:db8:800::/40', 44)).status).toBe(201);
    expect((await pool('hosts', '2001:db8:900::/120', 128)).status).toBe(201);
    const body = { price: 10, duration_days: 30, currency: 'USD' };
    const refusals: [Record<string, string>, string][] = [
      [
        { delegated_ipv6_pool: 'wide' },
        'delegated_ipv6_pool: IPv6 pool wide hands out /44 prefixes; delegated_ipv6_prefix takes /48 to /64',
      ],
      [
        { framed_ipv6_pool: 'wide' },
        'framed_ipv6_pool: IPv6 pool wide hands out /44 prefixes; ipv6_prefix takes /48 to /128',
      ],
      [
        { delegated_ipv6_pool: 'hosts' },
        'delegated_ipv6_pool: IPv6 pool hosts hands out /128 prefixes; delegated_ipv6_prefix takes /48 to /64',
      ],
    ];
    for (const [pools, message] of refusals) {
      const res = await api.post('/api/services', { name: 'v6-unfit', ...body, ...pools }, { token: admin });
      expect([res.status, res.body.message]).toEqual([400, message]);
    }
    const hosts = await plan('v6-hosts', { framed_ipv6_pool: 'hosts' });
    expect((await mkSub({}, hosts)).ipv6_prefix).toBe('2001:db8:900::/128');
    const put = await api.put(`/api/services/${hosts}`, { delegated_ipv6_pool: 'wide' }, { token: admin });
    expect([put.status, put.body.message]).toEqual([400, refusals[0][1]]);
    // A name a plan gives already: the pool created under it must hand out what that field takes.
    await plan('v6-later', { delegated_ipv6_pool: 'later-pd' });
    const unfit = await pool('later-pd', '2001:db8:a00::/48', 72);
    expect([unfit.status, unfit.body.message]).toEqual([
      400,
      "prefix_length /72 does not fit plan v6-later's delegated_ipv6_pool: delegated_ipv6_prefix takes /48 to /64",
    ]);
    expect((await pool('later-pd', '2001:db8:a00::/48', 56)).status).toBe(201);
  });

  it('hand a subscriber moved onto the plan its prefixes: change-service, or per id in bulk set_service', async () => {
    await t.pool.query(`insert into ipv6_pools (name, prefix, prefix_length) values
      ('mv-wan', '2001:db8:b00::/62', 64), ('mv-pd', '2001:db8:c00::/55', 56)`);
    const moving = await plan('v6-move', { framed_ipv6_pool: 'mv-wan', delegated_ipv6_pool: 'mv-pd' });
    const row = async (id: number) =>
      (
        await t.pool.query(
          `select service_id, ipv6_prefix::text as wan, delegated_ipv6_prefix::text as pd from subscribers where id = $1`,
          [id],
        )
      ).rows[0];
    const one = await mkSub();
    const moved = await api.post(`/api/subscribers/${one.id}/change-service`, { service_id: moving }, { token: admin });
    expect(moved.status).toBe(200);
    expect(await row(one.id)).toEqual({ service_id: moving, wan: '2001:db8:b00::/64', pd: '2001:db8:c00::/56' });
    expect(await replyRows(one.username)).toEqual([
      'Delegated-IPv6-Prefix=2001:db8:c00::/56',
      'Framed-IPv6-Prefix=2001:db8:b00::/64',
    ]);
    // One /56 left: b takes it, c finds none and stays as it was (the /64 it was given goes back),
    // and d, with a delegated prefix of its own, needs only a /64.
    const [b, c] = [await mkSub(), await mkSub()];
    const d = await mkSub({ delegated_ipv6_prefix: '2001:db8:d00::/56' });
    const res = await bulk({ ids: [b.id, c.id, d.id], action: 'set_service', payload: { service_id: moving } });
    expect(res.body.data).toEqual({
      succeeded: [b.id, d.id],
      failed: [{ id: c.id, reason: 'IPv6 pool mv-pd has no free prefix' }],
    });
    expect(await row(b.id)).toEqual({ service_id: moving, wan: '2001:db8:b00:1::/64', pd: '2001:db8:c00:100::/56' });
    expect(await row(c.id)).toEqual({ service_id: plain, wan: null, pd: null });
    expect(await row(d.id)).toEqual({ service_id: moving, wan: '2001:db8:b00:2::/64', pd: '2001:db8:d00::/56' });
    expect(await assignments('mv-wan')).toEqual([
      { index: 0, subscriber_id: one.id },
      { index: 1, subscriber_id: b.id },
      { index: 2, subscriber_id: d.id },
    ]);
    const single = await api.post(`/api/subscribers/${c.id}/change-service`, { service_id: moving }, { token: admin });
    expect([single.status, single.body.message]).toEqual([409, 'IPv6 pool mv-pd has no free prefix']);
    expect(await row(c.id)).toEqual({ service_id: plain, wan: null, pd: null });
    // A PUT moving it with a delegated prefix of its own needs only the /64.
    const put = await api.put(
      `/api/subscribers/${c.id}`,
      { service_id: moving, delegated_ipv6_prefix: '2001:db8:e00::/56' },
      { token: admin },
    );
    expect(put.status).toBe(200);
    expect(await row(c.id)).toEqual({ service_id: moving, wan: '2001:db8:b00:3::/64', pd: '2001:db8:e00::/56' });
  });

  it("are named in no plan's replies: the router has no such pool, their subscribers get a prefix instead", async () => {
    const poolRows = async (planId: number) =>
      (
        await t.pool.query<{ groupname: string; attribute: string; value: string }>(
          `select groupname, attribute, value from radgroupreply
            where (groupname = $1 or groupname like $2) and attribute like '%IPv6%' order by groupname, attribute`,
          [`plan_${planId}`, `plan\\_${planId}@%`],
        )
      ).rows.map((r) => `${r.groupname} ${r.attribute}=${r.value}`);
    expect(await poolRows(ourPools)).toEqual([]);
    // A name the NAS keeps until a pool of ours takes it, and again once that pool is gone.
    const later = await plan('v6-ours-later', { framed_ipv6_pool: 'wan6', delegated_ipv6_pool: 'ours-later' });
    const asNasPools = await poolRows(later);
    expect(asNasPools).toContain(`plan_${later} Mikrotik-Delegated-IPv6-Pool=ours-later`);
    expect(asNasPools).toContain(`plan_${later}@cisco Delegated-IPv6-Prefix-Pool=ours-later`);
    const created = await api.post(
      '/api/ipv6-pools',
      { name: 'ours-later', prefix: '2001:db8:f000::/48', prefix_length: 56 },
      { token: admin },
    );
    expect(created.status).toBe(201);
    expect(await poolRows(later)).toEqual(asNasPools.filter((r) => !r.endsWith('=ours-later')));
    expect((await poolRows(later)).length).toBeGreaterThan(0);
    expect((await api.del('/api/ipv6-pools/ours-later', { token: admin })).status).toBe(200);
    expect(await poolRows(later)).toEqual(asNasPools);
  });

  it('are named in no vendor row by a NAS registered while one of them is created', async () => {
    const named = await plan('v6-race', { delegated_ipv6_pool: 'ours-race' });
    const creating = await t.pool.connect();
    let nas;
    try {
      // A pool's create in flight: it holds the names' lock and its row is not yet committed.
      await creating.query('begin');
      await creating.query(`select pg_advisory_xact_lock(hashtext('ipv6_pools.name'))`);
      await creating.query(
        `insert into ipv6_pools (name, prefix, prefix_length) values ('ours-race', '2001:db8:e000::/48', 56)`,
      );
      nas = api.post(
        '/api/nas',
        { name: 'race-huawei', ip_address: '127.0.0.9', secret: SECRET, vendor: 'huawei' },
        { token: admin },
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await creating.query('commit');
    } finally {
      creating.release();
    }
    expect((await nas).status).toBe(201);
    const rows = await t.pool.query(`select groupname from radgroupreply where groupname like $1 and value = $2`, [
      `plan\\_${named}@%`,
      'ours-race',
    ]);
    expect(rows.rows).toEqual([]);
  });
});

describe('Access-Accept through the stock FreeRADIUS', () => {
  it('gives a dual-stack subscriber its IPv4 address and both IPv6 prefixes', async () => {
    const s = await mkSub({
      static_ip: '10.60.0.9',
      ipv6_prefix: '2001:db8:6::/64',
      delegated_ipv6_prefix: '2001:db8:6600::/56',
    });
    const res = await radius.login(s.username, s.password);
    expect(res.code).toBe('Access-Accept');
    expect(res.attrs['Framed-IP-Address']).toBe('10.60.0.9');
    expect(res.attrs['Framed-IPv6-Prefix']).toBe('2001:db8:6::/64');
    expect(res.attrs['Delegated-IPv6-Prefix']).toBe('2001:db8:6600::/56');
  });

  it("sends the plan's NAS pool names to a subscriber with no prefix, and drops them for one with its own", async () => {
    const pooled = await mkSub({}, nasPools);
    const a = await radius.login(pooled.username, pooled.password);
    expect(a.code).toBe('Access-Accept');
    expect(a.attrs['Framed-IPv6-Pool']).toBe('wan6');
    // The NAS is a MikroTik (the default vendor): its own attribute for the delegated pool.
    expect(a.attrs['Mikrotik-Delegated-IPv6-Pool']).toBe('pd6');
    expect(a.attrs['Delegated-IPv6-Prefix-Pool']).toBeUndefined();
    const own = await mkSub({ delegated_ipv6_prefix: '2001:db8:6700::/56' }, nasPools);
    const b = await radius.login(own.username, own.password);
    expect(b.attrs['Delegated-IPv6-Prefix']).toBe('2001:db8:6700::/56');
    expect(b.attrs['Mikrotik-Delegated-IPv6-Pool']).toBeUndefined();
    expect(b.attrs['Framed-IPv6-Pool']).toBe('wan6');
  });

  it('names no pool of ours to a subscriber still without a prefix from it, and gives the one drawn later', async () => {
    const soon = await plan('v6-ours-soon', { delegated_ipv6_pool: 'pd-soon' });
    const s = await mkSub({}, soon);
    expect((await radius.login(s.username, s.password)).attrs['Mikrotik-Delegated-IPv6-Pool']).toBe('pd-soon');
    const pool = { name: 'pd-soon', prefix: '2001:db8:f100::/48', prefix_length: 56 };
    expect((await api.post('/api/ipv6-pools', pool, { token: admin })).status).toBe(201);
    const before = await radius.login(s.username, s.password);
    expect(before.code).toBe('Access-Accept');
    expect(Object.keys(before.attrs).filter((a) => a.includes('IPv6'))).toEqual([]);
    const drawn = await bulk({
      ids: [s.id],
      action: 'set_static_ipv6',
      payload: { field: 'delegated_ipv6_prefix', pool_name: 'pd-soon' },
    });
    expect(drawn.body.data).toEqual({ succeeded: [s.id], failed: [] });
    const after = await radius.login(s.username, s.password);
    expect(after.attrs['Delegated-IPv6-Prefix']).toBe('2001:db8:f100::/56');
  });

  it('gives a prefix handed out from a pool of ours', async () => {
    const s = await mkSub({}, ourPools);
    const res = await radius.login(s.username, s.password);
    expect(res.attrs['Delegated-IPv6-Prefix']).toBe(s.delegated_ipv6_prefix);
  });
});
