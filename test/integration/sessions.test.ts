/**
 * GET /api/sessions and GET /api/subscribers/:id/sessions (docs/ledger-and-sessions.md): open
 * `radacct` rows with subscriber and access-server names, each filter and sort, the stale flag
 * against accounting_interim_minutes, scope (a reseller sees its tree's sessions only, another
 * tree's subscriber is 403), and a subscriber's closed sessions.
 */
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
const tree = { root: 0, child: 0, other: 0 };
const plans = { a: 0, b: 0 };
const nas = { one: 0, two: 0 };
/** Subscriber ids by their usernames. */
const ids: Record<string, number> = {};

interface Session {
  id: number;
  subscriber_id: number | null;
  username: string | null;
  service_id: number | null;
  reseller_id: number | null;
  nas_id: number | null;
  nas_name: string | null;
  nas_ip: string;
  framed_ip: string | null;
  mac: string | null;
  started_at: string | null;
  duration: number | null;
  bytes_in: number;
  bytes_out: number;
  last_update_at: string | null;
  interim_age: number | null;
  stale: boolean;
  stopped_at?: string | null;
  terminate_cause?: string | null;
}
interface Page {
  data: Session[];
  pagination: { page: number; limit: number; total: number };
  stale_after_seconds?: number;
}

async function list(query: string, tok = admin): Promise<Page> {
  const res = await api.get<Page>(`/api/sessions${query}`, { token: tok });
  expect(res.status).toBe(200);
  return res.body;
}
const names = (p: Page) => p.data.map((s) => s.username);

/** An accounting row: started `startedMin` minutes ago, last packet `updatedMin` ago (null: none since Start). */
async function session(o: {
  username: string;
  nasIp: string;
  ip: string;
  mac: string;
  startedMin: number;
  updatedMin: number | null;
  bytesIn: number;
  bytesOut: number;
  stoppedMin?: number;
}) {
  await t.pool.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, callingstationid,
        acctstarttime, acctupdatetime, acctstoptime, acctinputoctets, acctoutputoctets, acctterminatecause)
     values (md5(random()::text), md5(random()::text), $1, $2, $3, $4, now() - make_interval(mins => $5),
        now() - make_interval(mins => $6::int), now() - make_interval(mins => $7::int), $8, $9, $10)`,
    [
      o.username,
      o.nasIp,
      o.ip,
      o.mac,
      o.startedMin,
      o.updatedMin,
      o.stoppedMin ?? null,
      o.bytesIn,
      o.bytesOut,
      o.stoppedMin === undefined ? null : 'User-Request',
    ],
  );
}

beforeAll(async () => {
  // No usage runs: the stale-session sweep would close the stale session this file looks at.
  t = await startTestApp({ env: { USAGE_INTERVAL_SECONDS: '0', USAGE_ROLLUP_SECONDS: '0' } });
  api = client(t.baseUrl);
  tree.root = (await seedReseller(t.db, { name: 'Sessions Root' })).id;
  tree.child = (await seedReseller(t.db, { name: 'Sessions Child', parentId: tree.root })).id;
  tree.other = (await seedReseller(t.db, { name: 'Sessions Other' })).id;
  plans.a = (await seedPlan(t.db, { price: 1000 })).id;
  plans.b = (await seedPlan(t.db, { price: 2000 })).id;
  const n = await t.pool.query(
    `insert into nas (nasname, shortname, secret) values ('10.9.0.1', 'tower-north', 's'), ('10.9.0.2', 'tower-south', 's') returning id`,
  );
  [nas.one, nas.two] = n.rows.map((r) => r.id);
  const who: [string, keyof typeof tree, keyof typeof plans][] = [
    ['alice@isp', 'root', 'a'],
    ['bob@isp', 'child', 'b'],
    ['carol@isp', 'other', 'a'],
    ['dave@isp', 'root', 'b'],
  ];
  for (const [username, r, p] of who)
    ids[username] = (await seedSubscriber(t.db, { username, resellerId: tree[r], serviceId: plans[p] })).id;
  await session({
    username: 'alice@isp',
    nasIp: '10.9.0.1',
    ip: '100.64.0.10',
    mac: 'AA:BB:CC:00:00:01',
    startedMin: 120,
    updatedMin: 2,
    bytesIn: 5000,
    bytesOut: 90000,
  });
  await session({
    username: 'bob@isp',
    nasIp: '10.9.0.2',
    ip: '100.64.0.20',
    mac: 'AA:BB:CC:00:00:02',
    startedMin: 30,
    updatedMin: 1,
    bytesIn: 7000,
    bytesOut: 10000,
  });
  // Silent for 40 minutes: stale at the default 5-minute interim (2 x 5 + 1).
  await session({
    username: 'carol@isp',
    nasIp: '10.9.0.1',
    ip: '100.64.0.30',
    mac: 'AA:BB:CC:00:00:03',
    startedMin: 300,
    updatedMin: 40,
    bytesIn: 100,
    bytesOut: 200,
  });
  // No Interim-Update since Start, 5 minutes ago: not stale.
  await session({
    username: 'dave@isp',
    nasIp: '10.9.0.2',
    ip: '100.64.0.40',
    mac: 'AA:BB:CC:00:00:04',
    startedMin: 5,
    updatedMin: null,
    bytesIn: 0,
    bytesOut: 0,
  });
  // A username no subscriber holds, on an unregistered NAS.
  await session({
    username: 'ghost@isp',
    nasIp: '10.9.0.99',
    ip: '100.64.0.99',
    mac: 'AA:BB:CC:00:00:99',
    startedMin: 60,
    updatedMin: 3,
    bytesIn: 1,
    bytesOut: 1,
  });
  // Closed sessions of alice.
  for (const [startedMin, stoppedMin] of [
    [2000, 1900],
    [1500, 1400],
    [1000, 700],
  ])
    await session({
      username: 'alice@isp',
      nasIp: '10.9.0.2',
      ip: '100.64.1.10',
      mac: 'AA:BB:CC:00:00:01',
      startedMin,
      updatedMin: stoppedMin + 1,
      stoppedMin,
      bytesIn: startedMin,
      bytesOut: stoppedMin,
    });
});
afterAll(() => t.close());

describe('GET /api/sessions', () => {
  it('lists every open session with its subscriber, access server, address, MAC, duration, bytes and interim age', async () => {
    const p = await list('');
    expect(p.pagination).toEqual({ page: 1, limit: 50, total: 5 });
    expect(p.stale_after_seconds).toBe(11 * 60);
    // Newest start first by default.
    expect(names(p)).toEqual(['dave@isp', 'bob@isp', 'ghost@isp', 'alice@isp', 'carol@isp']);
    const alice = p.data.find((s) => s.username === 'alice@isp')!;
    expect(alice).toMatchObject({
      subscriber_id: ids['alice@isp'],
      service_id: plans.a,
      reseller_id: tree.root,
      nas_id: nas.one,
      nas_name: 'tower-north',
      nas_ip: '10.9.0.1',
      framed_ip: '100.64.0.10',
      mac: 'AA:BB:CC:00:00:01',
      bytes_in: 5000,
      bytes_out: 90000,
      stale: false,
    });
    expect(alice.duration).toBeGreaterThanOrEqual(120 * 60);
    expect(alice.duration).toBeLessThan(121 * 60);
    expect(alice.interim_age).toBeGreaterThanOrEqual(120);
    expect(alice.interim_age).toBeLessThan(180);
    const ghost = p.data.find((s) => s.username === 'ghost@isp')!;
    expect(ghost).toMatchObject({ subscriber_id: null, nas_id: null, nas_name: null, nas_ip: '10.9.0.99' });
    // The subscriber's closed sessions are not live ones.
    expect(p.data.filter((s) => s.username === 'alice@isp')).toHaveLength(1);
  });

  it('flags a session silent past 2 x the interim + 1 minute as stale, and filters on it', async () => {
    expect(names(await list('?stale=true'))).toEqual(['carol@isp']);
    expect(names(await list('?stale=false')).sort()).toEqual(['alice@isp', 'bob@isp', 'dave@isp', 'ghost@isp']);
    await t.pool.query(
      `insert into settings (key, value) values ('accounting_interim_minutes', '30') on conflict (key) do update set value = excluded.value`,
    );
    const longer = await list('?stale=true');
    expect(longer.stale_after_seconds).toBe(61 * 60);
    expect(longer.data).toEqual([]);
    await t.pool.query(`delete from settings where key = 'accounting_interim_minutes'`);
  });

  it('filters by access server, plan, reseller and search (username, address, MAC)', async () => {
    expect(names(await list(`?nas_id=${nas.one}`)).sort()).toEqual(['alice@isp', 'carol@isp']);
    expect(names(await list(`?nas_id=${nas.two}`)).sort()).toEqual(['bob@isp', 'dave@isp']);
    expect(names(await list(`?service_id=${plans.b}`)).sort()).toEqual(['bob@isp', 'dave@isp']);
    expect(names(await list(`?reseller_id=${tree.root}`)).sort()).toEqual(['alice@isp', 'dave@isp']);
    expect(names(await list('?search=CAR'))).toEqual(['carol@isp']);
    expect(names(await list('?search=100.64.0.2'))).toEqual(['bob@isp']);
    expect(names(await list('?search=cc:00:00:04'))).toEqual(['dave@isp']);
    expect(names(await list('?search=%25'))).toEqual([]);
    const filtered = await list(`?nas_id=${nas.one}&service_id=${plans.a}&stale=false`);
    expect(names(filtered)).toEqual(['alice@isp']);
    expect(filtered.pagination.total).toBe(1);
  });

  it('sorts by every field, both ways, and pages', async () => {
    const all = (await list('')).data;
    const cmp = (key: (s: Session) => number | string | null) => (a: Session, b: Session) => {
      const x = key(a);
      const y = key(b);
      if (x === y) return a.id - b.id;
      if (x === null) return 1;
      if (y === null) return -1;
      return x < y ? -1 : 1;
    };
    const keys: Record<string, (s: Session) => number | string | null> = {
      started_at: (s) => s.started_at,
      username: (s) => s.username,
      subscriber_id: (s) => s.subscriber_id,
      nas: (s) => s.nas_name,
      framed_ip: (s) => s.framed_ip,
      mac: (s) => s.mac,
      bytes_in: (s) => s.bytes_in,
      bytes_out: (s) => s.bytes_out,
      duration: (s) => s.duration,
      interim_age: (s) => s.interim_age,
    };
    for (const [sort, key] of Object.entries(keys)) {
      const asc = names(await list(`?sort=${sort}&order=asc`));
      const byKey = [...all].sort(cmp(key));
      // Nulls (the ghost's subscriber and NAS) come last both ways.
      const nullsLast = (rows: Session[]) => [
        ...rows.filter((s) => key(s) !== null),
        ...rows.filter((s) => key(s) === null),
      ];
      expect({ sort, asc }).toEqual({ sort, asc: nullsLast(byKey).map((s) => s.username) });
      const desc = names(await list(`?sort=${sort}&order=desc`));
      expect({ sort, desc }).toEqual({ sort, desc: nullsLast([...byKey].reverse()).map((s) => s.username) });
    }
    const first = await list('?sort=username&order=asc&limit=2');
    const second = await list('?sort=username&order=asc&limit=2&page=2');
    expect([...names(first), ...names(second)]).toEqual(['alice@isp', 'bob@isp', 'carol@isp', 'dave@isp']);
    expect(second.pagination).toEqual({ page: 2, limit: 2, total: 5 });
    expect((await api.get('/api/sessions?sort=secret', { token: admin })).status).toBe(400);
  });

  it("shows a reseller its tree's sessions only", async () => {
    const root = token('reseller', { resellerId: tree.root, permissions: ['subscribers.view'] });
    const p = await list('', root);
    expect(names(p).sort()).toEqual(['alice@isp', 'bob@isp', 'dave@isp']);
    expect(p.pagination.total).toBe(3);
    expect(names(await list('?search=carol', root))).toEqual([]);
    expect(names(await list('?stale=true', root))).toEqual([]);
    expect((await api.get(`/api/sessions?reseller_id=${tree.other}`, { token: root })).status).toBe(403);
    const child = token('reseller', { resellerId: tree.child, permissions: ['subscribers.view'] });
    expect(names(await list('', child))).toEqual(['bob@isp']);
    expect((await api.get(`/api/sessions?reseller_id=${tree.root}`, { token: child })).status).toBe(403);
    const noView = token('reseller', { resellerId: tree.root });
    expect((await api.get('/api/sessions', { token: noView })).status).toBe(403);
    expect((await api.get('/api/sessions')).status).toBe(401);
  });
  it("counts a tree's sessions as its rows, through starts, stops and a session with no start time", async () => {
    // A tree's unfiltered count reads session_hours' open count (session-list.ts): it must equal the rows.
    const root = token('reseller', { resellerId: tree.root, permissions: ['subscribers.view'] });
    const child = token('reseller', { resellerId: tree.child, permissions: ['subscribers.view'] });
    const counts = async () => {
      const [r, c, byId] = [
        await list('', root),
        await list('', child),
        await list(`?reseller_id=${tree.child}`, root),
      ];
      return [r, c, byId].map((p) => ({ total: p.pagination.total, rows: p.data.length }));
    };
    expect(await counts()).toEqual([
      { total: 3, rows: 3 },
      { total: 1, rows: 1 },
      { total: 1, rows: 1 },
    ]);
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime)
       values ('count-1', 'count-1', 'bob@isp', '10.9.0.2', now()), ('count-2', 'count-2', 'bob@isp', '10.9.0.2', null)`,
    );
    expect(await counts()).toEqual([
      { total: 5, rows: 5 },
      { total: 3, rows: 3 },
      { total: 3, rows: 3 },
    ]);
    await t.pool.query(`update radacct set acctstoptime = now() where acctuniqueid in ('count-1', 'count-2')`);
    expect(await counts()).toEqual([
      { total: 3, rows: 3 },
      { total: 1, rows: 1 },
      { total: 1, rows: 1 },
    ]);
    await t.pool.query(`delete from radacct where acctuniqueid in ('count-1', 'count-2')`);
  });
});

describe('GET /api/subscribers/:id/sessions', () => {
  it("lists the subscriber's closed sessions newest first, with stop time, cause and the live list's fields", async () => {
    const res = await api.get<Page>(`/api/subscribers/${ids['alice@isp']}/sessions`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, limit: 50, total: 3 });
    expect(res.body.data.map((s) => s.bytes_in)).toEqual([1000, 1500, 2000]);
    const [latest] = res.body.data;
    expect(latest).toMatchObject({
      subscriber_id: ids['alice@isp'],
      username: 'alice@isp',
      nas_id: nas.two,
      nas_name: 'tower-south',
      framed_ip: '100.64.1.10',
      mac: 'AA:BB:CC:00:00:01',
      duration: 300 * 60,
      bytes_out: 700,
      interim_age: 60,
      terminate_cause: 'User-Request',
    });
    expect(Date.parse(latest.stopped_at!) - Date.parse(latest.started_at!)).toBe(300 * 60_000);
    const longest = await api.get<Page>(`/api/subscribers/${ids['alice@isp']}/sessions?sort=duration&limit=1`, {
      token: admin,
    });
    expect(longest.body.data.map((s) => s.duration)).toEqual([300 * 60]);
    const paged = await api.get<Page>(`/api/subscribers/${ids['alice@isp']}/sessions?limit=2&page=2`, { token: admin });
    expect(paged.body.data.map((s) => s.bytes_in)).toEqual([2000]);
  });

  it('is checked like the subscriber: 403 for another tree, 404 for none', async () => {
    const root = token('reseller', { resellerId: tree.root, permissions: ['subscribers.view'] });
    expect((await api.get(`/api/subscribers/${ids['alice@isp']}/sessions`, { token: root })).status).toBe(200);
    const foreign = await api.get(`/api/subscribers/${ids['carol@isp']}/sessions`, { token: root });
    expect(foreign.status).toBe(403);
    const missing = await api.get('/api/subscribers/999999/sessions', { token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, message: 'subscriber not found' });
    const noView = token('reseller', { resellerId: tree.root });
    expect((await api.get(`/api/subscribers/${ids['alice@isp']}/sessions`, { token: noView })).status).toBe(403);
  });
});

describe('a username taken again', () => {
  it("shows the new holder none of the earlier holder's sessions, live list, history or graph", async () => {
    const mk = async (username: string) => {
      const res = await api.post(
        '/api/subscribers',
        { username, password: 'secret1', service_id: plans.a, reseller_id: tree.root },
        { token: admin },
      );
      expect([res.status, res.body.message]).toEqual([201, undefined]);
      return res.body.data.id as number;
    };
    const limit = await api.post(
      `/api/resellers/${tree.root}/service-limits`,
      { service_id: plans.a, max_subscribers: null },
      { token: admin },
    );
    expect(limit.status).toBe(200);
    const at = { nasIp: '10.9.0.1', ip: '100.64.5.1', mac: 'AA:BB:CC:00:05:01', bytesIn: 1, bytesOut: 2 };
    const before = await mk('again@isp');
    await session({ ...at, username: 'again@isp', startedMin: 300, updatedMin: 200, stoppedMin: 200 });
    await session({ ...at, username: 'again@isp', startedMin: 90, updatedMin: 1 });
    expect((await api.get<Page>(`/api/subscribers/${before}/sessions`, { token: admin })).body.data).toHaveLength(1);
    expect((await api.del(`/api/subscribers/${before}`, { token: admin })).status).toBe(200);

    const now = await mk('again@isp');
    const history = await api.get<Page>(`/api/subscribers/${now}/sessions`, { token: admin });
    expect([history.body.data, history.body.pagination.total]).toEqual([[], 0]);
    const live = await list('?search=again%40isp');
    expect(live.data.map((s) => [s.username, s.subscriber_id])).toEqual([['again@isp', null]]);
    const graph = await api.get(`/api/subscribers/${now}/bandwidth`, { token: admin });
    expect(graph.body.data.sessions).toEqual([]);

    // Its own sessions, from its creation on, are its.
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctstoptime, acctterminatecause)
       values ('own-1', 'again-own-1', 'again@isp', '10.9.0.1', now(), now(), 'User-Request')`,
    );
    const own = await api.get<Page>(`/api/subscribers/${now}/sessions`, { token: admin });
    expect(own.body.data.map((s) => s.subscriber_id)).toEqual([now]);

    // Renamed onto a name with sessions under it: those stay out too.
    await session({ ...at, username: 'recycled@isp', startedMin: 50, updatedMin: 40, stoppedMin: 40 });
    const renamed = await mk('fresh-name@isp');
    const res = await api.post(
      `/api/subscribers/${renamed}/rename`,
      { new_username: 'recycled@isp' },
      { token: admin },
    );
    expect(res.status).toBe(200);
    expect((await api.get<Page>(`/api/subscribers/${renamed}/sessions`, { token: admin })).body.data).toEqual([]);
  });

  it('a session with no start or update time is not stale, and the stale filter says so', async () => {
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress) values ('nostamp', 'nostamp-1', 'nostamp@isp', '10.9.0.1')`,
    );
    expect(names(await list('?search=nostamp&stale=false'))).toEqual(['nostamp@isp']);
    expect(names(await list('?search=nostamp&stale=true'))).toEqual([]);
  });
});
