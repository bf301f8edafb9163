import { rollupUsage } from '../../shared/access/usage-rollup';
import { and, eq, inArray, sql } from 'drizzle-orm';
import {
  auditLog,
  dailyUsage,
  invoices,
  ipPools,
  outbox,
  radacct,
  radcheck,
  radreply,
  radusergroup,
  resellers,
  services,
  subscribers,
  transactions,
  walletEntries,
} from '../../shared/db/schema';
import { saveSettings } from '../../shared/settings';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { behindAWriter, whileHeld } from '../helpers/row-locks';
import { withDefaultTax } from '../helpers/renewals';
import type { Auth } from '../../shared/auth/claims';
import type { Tx } from '../../shared/db/client';
import { defaultReseller } from '../../shared/default-reseller';
import { checkServiceLimits } from '../../services/subscribers/operations';
import type { SubscriberRow } from '../../services/subscribers/subscriber-view';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();

const ALL = [
  'subscribers.view',
  'subscribers.create',
  'subscribers.edit',
  'subscribers.delete',
  'subscribers.renew',
  'subscribers.reset_fup',
  'subscribers.reset_mac',
  'subscribers.rename',
  'subscribers.add_days',
  'subscribers.change_service',
  'subscribers.inactivate',
  'subscribers.refill_quota',
  'subscribers.disconnect',
  'subscribers.transfer',
];

let root: number; // /root/
let child: number; // /root/child/
let sibling: number; // another tree
let basic: number; // plan 30 days, 10.00
let premium: number; // plan 30 days, 30.00, binds MACs
let rootTok: string;

const today = () => new Date().toISOString().slice(0, 10);
const plusDays = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

async function mkReseller(name: string, parentId: number | null, balance = 1000) {
  const res = await api.post(
    '/api/resellers',
    { name, parent_id: parentId, balance, currency: 'USD' },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data.id as number;
}

async function allow(resellerId: number, serviceId: number, max: number | null = null) {
  const res = await api.post(
    `/api/resellers/${resellerId}/service-limits`,
    { service_id: serviceId, max_subscribers: max },
    { token: admin },
  );
  expect(res.status).toBe(200);
}

/** A 30-day plan that reseller `root` sells, uncapped. */
async function rootPlan(name: string, price: number, currency: string): Promise<number> {
  const res = await api.post('/api/services', { name, price, duration_days: 30, currency }, { token: admin });
  expect(res.status).toBe(201);
  await allow(root, res.body.data.id);
  return res.body.data.id as number;
}

let seq = 0;
async function mkSub(extra: Record<string, unknown> = {}, tok = admin) {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `user${seq}@isp`, password: 'secret1', service_id: basic, reseller_id: root, ...extra },
    { token: tok },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; username: string; expiry_date: string };
}

const rows = {
  check: (username: string) => t.db.select().from(radcheck).where(eq(radcheck.username, username)),
  reply: (username: string) => t.db.select().from(radreply).where(eq(radreply.username, username)),
  group: (username: string) => t.db.select().from(radusergroup).where(eq(radusergroup.username, username)),
  sub: async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0],
  outbox: async (id: number) =>
    (await t.db.select().from(outbox).orderBy(outbox.id)).filter(
      (o) => (o.payload as { subscriber_id: number }).subscriber_id === id,
    ),
};
const attrs = async (username: string) =>
  Object.fromEntries((await rows.check(username)).map((r) => [r.attribute, r.value]));

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  root = await mkReseller('root', null);
  child = await mkReseller('child', root);
  sibling = await mkReseller('sibling', null);
  const p1 = await api.post(
    '/api/services',
    { name: 'basic', price: 10, duration_days: 30, currency: 'USD', rate_limit: '5M/10M', pool_name: 'pool_basic' },
    { token: admin },
  );
  const p2 = await api.post(
    '/api/services',
    { name: 'premium', price: 30, duration_days: 30, currency: 'USD', mac_binding: true },
    { token: admin },
  );
  basic = p1.body.data.id;
  premium = p2.body.data.id;
  for (const r of [root, child, sibling]) {
    await allow(r, basic);
    await allow(r, premium);
  }
  rootTok = token('reseller', { resellerId: root, permissions: ALL });
});
afterAll(() => t.close());

describe('create', () => {
  it('201 with the full subscriber, encrypted password and FreeRADIUS rows (NT-Password, Expiration, group)', async () => {
    const res = await api.post(
      '/api/subscribers',
      {
        username: 'alice@isp',
        password: 'password',
        service_id: basic,
        reseller_id: child,
        full_name: 'Alice A',
        phone: '+15550001',
        mac_address: 'aa-bb-cc-dd-ee-01',
        static_ip: '10.9.0.1',
        region: 'north',
        price: 12.5,
        override_price: true,
      },
      { token: admin },
    );
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(d).toMatchObject({
      username: 'alice@isp',
      service_id: basic,
      reseller_id: child,
      status: 'active',
      mac_address: 'AA:BB:CC:DD:EE:01',
      static_ip: '10.9.0.1',
      price: 12.5,
      override_price: true,
      expiry_date: plusDays(30),
      is_online: false,
      fup_level: 0,
    });
    const row = await rows.sub(d.id);
    expect(row.passwordEnc).not.toContain('password');
    expect(await attrs('alice@isp')).toEqual({
      'NT-Password': '8846F7EAEE8FB117AD06BDD830B7586C',
      Expiration: expect.stringMatching(/^[A-Z][a-z]{2} \d{2} \d{4} 00:00:00$/),
    });
    expect((await rows.group('alice@isp')).map((g) => g.groupname)).toEqual([`plan_${basic}`]);
    expect((await rows.reply('alice@isp')).map((r) => [r.attribute, r.value])).toEqual([
      ['Framed-IP-Address', '10.9.0.1'],
    ]);
  });

  it('binds the MAC as Calling-Station-Id when the plan binds MACs; Cleartext-Password in cleartext mode', async () => {
    await saveSettings(t.db, { radius_password_mode: 'cleartext' });
    const s = await mkSub({ service_id: premium, mac_address: '0011.2233.4455' });
    await saveSettings(t.db, { radius_password_mode: 'nt' });
    const a = await attrs(s.username);
    expect(a['Calling-Station-Id']).toBe('00:11:22:33:44:55');
    expect(a['Cleartext-Password']).toBe('secret1');
    expect(a['NT-Password']).toBeUndefined();
  });

  it('an expired subscriber is blocked: group billing_blocked alone, no Expiration; inactive gets Auth-Type := Reject', async () => {
    const s = await mkSub({ expiry_date: plusDays(-2) });
    expect((await rows.group(s.username)).map((g) => g.groupname)).toEqual(['billing_blocked']);
    expect(await attrs(s.username)).not.toHaveProperty('Expiration');
    expect(await attrs(s.username)).not.toHaveProperty('Auth-Type');
    const off = await mkSub();
    await api.post(`/api/subscribers/${off.id}/deactivate`, {}, { token: admin });
    expect((await attrs(off.username))['Auth-Type']).toBe('Reject');
  });

  it('409 username already exists; reusable after soft delete', async () => {
    await mkSub({ username: 'dup@isp' });
    const again = await api.post(
      '/api/subscribers',
      { username: 'dup@isp', password: 'x', service_id: basic, reseller_id: root },
      { token: admin },
    );
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, message: 'username already exists' });
  });

  it('400 for a password FreeRADIUS would unwrap or expand in the cleartext mode; quotes inside are fine', async () => {
    for (const password of ['`id`', '"secret"', "'secret'", '`%{exec:/bin/id}\n`']) {
      const res = await api.post(
        '/api/subscribers',
        { username: 'wrapped@isp', password, service_id: basic, reseller_id: root },
        { token: admin },
      );
      expect([password, res.status, res.body.message]).toEqual([
        password,
        400,
        'password must not start and end with the same quote or backtick',
      ]);
    }
    const s = await mkSub({ password: 'it`s "ok"' });
    const put = await api.put(`/api/subscribers/${s.id}`, { password: '`x`' }, { token: admin });
    expect(put.status).toBe(400);
  });

  it('400 service_id not found; 403 without a service limit; 403 when max_subscribers is reached', async () => {
    const before = (await t.db.select().from(subscribers)).length;
    const bad = await api.post(
      '/api/subscribers',
      { username: 'nope@isp', password: 'x', service_id: 9999, reseller_id: root },
      { token: admin },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.message).toBe('service_id not found');
    const lone = await mkReseller('lone', null);
    const noLimit = await api.post(
      '/api/subscribers',
      { username: 'nolimit@isp', password: 'x', service_id: basic, reseller_id: lone },
      { token: admin },
    );
    expect(noLimit.status).toBe(403);
    await allow(lone, basic, 1);
    await mkSub({ reseller_id: lone });
    const full = await api.post(
      '/api/subscribers',
      { username: 'full@isp', password: 'x', service_id: basic, reseller_id: lone },
      { token: admin },
    );
    expect(full.status).toBe(403);
    expect((await t.db.select().from(subscribers)).length).toBe(before + 1);
  });

  it('400 naming the field for every bad input, and nothing written', async () => {
    const before = (await t.db.select().from(subscribers)).length;
    const cases: [Record<string, unknown>, string][] = [
      [{ password: 'x', service_id: basic }, 'username'],
      [{ username: 'a@isp', service_id: basic }, 'password'],
      [{ username: 'a@isp', password: 'x' }, 'service_id'],
      [{ username: 'bad name', password: 'x', service_id: basic }, 'username'],
      [{ username: 'a@isp', password: 'x', service_id: basic, mac_address: 'zz:zz' }, 'mac_address'],
      [{ username: 'a@isp', password: 'x', service_id: basic, static_ip: '300.1.1.1' }, 'static_ip'],
      [{ username: 'a@isp', password: 'x', service_id: basic, static_ip: '10.0.0.01' }, 'static_ip'],
      [{ username: 'a@isp', password: 'x', service_id: basic, expiry_date: '2024-13-01' }, 'expiry_date'],
      [{ username: 'a@isp', password: 'x', service_id: basic, price: 1.234 }, 'price'],
      [{ username: 'a@isp', password: 'x', service_id: basic, price: -1 }, 'price'],
      [{ username: 'a@isp', password: 'x', service_id: basic, phone: 'call me' }, 'phone'],
      [{ username: 'a@isp', password: 'x', service_id: 'one' }, 'service_id'],
      [{ username: 'a@isp', password: 'x', service_id: basic, override_price: 'yes' }, 'override_price'],
    ];
    for (const [body, field] of cases) {
      const res = await api.post('/api/subscribers', { reseller_id: root, ...body }, { token: admin });
      expect([res.status, res.body.message]).toEqual([400, expect.stringContaining(field)]);
    }
    expect((await t.db.select().from(subscribers)).length).toBe(before);
    expect((await rows.check('a@isp')).length).toBe(0);
  });

  it("409 for a static IP already held or already in another username's reply rows", async () => {
    await mkSub({ static_ip: '10.9.0.50' });
    const res = await api.post(
      '/api/subscribers',
      { username: 'ip2@isp', password: 'x', service_id: basic, reseller_id: root, static_ip: '10.9.0.50' },
      { token: admin },
    );
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('static_ip already used');
    await t.db
      .insert(radreply)
      .values({ username: 'legacy', attribute: 'Framed-IP-Address', op: ':=', value: '10.9.0.51' });
    const res2 = await api.post(
      '/api/subscribers',
      { username: 'ip3@isp', password: 'x', service_id: basic, reseller_id: root, static_ip: '10.9.0.51' },
      { token: admin },
    );
    expect(res2.status).toBe(409);
  });

  it('a reseller creates in its own tree (default its own reseller), not in a sibling tree', async () => {
    const own = await mkSub({ reseller_id: undefined }, rootTok);
    expect((await rows.sub(own.id)).resellerId).toBe(root);
    const inChild = await mkSub({ reseller_id: child }, rootTok);
    expect((await rows.sub(inChild.id)).resellerId).toBe(child);
    const res = await api.post(
      '/api/subscribers',
      { username: 'x1@isp', password: 'x', service_id: basic, reseller_id: sibling },
      { token: rootTok },
    );
    expect(res.status).toBe(403);
  });

  it('403 for a user without subscribers.create', async () => {
    const res = await api.post(
      '/api/subscribers',
      { username: 'x2@isp', password: 'x', service_id: basic },
      { token: token('user', { permissions: ['subscribers.view'] }) },
    );
    expect(res.status).toBe(403);
  });

  it("10 parallel creates for a capped limit's last 3 places: 3 created, 7 refused", async () => {
    const capped = await mkReseller('capped', null);
    await allow(capped, basic, 3);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.post(
          '/api/subscribers',
          { username: `capped${i}@isp`, password: 'secret1', service_id: basic, reseller_id: capped },
          { token: admin },
        ),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 403, 403, 403, 403, 403, 403, 403]);
    const [{ n }] = await t.db
      .select({ n: sql<number>`count(*)::int` })
      .from(subscribers)
      .where(eq(subscribers.resellerId, capped));
    expect(n).toBe(3);
  });

  it("a create's price is read in the currency its plan has under the lock, not before a change", async () => {
    const planId = await rootPlan('yen-soon', 10, 'USD');
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(services).where(eq(services.id, planId)).for('update'),
      (tx) => tx.update(services).set({ currency: 'JPY', price: 1500 }).where(eq(services.id, planId)),
      () =>
        api.post(
          '/api/subscribers',
          {
            username: 'yen-soon@isp',
            password: 'secret1',
            service_id: planId,
            reseller_id: root,
            price: 15,
            override_price: true,
          },
          { token: admin },
        ),
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ price: 15, currency: 'JPY' });
    expect((await rows.sub(res.body.data.id)).price).toBe(15);
  });

  describe('a create in progress holds back only what it must', () => {
    /** Runs `create` while `hold` keeps its transaction open: 'waited' once it queues behind a lock. */
    async function alongside(hold: (tx: Tx) => Promise<unknown>, create: () => Promise<{ status: number }>) {
      const { outcome, result } = await whileHeld(t, hold, create);
      return { outcome: outcome === 'waited' ? 'waited' : 'created', status: result.status };
    }

    it('creates under an uncapped limit pass each other', async () => {
      const probe = { id: 0, resellerId: root, serviceId: 0 } as SubscriberRow;
      const r = await alongside(
        (tx) => checkServiceLimits(tx, [probe], basic),
        () => mkSub().then(() => ({ status: 201 })),
      );
      expect(r).toEqual({ outcome: 'created', status: 201 });
    });

    it('creates under a capped limit wait for each other', async () => {
      const capped = await mkReseller('capped-wait', null);
      await allow(capped, basic, 10);
      const probe = { id: 0, resellerId: capped, serviceId: 0 } as SubscriberRow;
      const r = await alongside(
        (tx) => checkServiceLimits(tx, [probe], basic),
        () =>
          api.post(
            '/api/subscribers',
            { username: 'capped-wait@isp', password: 'secret1', service_id: basic, reseller_id: capped },
            { token: admin },
          ),
      );
      expect(r).toEqual({ outcome: 'waited', status: 201 });
    });

    it('direct creates pass each other once the default reseller exists; its first creation is one at a time', async () => {
      const direct = () =>
        api.post(
          '/api/subscribers',
          { username: `direct${++seq}@isp`, password: 'secret1', service_id: basic },
          { token: admin },
        );
      const auth = { managerId: 1, role: 'admin', resellerId: null, permissions: [] } as unknown as Auth;
      const defaults = async () =>
        t.db.select().from(resellers).where(eq(resellers.name, 'Direct subscribers')).orderBy(resellers.id);
      const before = (await defaults()).length;
      await saveSettings(t.db, { default_reseller_id: null });
      expect(await alongside((tx) => defaultReseller(tx, auth), direct)).toEqual({ outcome: 'waited', status: 201 });
      const made = await defaults();
      expect(made).toHaveLength(before + 1);
      expect(await alongside((tx) => defaultReseller(tx, auth), direct)).toEqual({ outcome: 'created', status: 201 });
      const [last] = await t.db
        .select()
        .from(subscribers)
        .where(eq(subscribers.username, `direct${seq}@isp`));
      expect(last.resellerId).toBe(made[made.length - 1].id);
    });
  });
});

describe('read', () => {
  it('detail: service, reseller, counters, decrypted password, daily_breakdown', async () => {
    const s = await mkSub({ password: 'p@ss wörd' });
    await t.db.insert(dailyUsage).values([
      { subscriberId: s.id, date: plusDays(-1), downloadBytes: 500 },
      { subscriberId: s.id, date: today(), downloadBytes: 700 },
    ]);
    const res = await api.get(`/api/subscribers/${s.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.password).toBe('p@ss wörd');
    expect(res.body.daily_breakdown).toEqual([
      { date: plusDays(-1), download_bytes: 500 },
      { date: today(), download_bytes: 700 },
    ]);
    expect(res.body.data.service).toMatchObject({ id: basic, name: 'basic', price: 10 });
    expect(res.body.data.reseller).toMatchObject({ id: root });
    expect(res.body.data.counters).toMatchObject({
      daily_quota_used: 0,
      monthly_quota_used: 0,
      extra_quota_bytes: 0,
      wallet_balance: 0,
    });
    const empty = await api.get(`/api/subscribers/${(await mkSub()).id}`, { token: admin });
    expect(empty.body.daily_breakdown).toEqual([]);
  });

  it('404 subscriber not found; 403 out of tree; view_all reads everything but writes nothing', async () => {
    const missing = await api.get('/api/subscribers/999999', { token: admin });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe('subscriber not found');
    const other = await mkSub({ reseller_id: sibling });
    const inChild = await mkSub({ reseller_id: child });
    expect((await api.get(`/api/subscribers/${other.id}`, { token: rootTok })).status).toBe(403);
    expect((await api.get(`/api/subscribers/${inChild.id}`, { token: rootTok })).status).toBe(200);
    const childTok = token('reseller', { resellerId: child, permissions: ALL });
    const rootSub = await mkSub({ reseller_id: root });
    expect((await api.get(`/api/subscribers/${rootSub.id}`, { token: childTok })).status).toBe(403);
    const viewAll = token('reseller', { resellerId: child, permissions: [...ALL, 'subscribers.view_all'] });
    expect((await api.get(`/api/subscribers/${other.id}`, { token: viewAll })).status).toBe(200);
    expect((await api.post(`/api/subscribers/${other.id}/reset-fup`, {}, { token: viewAll })).status).toBe(403);
    expect((await api.get(`/api/subscribers/${other.id}`, { token: token('user', { permissions: [] }) })).status).toBe(
      403,
    );
  });
});

describe('list', () => {
  let listReseller: number;
  let tok: string;
  beforeAll(async () => {
    listReseller = await mkReseller('lister', null);
    await allow(listReseller, basic);
    await allow(listReseller, premium);
    tok = token('reseller', { resellerId: listReseller, permissions: ['subscribers.view'] });
    const mk = (username: string, extra: Record<string, unknown>) =>
      mkSub({ username, reseller_id: listReseller, ...extra });
    await mk('zed@list', { phone: '+4470001', expiry_date: plusDays(-3) });
    await mk('amy@list', { phone: '+4470002', expiry_date: plusDays(3), full_name: 'Amy Pond' });
    await mk('bob@list', {
      phone: '+4470003',
      expiry_date: plusDays(100),
      mac_address: 'de:ad:be:ef:00:01',
      service_id: premium,
    });
    const carl = await mk('carl@list', { expiry_date: plusDays(50) });
    await api.post(`/api/subscribers/${carl.id}/deactivate`, {}, { token: admin });
    await t.db.execute(sql`insert into nas (nasname, shortname, secret) values ('192.0.2.1', 'edge', 's')`);
    await t.db.insert(radacct).values({
      acctsessionid: 's1',
      acctuniqueid: 'u-list-1',
      username: 'amy@list',
      nasipaddress: '192.0.2.1',
      acctstarttime: new Date(),
      framedipaddress: '100.64.0.9',
    });
  });
  const names = (res: { body: { data: { username: string }[] } }) => res.body.data.map((d) => d.username);

  it('scope, pagination and default sort (created_at desc)', async () => {
    const res = await api.get('/api/subscribers?limit=2', { token: tok });
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, limit: 2, total: 4 });
    expect(names(res)).toEqual(['carl@list', 'bob@list']);
    const p2 = await api.get('/api/subscribers?limit=2&page=2', { token: tok });
    expect(names(p2)).toEqual(['amy@list', 'zed@list']);
  });

  it('status filters, online from radacct through the trigger and the usage rollup, nas_id', async () => {
    const q = async (qs: string) =>
      names(await api.get(`/api/subscribers?${qs}&sort=username&order=asc`, { token: tok }));
    expect(await q('status=expired')).toEqual(['zed@list']);
    expect(await q('status=expiring')).toEqual(['amy@list']);
    expect(await q('status=inactive')).toEqual(['carl@list']);
    expect(await q('status=active')).toEqual(['amy@list', 'bob@list', 'zed@list']);
    expect(await q('status=online')).toEqual(['amy@list']);
    expect(await q('status=offline')).toEqual(['bob@list', 'carl@list', 'zed@list']);
    const [nas] = (await t.db.execute<{ id: number }>(sql`select id from nas where nasname = '192.0.2.1'`)).rows;
    expect(await q(`nas_id=${nas.id}`)).toEqual(['amy@list']);
    const amy = await api.get('/api/subscribers?search=amy', { token: tok });
    expect(amy.body.data[0]).toMatchObject({ is_online: true, ip_address: '100.64.0.9', last_nas_id: nas.id });
    await t.db.update(radacct).set({ acctstoptime: new Date() }).where(eq(radacct.acctuniqueid, 'u-list-1'));
    await rollupUsage(t.db);
    expect(await q('status=online')).toEqual([]);
    expect(await q(`service_id=${premium}`)).toEqual(['bob@list']);
    expect(await q('fup_level=0')).toHaveLength(4);
  });

  it('search on username, full_name, phone and MAC (substring, case-insensitive, % literal); sorts', async () => {
    const q = async (qs: string) => names(await api.get(`/api/subscribers?${qs}`, { token: tok }));
    expect(await q('search=ZED')).toEqual(['zed@list']);
    expect(await q('search=pond')).toEqual(['amy@list']);
    expect(await q('search=70003')).toEqual(['bob@list']);
    expect(await q('search=BE:EF')).toEqual(['bob@list']);
    expect(await q('search=%25')).toEqual([]);
    expect(await q('sort=expiry_date&order=asc')).toEqual(['zed@list', 'amy@list', 'carl@list', 'bob@list']);
    expect(await q('sort=username&order=desc')).toEqual(['zed@list', 'carl@list', 'bob@list', 'amy@list']);
    expect((await api.get('/api/subscribers?sort=daily_quota_used', { token: tok })).status).toBe(200);
  });

  it('400 for bad query values; reseller_id outside the tree is 403', async () => {
    for (const qs of ['limit=501', 'page=0', 'status=gone', 'sort=phone', 'order=up', 'fup_level=4', 'service_id=x']) {
      const res = await api.get(`/api/subscribers?${qs}`, { token: tok });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/limit|page|status|sort|order|fup_level|service_id/);
    }
    expect((await api.get(`/api/subscribers?reseller_id=${root}`, { token: tok })).status).toBe(403);
    const mine = await api.get(`/api/subscribers?reseller_id=${child}`, { token: admin });
    expect(mine.status).toBe(200);
    expect(mine.body.data.every((d: { reseller_id: number }) => d.reseller_id === child)).toBe(true);
  });
});

describe('update and delete', () => {
  it('PUT any subset, unknown fields dropped, password re-encrypted and radcheck updated', async () => {
    const s = await mkSub();
    const res = await api.put(
      `/api/subscribers/${s.id}`,
      { full_name: 'New Name', password: 'password', bogus: 1 },
      { token: admin },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.full_name).toBe('New Name');
    expect(res.body.data.bogus).toBeUndefined();
    expect((await attrs(s.username))['NT-Password']).toBe('8846F7EAEE8FB117AD06BDD830B7586C');
    const detail = await api.get(`/api/subscribers/${s.id}`, { token: admin });
    expect(detail.body.password).toBe('password');
  });

  it('PUT service_id clears the static address, moves the group and queues a disconnect', async () => {
    const s = await mkSub({ static_ip: '10.9.1.1' });
    const res = await api.put(`/api/subscribers/${s.id}`, { service_id: premium }, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ service_id: premium, static_ip: null });
    expect(await rows.reply(s.username)).toEqual([]);
    expect((await rows.group(s.username)).map((g) => g.groupname)).toEqual([`plan_${premium}`]);
    expect((await rows.outbox(s.id)).map((o) => (o.payload as { reason: string }).reason)).toEqual(['service_change']);
    expect((await api.put(`/api/subscribers/${s.id}`, { service_id: 9999 }, { token: admin })).body.message).toBe(
      'service_id not found',
    );
  });

  it("PUT reseller_id checks the new reseller's limit for the plan the subscriber ends on", async () => {
    const seller = await mkReseller('seller', null);
    await allow(seller, premium, 1);
    const s = await mkSub();
    const put = (body: Record<string, unknown>) => api.put(`/api/subscribers/${s.id}`, body, { token: admin });
    // No limit for basic under the new reseller: refused, nothing changed.
    const noLimit = await put({ reseller_id: seller });
    expect([noLimit.status, noLimit.body.message]).toEqual([403, 'reseller has no service limit for this plan']);
    expect(await rows.sub(s.id)).toMatchObject({ resellerId: root, serviceId: basic });
    // Moving to premium at once: premium is the plan to check, under the new reseller (root's own
    // premium limit is uncapped, so the old code passed a move that overfilled the new one).
    const taker = await mkSub({ reseller_id: seller, service_id: premium });
    const full = await put({ reseller_id: seller, service_id: premium });
    expect([full.status, full.body.message]).toEqual([403, 'reseller service limit reached for this plan']);
    expect(await rows.sub(s.id)).toMatchObject({ resellerId: root, serviceId: basic });
    await api.del(`/api/subscribers/${taker.id}`, { token: admin });
    const moved = await put({ reseller_id: seller, service_id: premium });
    expect(moved.status).toBe(200);
    expect(await rows.sub(s.id)).toMatchObject({ resellerId: seller, serviceId: premium });
  });

  it('PUT reseller_id counts the subscriber as locked, not as read before the lock', async () => {
    const seller = await mkReseller('seller-race', null);
    await allow(seller, premium, 1);
    await mkSub({ reseller_id: seller, service_id: premium });
    const s = await mkSub();
    // The PUT reads S on basic, then waits for S's lock while another writer moves S onto premium:
    // S does not hold a premium place under the seller, so the seller's full cap refuses it.
    const res = await behindAWriter(
      t,
      (tx) => tx.execute(sql`select id from subscribers where id = ${s.id} for update`),
      (tx) => tx.update(subscribers).set({ serviceId: premium }).where(eq(subscribers.id, s.id)),
      () => api.put(`/api/subscribers/${s.id}`, { reseller_id: seller, service_id: premium }, { token: admin }),
    );
    expect([res.status, res.body.message]).toEqual([403, 'reseller service limit reached for this plan']);
    expect(await rows.sub(s.id)).toMatchObject({ resellerId: root, serviceId: premium });
  });

  it('PUT decides on the row as locked: a plan moved meanwhile is moved back to the one sent', async () => {
    const s = await mkSub();
    const res = await behindAWriter(
      t,
      (tx) => tx.execute(sql`select id from subscribers where id = ${s.id} for update`),
      (tx) => tx.update(subscribers).set({ serviceId: premium }).where(eq(subscribers.id, s.id)),
      () => api.put(`/api/subscribers/${s.id}`, { service_id: basic, full_name: 'Form' }, { token: admin }),
    );
    expect(res.status).toBe(200);
    expect(res.body.data.service_id).toBe(basic);
    expect(await rows.sub(s.id)).toMatchObject({ serviceId: basic, fullName: 'Form' });
  });

  it('PUT without change_service: a form naming the plan moved away meanwhile is 403, nothing written', async () => {
    const s = await mkSub();
    const editor = token('user', { permissions: ALL.filter((p) => p !== 'subscribers.change_service') });
    const res = await behindAWriter(
      t,
      (tx) => tx.execute(sql`select id from subscribers where id = ${s.id} for update`),
      (tx) => tx.update(subscribers).set({ serviceId: premium }).where(eq(subscribers.id, s.id)),
      () => api.put(`/api/subscribers/${s.id}`, { service_id: basic, full_name: 'Form' }, { token: editor }),
    );
    expect([res.status, res.body.message]).toEqual([403, 'permission subscribers.change_service required']);
    expect(await rows.sub(s.id)).toMatchObject({ serviceId: premium, fullName: null });
  });

  it('PUT price is read in the currency of the plan as locked, not the plan read before the lock', async () => {
    const yen = await rootPlan('yen-race', 1500, 'JPY');
    const s = await mkSub();
    const res = await behindAWriter(
      t,
      (tx) => tx.execute(sql`select id from subscribers where id = ${s.id} for update`),
      (tx) => tx.update(subscribers).set({ serviceId: yen }).where(eq(subscribers.id, s.id)),
      () => api.put(`/api/subscribers/${s.id}`, { price: 15, override_price: true }, { token: admin }),
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ price: 15, currency: 'JPY' });
    // 15 yen, not 15.00 read as USD cents (1,500 yen).
    expect((await rows.sub(s.id)).price).toBe(15);
  });

  it('PUT 404 / 403 / 400', async () => {
    expect((await api.put('/api/subscribers/999999', { notes: 'x' }, { token: admin })).status).toBe(404);
    const other = await mkSub({ reseller_id: sibling });
    expect((await api.put(`/api/subscribers/${other.id}`, { notes: 'x' }, { token: rootTok })).status).toBe(403);
    const s = await mkSub();
    const bad = await api.put(`/api/subscribers/${s.id}`, { mac_address: 'nope' }, { token: admin });
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringContaining('mac_address')]);
    expect(
      (
        await api.put(
          `/api/subscribers/${s.id}`,
          { notes: 'x' },
          { token: token('user', { permissions: ['subscribers.view'] }) },
        )
      ).status,
    ).toBe(403);
  });

  it('soft delete removes the RADIUS rows and frees the username; permanent delete is admin only and keeps the ledger', async () => {
    const s = await mkSub({ username: 'gone@isp' });
    const del = await api.del(`/api/subscribers/${s.id}`, { token: rootTok });
    expect(del.status).toBe(200);
    expect((await rows.sub(s.id)).deletedAt).not.toBeNull();
    expect(await rows.check('gone@isp')).toEqual([]);
    expect(await rows.group('gone@isp')).toEqual([]);
    expect((await api.get(`/api/subscribers/${s.id}`, { token: admin })).status).toBe(404);
    const again = await mkSub({ username: 'gone@isp' });
    expect((await rows.check('gone@isp')).length).toBeGreaterThan(0);
    await api.post(`/api/subscribers/${again.id}/renew`, {}, { token: admin });
    expect((await api.del(`/api/subscribers/${again.id}/permanent`, { token: rootTok })).status).toBe(403);
    const perm = await api.del(`/api/subscribers/${again.id}/permanent`, { token: admin });
    expect(perm.status).toBe(200);
    expect(await rows.sub(again.id)).toBeUndefined();
    expect(await rows.check('gone@isp')).toEqual([]);
    expect((await t.db.select().from(transactions).where(eq(transactions.subscriberId, again.id))).length).toBe(1);
    expect((await api.del(`/api/subscribers/${again.id}/permanent`, { token: admin })).status).toBe(404);
  });
});

describe('renew', () => {
  it('debits the reseller through the ledger, extends expiry, resets counters, invoices, queues a reconnect', async () => {
    const r = await mkReseller('payer', null, 25);
    await allow(r, basic);
    const s = await mkSub({ reseller_id: r, expiry_date: plusDays(5) });
    await t.db
      .update(subscribers)
      .set({ dailyQuotaUsed: 5, monthlyQuotaUsed: 50, fupLevel: 2 })
      .where(eq(subscribers.id, s.id));
    const res = await api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      expiry_date: plusDays(35),
      daily_quota_used: 0,
      monthly_quota_used: 0,
      fup_level: 0,
    });
    const tx = await t.db.select().from(transactions).where(eq(transactions.id, res.body.data.transaction_id));
    expect(tx[0]).toMatchObject({ type: 'renewal', amount: -1000, resellerId: r, subscriberId: s.id });
    expect((await t.db.select().from(resellers).where(eq(resellers.id, r)))[0].balance).toBe(1500);
    const [inv] = await t.db.select().from(invoices).where(eq(invoices.subscriberId, s.id));
    expect(inv).toMatchObject({ kind: 'renewal', total: 1000, status: 'pending', id: res.body.data.invoice_id });
    expect((await rows.outbox(s.id)).map((o) => o.event)).toEqual(['subscriber.disconnect']);
    const again = await api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin });
    expect(again.status).toBe(409);
    expect(again.body.message).toBe('already renewed today');
  });

  it('402 insufficient reseller balance, nothing written', async () => {
    const r = await mkReseller('poor', null, 5);
    await allow(r, basic);
    const s = await mkSub({ reseller_id: r });
    const res = await api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin });
    expect(res.status).toBe(402);
    expect(res.body.message).toBe('insufficient reseller balance');
    expect((await rows.sub(s.id)).expiryDate).toBe(s.expiry_date);
    expect(await t.db.select().from(invoices).where(eq(invoices.subscriberId, s.id))).toEqual([]);
  });

  it('an expired subscriber renews from today and leaves the blocked group; wallet credit pays the invoice first', async () => {
    const s = await mkSub({ expiry_date: plusDays(-10) });
    expect((await rows.group(s.username)).map((g) => g.groupname)).toEqual(['billing_blocked']);
    await api.post(`/api/subscribers/${s.id}/add-balance`, { amount: 4 }, { token: admin });
    const res = await api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.expiry_date).toBe(plusDays(30));
    expect(res.body.data.wallet_applied).toBe(4);
    expect((await rows.group(s.username)).map((g) => g.groupname)).toEqual([`plan_${basic}`]);
    expect(await attrs(s.username)).toHaveProperty('Expiration');
    const [inv] = await t.db.select().from(invoices).where(eq(invoices.id, res.body.data.invoice_id));
    expect(inv).toMatchObject({ paidAmount: 400, status: 'partial' });
  });

  it('20 parallel renews of one subscriber: exactly one charge', async () => {
    const s = await mkSub();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(19);
    expect(
      await t.db
        .select()
        .from(transactions)
        .where(and(eq(transactions.subscriberId, s.id), eq(transactions.type, 'renewal'))),
    ).toHaveLength(1);
    expect(await t.db.select().from(invoices).where(eq(invoices.subscriberId, s.id))).toHaveLength(1);
  });
});

describe('single actions', () => {
  it('deactivate / activate: Reject rule and a disconnect', async () => {
    const s = await mkSub();
    const off = await api.post(`/api/subscribers/${s.id}/deactivate`, {}, { token: rootTok });
    expect(off.body.data.status).toBe('inactive');
    expect((await attrs(s.username))['Auth-Type']).toBe('Reject');
    expect((await rows.outbox(s.id)).map((o) => (o.payload as { reason: string }).reason)).toEqual(['disable']);
    const on = await api.post(`/api/subscribers/${s.id}/activate`, {}, { token: rootTok });
    expect(on.body.data.status).toBe('active');
    expect((await attrs(s.username))['Auth-Type']).toBeUndefined();
  });

  it('rename: every record follows, fee charged to the reseller', async () => {
    await saveSettings(t.db, { rename_fee: 2 });
    const s = await mkSub({ username: 'old@realm1', static_ip: '10.9.2.1' });
    await t.db
      .insert(radacct)
      .values({ acctsessionid: 'r1', acctuniqueid: 'u-rename', username: 'old@realm1', nasipaddress: '192.0.2.9' });
    const res = await api.post(`/api/subscribers/${s.id}/rename`, { new_username: 'new@realm2' }, { token: admin });
    await saveSettings(t.db, { rename_fee: 0 });
    expect(res.status).toBe(200);
    expect(res.body.data.username).toBe('new@realm2');
    expect(await rows.check('old@realm1')).toEqual([]);
    expect((await rows.check('new@realm2')).length).toBeGreaterThan(0);
    expect((await rows.reply('new@realm2')).length).toBe(1);
    expect((await rows.group('new@realm2')).length).toBe(1);
    expect((await t.db.select().from(radacct).where(eq(radacct.acctuniqueid, 'u-rename')))[0].username).toBe(
      'new@realm2',
    );
    const fee = await t.db
      .select()
      .from(transactions)
      .where(and(eq(transactions.subscriberId, s.id), eq(transactions.type, 'rename_fee')));
    expect(fee).toMatchObject([{ amount: -200, username: 'new@realm2' }]);
    const taken = await mkSub({ username: 'taken@realm2' });
    const dup = await api.post(`/api/subscribers/${s.id}/rename`, { new_username: taken.username }, { token: admin });
    expect([dup.status, dup.body.message]).toEqual([409, 'username already exists']);
    expect(
      (await api.post(`/api/subscribers/${s.id}/rename`, { new_username: 'bad name' }, { token: admin })).status,
    ).toBe(400);
  });

  it('add-days extends expiry and is audited; reset-fup, reset-mac, refill, topup-data, add-balance', async () => {
    const s = await mkSub({ service_id: premium, mac_address: 'aa:aa:aa:aa:aa:aa', expiry_date: plusDays(1) });
    const add = await api.post(`/api/subscribers/${s.id}/add-days`, { days: 10, reason: 'outage' }, { token: admin });
    expect(add.body.data.expiry_date).toBe(plusDays(11));
    const [audited] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entityId, s.id), eq(auditLog.action, 'subscriber.add_days')));
    expect(audited.details).toMatchObject({ 'request.days': 10, 'request.reason': 'outage' });
    expect(
      (await api.post(`/api/subscribers/${s.id}/add-days`, { days: 0, reason: 'x' }, { token: admin })).status,
    ).toBe(400);
    expect((await api.post(`/api/subscribers/${s.id}/add-days`, { days: 2 }, { token: admin })).body.message).toContain(
      'reason',
    );

    await t.db
      .update(subscribers)
      .set({ dailyQuotaUsed: 7, monthlyQuotaUsed: 70, fupLevel: 3 })
      .where(eq(subscribers.id, s.id));
    const fup = await api.post(`/api/subscribers/${s.id}/reset-fup`, {}, { token: admin });
    expect(fup.body.data).toMatchObject({ daily_quota_used: 0, fup_level: 0, monthly_quota_used: 70 });

    expect((await attrs(s.username))['Calling-Station-Id']).toBe('AA:AA:AA:AA:AA:AA');
    const mac = await api.post(`/api/subscribers/${s.id}/reset-mac`, {}, { token: admin });
    expect(mac.body.data.mac_address).toBeNull();
    expect((await attrs(s.username))['Calling-Station-Id']).toBeUndefined();

    await saveSettings(t.db, { refill_fee: 1.5 });
    const refill = await api.post(`/api/subscribers/${s.id}/refill`, {}, { token: admin });
    await saveSettings(t.db, { refill_fee: 0 });
    expect(refill.body.data).toMatchObject({ monthly_quota_used: 0 });
    expect(
      await t.db
        .select()
        .from(transactions)
        .where(and(eq(transactions.subscriberId, s.id), eq(transactions.type, 'refill_fee'))),
    ).toMatchObject([{ amount: -150 }]);

    const top = await api.post(`/api/subscribers/${s.id}/topup-data`, { gb: 2 }, { token: admin });
    expect(top.body.data.extra_quota_bytes).toBe(2 * 1024 ** 3);
    expect((await api.post(`/api/subscribers/${s.id}/topup-data`, { gb: 0 }, { token: admin })).status).toBe(400);

    const bal = await api.post(`/api/subscribers/${s.id}/add-balance`, { amount: 12.5 }, { token: admin });
    expect(bal.body.data.wallet_balance).toBe(12.5);
    expect(await t.db.select().from(walletEntries).where(eq(walletEntries.subscriberId, s.id))).toMatchObject([
      { amount: 1250 },
    ]);
    expect((await api.post(`/api/subscribers/${s.id}/add-balance`, { amount: 1.001 }, { token: admin })).status).toBe(
      400,
    );
  });

  it('change-service: quote equals the charge; charge_difference invoices the net due or credits the wallet', async () => {
    const s = await mkSub({ expiry_date: plusDays(15) });
    const quote = await api.get(`/api/subscribers/${s.id}/calculate-change-service-price?service_id=${premium}`, {
      token: admin,
    });
    expect(quote.status).toBe(200);
    expect(quote.body.data).toMatchObject({
      days_remaining: 15,
      old_unused_credit: 5,
      new_service_charge: 15,
      net_amount_due: 10,
    });
    const res = await api.post(
      `/api/subscribers/${s.id}/change-service`,
      { service_id: premium, charge_difference: true },
      { token: admin },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.service_id).toBe(premium);
    const [inv] = await t.db.select().from(invoices).where(eq(invoices.id, res.body.data.invoice_id));
    expect(inv).toMatchObject({ kind: 'service_change', amount: 1000 });
    const back = await api.post(
      `/api/subscribers/${s.id}/change-service`,
      { service_id: basic, charge_difference: true },
      { token: admin },
    );
    // The 10.00 refund pays the upgrade's unpaid invoice first: up and straight back makes no money.
    expect(back.body.data.wallet_balance).toBe(0);
    const [paidBack] = await t.db.select().from(invoices).where(eq(invoices.id, res.body.data.invoice_id));
    expect(paidBack).toMatchObject({ status: 'paid', paidAmount: 1000 });
    expect(
      (await api.post(`/api/subscribers/${s.id}/change-service`, { service_id: 9999 }, { token: admin })).body.message,
    ).toBe('service_id not found');
    expect((await api.get(`/api/subscribers/${s.id}/calculate-change-service-price`, { token: admin })).status).toBe(
      400,
    );
  });

  it('change-service with a default tax: the refund returns the tax the upgrade charged, up and back owes nothing', async () => {
    await withDefaultTax(api, 10, async () => {
      const s = await mkSub({ expiry_date: plusDays(15) });
      const up = await api.post(
        `/api/subscribers/${s.id}/change-service`,
        { service_id: premium, charge_difference: true },
        { token: admin },
      );
      expect(up.body.data).toMatchObject({ net_amount_due: 10, wallet_credited: 0 });
      const [upgrade] = await t.db.select().from(invoices).where(eq(invoices.id, up.body.data.invoice_id));
      expect(upgrade).toMatchObject({ amount: 1000, taxAmount: 100, total: 1100 });
      const back = await api.post(
        `/api/subscribers/${s.id}/change-service`,
        { service_id: basic, charge_difference: true },
        { token: admin },
      );
      expect(back.body.data).toMatchObject({ net_amount_due: -10, wallet_credited: 11, wallet_balance: 0 });
      const [paid] = await t.db.select().from(invoices).where(eq(invoices.id, upgrade.id));
      expect(paid).toMatchObject({ status: 'paid', paidAmount: 1100 });
      const [credit] = await t.db
        .select()
        .from(walletEntries)
        .where(eq(walletEntries.transactionId, back.body.data.wallet_transaction_id));
      expect(credit).toMatchObject({ amount: 1100 });
    });
  });

  it('change-service: the refund returns tax at the rate the period was paid at, not a rate raised since', async () => {
    const s = await mkSub({ service_id: premium, expiry_date: plusDays(15) });
    const renewed = await api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin });
    expect(renewed.status).toBe(200);
    await withDefaultTax(api, 15, async () => {
      const back = await api.post(
        `/api/subscribers/${s.id}/change-service`,
        { service_id: basic, charge_difference: true },
        { token: admin },
      );
      expect(back.status).toBe(200);
      // The renewal was invoiced at 0%: the refund is the net alone.
      expect(back.body.data.wallet_credited).toBe(-back.body.data.net_amount_due);
    });
  });

  it('change-service: a refund in a currency the wallet does not hold is 409 and nothing changes', async () => {
    const big = await rootPlan('yen-big', 3000, 'JPY');
    const small = await rootPlan('yen-small', 1000, 'JPY');
    const s = await mkSub({ service_id: big, expiry_date: plusDays(15) });
    const res = await api.post(
      `/api/subscribers/${s.id}/change-service`,
      { service_id: small, charge_difference: true },
      { token: admin },
    );
    expect([res.status, res.body.message]).toEqual([
      409,
      'the plan change refunds JPY, but the wallet holds USD: change it without charge_difference',
    ]);
    expect(await rows.sub(s.id)).toMatchObject({ serviceId: big, walletBalance: 0 });
  });

  it('a move to a plan in another currency is 409 while the subscriber has its own price; a PUT sending a new one moves', async () => {
    const planId = await rootPlan('yen-own', 1500, 'JPY');
    const s = await mkSub({ override_price: true, price: 15 });
    const moved = await api.post(`/api/subscribers/${s.id}/change-service`, { service_id: planId }, { token: admin });
    expect([moved.status, moved.body.message]).toEqual([
      409,
      "the subscriber's own price is in USD: clear or change it to move to a plan in JPY",
    ]);
    expect(await rows.sub(s.id)).toMatchObject({ serviceId: basic, price: 1500 });
    const put = await api.put(`/api/subscribers/${s.id}`, { service_id: planId, price: 2000 }, { token: admin });
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ price: 2000, currency: 'JPY' });
    expect(await rows.sub(s.id)).toMatchObject({ serviceId: planId, price: 2000 });
  });

  it('change-service reads the new plan as held in its transaction: a currency change committed meanwhile is seen', async () => {
    const planId = await rootPlan('turns-yen', 10, 'USD');
    const s = await mkSub({ override_price: true, price: 15 });
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(services).where(eq(services.id, planId)).for('update'),
      (tx) => tx.update(services).set({ currency: 'JPY', price: 1500 }).where(eq(services.id, planId)),
      () => api.post(`/api/subscribers/${s.id}/change-service`, { service_id: planId }, { token: admin }),
    );
    expect([res.status, res.body.message]).toEqual([
      409,
      "the subscriber's own price is in USD: clear or change it to move to a plan in JPY",
    ]);
    expect(await rows.sub(s.id)).toMatchObject({ serviceId: basic, price: 1500 });
  });

  it('a plan-change refund pays open invoices with itself only, not with what the wallet held before', async () => {
    const s = await mkSub({ service_id: premium, expiry_date: plusDays(15) });
    await api.post(`/api/subscribers/${s.id}/add-balance`, { amount: 50 }, { token: admin });
    const inv = await api.post(
      '/api/invoices',
      { subscriber_id: s.id, items: [{ description: 'router', qty: 1, unit_price: 30 }], tax_rate: 0 },
      { token: admin },
    );
    expect(inv.status).toBe(201);
    // premium 30.00 -> basic 10.00 with 15 of 30 days left: 10.00 back.
    const res = await api.post(
      `/api/subscribers/${s.id}/change-service`,
      { service_id: basic, charge_difference: true },
      { token: admin },
    );
    expect(res.status).toBe(200);
    expect(await rows.sub(s.id)).toMatchObject({ serviceId: basic, walletBalance: 5000 });
    const [router] = await t.db.select().from(invoices).where(eq(invoices.id, inv.body.data.id));
    expect(router).toMatchObject({ status: 'partial', paidAmount: 1000 });
  });

  it('each action is 403 for a user lacking its permission, and 404 for an unknown id', async () => {
    const s = await mkSub();
    const user = token('user', { permissions: ['subscribers.view'] });
    const actions: [string, unknown][] = [
      ['renew', {}],
      ['reset-fup', {}],
      ['reset-mac', {}],
      ['rename', { new_username: 'zz@isp' }],
      ['add-days', { days: 1, reason: 'x' }],
      ['change-service', { service_id: premium }],
      ['activate', {}],
      ['deactivate', {}],
      ['refill', {}],
      ['topup-data', { gb: 1 }],
      ['add-balance', { amount: 1 }],
    ];
    for (const [path, body] of actions) {
      expect([path, (await api.post(`/api/subscribers/${s.id}/${path}`, body, { token: user })).status]).toEqual([
        path,
        403,
      ]);
      expect([path, (await api.post(`/api/subscribers/999999/${path}`, body, { token: admin })).status]).toEqual([
        path,
        404,
      ]);
    }
    expect(
      (await api.get(`/api/subscribers/${s.id}/calculate-change-service-price?service_id=${premium}`, { token: user }))
        .status,
    ).toBe(403);
    expect((await api.del(`/api/subscribers/${s.id}`, { token: user })).status).toBe(403);
    expect(await rows.outbox(s.id)).toEqual([]);
  });
});

describe('bandwidth rules', () => {
  it('create, list, update, delete; permanent rules become the Mikrotik-Rate-Limit reply', async () => {
    const s = await mkSub();
    const base = `/api/subscribers/${s.id}/bandwidth-rules`;
    const up = await api.post(base, { direction: 'upload', rate_kbps: 2048 }, { token: admin });
    expect(up.status).toBe(201);
    expect((await rows.reply(s.username)).map((r) => [r.attribute, r.value])).toEqual([
      ['Mikrotik-Rate-Limit', '2048k/10M'],
    ]);
    const night = await api.post(
      base,
      { direction: 'download', rate_kbps: 50000, start_time: '22:00', end_time: '06:00', priority: 1 },
      { token: admin },
    );
    expect(night.status).toBe(201);
    expect((await rows.reply(s.username))[0].value).toBe('2048k/10M');
    const list = await api.get(base, { token: admin });
    expect(list.body.data.map((r: { direction: string }) => r.direction)).toEqual(['download', 'upload']);
    const upd = await api.put(`${base}/${up.body.data.id}`, { direction: 'both', rate_kbps: 4096 }, { token: admin });
    expect(upd.body.data).toMatchObject({ direction: 'both', rate_kbps: 4096 });
    expect((await rows.reply(s.username))[0].value).toBe('4096k/4096k');
    const viaBody = await api.put(base, { rule_id: up.body.data.id, rate_kbps: 1000 }, { token: admin });
    expect(viaBody.status).toBe(200);
    expect((await api.post(base, { direction: 'sideways', rate_kbps: 1 }, { token: admin })).body.message).toContain(
      'direction',
    );
    expect(
      (await api.post(base, { direction: 'upload', rate_kbps: 1, start_time: '10:00' }, { token: admin })).body.message,
    ).toContain('end_time');
    expect((await api.del(base, { token: admin, body: { rule_id: up.body.data.id } })).status).toBe(200);
    expect(await rows.reply(s.username)).toEqual([]);
    expect((await api.del(`${base}/${night.body.data.id}`, { token: admin })).status).toBe(200);
    expect((await api.del(`${base}/${night.body.data.id}`, { token: admin })).status).toBe(404);
    expect(
      (
        await api.post(
          base,
          { direction: 'upload', rate_kbps: 1 },
          { token: token('user', { permissions: ['subscribers.view'] }) },
        )
      ).status,
    ).toBe(403);
  });
});

describe('bulk actions', () => {
  const bulk = (body: unknown, tok = admin) => api.post('/api/subscribers/bulk-action', body, { token: tok });

  it('renew: the wallets pay the renewal invoices of a batch, each as payFromWallet would, ledger in step', async () => {
    const r = await mkReseller('walletbatch', null, 100);
    await allow(r, basic);
    const full = await mkSub({ reseller_id: r });
    const part = await mkSub({ reseller_id: r });
    const none = await mkSub({ reseller_id: r });
    await api.post(`/api/subscribers/${full.id}/add-balance`, { amount: 25 }, { token: admin });
    await api.post(`/api/subscribers/${part.id}/add-balance`, { amount: 4 }, { token: admin });
    const res = await bulk({ ids: [full.id, part.id, none.id], action: 'renew' });
    expect(res.status).toBe(200);
    expect(res.body.data.succeeded).toEqual([full.id, part.id, none.id]);
    const state = async (id: number) => {
      const sub = await rows.sub(id);
      const [inv] = await t.db.select().from(invoices).where(eq(invoices.subscriberId, id));
      const pays = await t.pool.query<{ amount: string; transaction_id: string }>(
        'select amount, transaction_id from invoice_payments where invoice_id = $1',
        [inv.id],
      );
      const ledger = await t.db
        .select()
        .from(transactions)
        .where(and(eq(transactions.subscriberId, id), eq(transactions.type, 'invoice_payment')));
      const entries = await t.db.select().from(walletEntries).where(eq(walletEntries.subscriberId, id));
      return {
        wallet: sub.walletBalance,
        entriesSum: entries.reduce((a, e) => a + e.amount, 0),
        invoice: [inv.status, inv.paidAmount, inv.total],
        paymentsSum: pays.rows.reduce((a, p) => a + Number(p.amount), 0),
        ledger: ledger.map((l) => [l.amount, l.method, l.invoiceId]),
        paymentLedgerIds: pays.rows.map((p) => Number(p.transaction_id)).sort(),
        ledgerIds: ledger.map((l) => l.id).sort(),
        negativeEntryTx: entries.filter((e) => e.amount < 0).map((e) => e.transactionId),
      };
    };
    const f = await state(full.id);
    expect(f).toMatchObject({ wallet: 1500, entriesSum: 1500, invoice: ['paid', 1000, 1000], paymentsSum: 1000 });
    expect(f.ledger).toEqual([[1000, 'wallet', expect.any(Number)]]);
    expect(f.paymentLedgerIds).toEqual(f.ledgerIds);
    expect(f.negativeEntryTx).toEqual(f.ledgerIds);
    const p = await state(part.id);
    expect(p).toMatchObject({ wallet: 0, entriesSum: 0, invoice: ['partial', 400, 1000], paymentsSum: 400 });
    expect(p.ledger).toEqual([[400, 'wallet', expect.any(Number)]]);
    const n = await state(none.id);
    expect(n).toMatchObject({ wallet: 0, invoice: ['pending', 0, 1000], paymentsSum: 0, ledger: [] });
  });

  it('renew: per-id outcome with reasons; bulk_jobs row records progress', async () => {
    const r = await mkReseller('bulkpayer', null, 25);
    await allow(r, basic);
    const a = await mkSub({ reseller_id: r });
    const b = await mkSub({ reseller_id: r });
    const c = await mkSub({ reseller_id: r });
    const other = await mkSub({ reseller_id: sibling });
    const tok = token('reseller', { resellerId: r, permissions: ['subscribers.renew'] });
    const res = await bulk({ ids: [a.id, b.id, c.id, other.id, 999999], action: 'renew' }, tok);
    expect(res.status).toBe(200);
    expect(res.body.data.succeeded).toEqual([a.id, b.id]);
    expect(res.body.data.failed).toEqual(
      expect.arrayContaining([
        { id: c.id, reason: 'insufficient reseller balance' },
        { id: other.id, reason: 'out of scope' },
        { id: 999999, reason: 'subscriber not found' },
      ]),
    );
    const [job] = (
      await t.db.execute<{ status: string; processed: number; total: number }>(
        sql`select * from bulk_jobs where id = ${res.body.job_id}`,
      )
    ).rows;
    expect(job).toMatchObject({ status: 'done', processed: 5, total: 5 });
    const status = await api.get(`/api/subscribers/bulk-jobs/${res.body.job_id}`, { token: tok });
    expect(status.body.data).toMatchObject({ status: 'done', succeeded: [a.id, b.id] });
    expect((await api.get('/api/subscribers/bulk-jobs/999999', { token: admin })).status).toBe(404);
    const again = await bulk({ ids: [a.id, b.id, c.id], action: 'renew' }, tok);
    expect(again.status).toBe(200);
    expect(again.body.data.failed).toEqual(
      expect.arrayContaining([
        { id: a.id, reason: 'already renewed today' },
        { id: b.id, reason: 'already renewed today' },
        { id: c.id, reason: 'insufficient reseller balance' },
      ]),
    );
  });

  it('renew: already renewed today is 409 alone, 422 when it is the whole batch, a per-id failure in a mixed one', async () => {
    const [a, b, c] = [await mkSub(), await mkSub(), await mkSub()];
    const renewals = async () =>
      (
        await t.db
          .select()
          .from(transactions)
          .where(
            and(sql`${transactions.subscriberId} in (${a.id}, ${b.id}, ${c.id})`, eq(transactions.type, 'renewal')),
          )
      ).length;
    expect((await bulk({ ids: [a.id, b.id], action: 'renew' })).body.data).toEqual({
      succeeded: [a.id, b.id],
      failed: [],
    });
    const expiry = (await rows.sub(a.id)).expiryDate;

    const single = await api.post(`/api/subscribers/${a.id}/renew`, {}, { token: admin });
    expect([single.status, single.body]).toEqual([409, { success: false, message: 'already renewed today' }]);

    const noOp = await bulk({ ids: [b.id, a.id, a.id], action: 'renew' });
    expect([noOp.status, noOp.body]).toEqual([422, { success: false, message: 'already renewed today' }]);
    // Accepted: the audit row is written and says why nothing happened; nothing was charged.
    const [job] = (
      await t.db.execute<{ status: string; succeeded: number[]; failed: { id: number; reason: string }[] }>(
        sql`select status, succeeded, failed from bulk_jobs order by id desc limit 1`,
      )
    ).rows;
    expect(job.status).toBe('done');
    expect(job.succeeded).toEqual([]);
    expect([...job.failed].sort((x, y) => x.id - y.id)).toEqual(
      [a.id, b.id].map((id) => ({ id, reason: 'already renewed today' })),
    );
    expect(await renewals()).toBe(2);
    expect((await rows.sub(a.id)).expiryDate).toBe(expiry);

    const mixed = await bulk({ ids: [a.id, c.id, b.id], action: 'renew' });
    expect(mixed.status).toBe(200);
    expect(mixed.body.data.succeeded).toEqual([c.id]);
    expect(mixed.body.data.failed).toEqual(
      expect.arrayContaining([
        { id: a.id, reason: 'already renewed today' },
        { id: b.id, reason: 'already renewed today' },
      ]),
    );
    expect(mixed.body.data.failed).toHaveLength(2);
    expect(await renewals()).toBe(3);

    // Another failure beside the no-ops is not a no-op: the caller reads it in `failed`.
    const withMissing = await bulk({ ids: [a.id, 999999], action: 'renew' });
    expect(withMissing.status).toBe(200);
    expect(withMissing.body.data.failed).toEqual(
      expect.arrayContaining([
        { id: a.id, reason: 'already renewed today' },
        { id: 999999, reason: 'subscriber not found' },
      ]),
    );
  });

  it('every action, with its RADIUS rows and outbox events', async () => {
    const ids = await Promise.all(
      [1, 2, 3].map(() =>
        mkSub({ service_id: premium, mac_address: `00:00:00:00:00:0${++seq % 10}` }).then((s) => s.id),
      ),
    );
    ids.sort((x, y) => x - y);
    const names = async () => (await Promise.all(ids.map((id) => rows.sub(id)))).map((s) => s.username);
    const ok = async (action: string, payload: Record<string, unknown> = {}) => {
      const res = await bulk({ ids, action, payload });
      expect([action, res.status, res.body.data.failed]).toEqual([action, 200, []]);
      expect(res.body.data.succeeded).toEqual(ids);
    };
    await ok('disable');
    for (const n of await names()) expect((await attrs(n))['Auth-Type']).toBe('Reject');
    await ok('enable');
    for (const n of await names()) expect((await attrs(n))['Auth-Type']).toBeUndefined();
    await ok('disconnect');
    expect((await rows.outbox(ids[0])).map((o) => (o.payload as { reason: string }).reason)).toEqual([
      'disable',
      'disconnect',
    ]);
    await ok('reset_fup');
    await ok('reset_mac');
    for (const n of await names()) expect((await attrs(n))['Calling-Station-Id']).toBeUndefined();
    await ok('set_daily_quota', { gb: 20000 });
    await ok('set_monthly_quota', { gb: -5 });
    await ok('set_price', { price: 99999, override_price: true });
    const row = await rows.sub(ids[0]);
    expect([row.dailyQuotaGb, row.monthlyQuotaGb, row.price, row.overridePrice]).toEqual([
      '10000.000',
      '0.000',
      1000000,
      true,
    ]);
    await ok('set_service', { service_id: basic });
    for (const n of await names()) expect((await rows.group(n)).map((g) => g.groupname)).toEqual([`plan_${basic}`]);
    await ok('set_reseller', { reseller_id: child });
    expect((await rows.sub(ids[1])).resellerId).toBe(child);
    await t.db.insert(ipPools).values({ name: 'statics', rangeStart: '10.20.0.1', rangeEnd: '10.20.0.4' });
    await t.db
      .insert(radreply)
      .values({ username: 'someone-else', attribute: 'Framed-IP-Address', op: ':=', value: '10.20.0.1' });
    await ok('set_static_ip', { pool_name: 'statics' });
    expect((await Promise.all(ids.map((id) => rows.sub(id)))).map((s) => s.staticIp)).toEqual([
      '10.20.0.2',
      '10.20.0.3',
      '10.20.0.4',
    ]);
    await ok('refill');
    await ok('rename', { old_realm: 'isp', new_realm: 'new.isp' });
    for (const n of await names()) {
      expect(n).toMatch(/@new\.isp$/);
      expect((await rows.check(n)).length).toBeGreaterThan(0);
    }
    await ok('set_price', { price: 1, override_price: true });
    await ok('renew');
    expect((await rows.outbox(ids[2])).at(-1)?.payload).toMatchObject({ reason: 'renew' });
    await ok('delete');
    for (const n of await names()) expect(await rows.check(n)).toEqual([]);
  });

  it('set_static_ip: one address, one subscriber; exhausted pools; set_service limits; rename outside the realm', async () => {
    const [a, b] = [await mkSub(), await mkSub()];
    const ip = await bulk({ ids: [a.id, b.id], action: 'set_static_ip', payload: { ip: '10.30.0.1' } });
    expect(ip.body.data).toEqual({ succeeded: [a.id], failed: [{ id: b.id, reason: 'static_ip already used' }] });
    expect((await rows.reply(a.username)).map((r) => r.value)).toEqual(['10.30.0.1']);
    await t.db.insert(ipPools).values({ name: 'tiny', rangeStart: '10.40.0.1', rangeEnd: '10.40.0.1' });
    const pool = await bulk({ ids: [a.id, b.id], action: 'set_static_ip', payload: { pool_name: 'tiny' } });
    expect(pool.body.data.failed).toEqual([{ id: b.id, reason: 'pool has no free address' }]);
    const lone = await mkReseller('lone2', null);
    await allow(lone, basic);
    const c = await mkSub({ reseller_id: lone });
    const svc = await bulk({ ids: [a.id, c.id], action: 'set_service', payload: { service_id: premium } });
    expect(svc.body.data).toEqual({
      succeeded: [a.id],
      failed: [{ id: c.id, reason: 'reseller has no service limit for this plan' }],
    });
    const plain = await mkSub({ username: 'plainname' });
    const ren = await bulk({ ids: [plain.id], action: 'rename', payload: { old_realm: 'isp', new_realm: 'x' } });
    expect(ren.body.data.failed).toEqual([{ id: plain.id, reason: 'username is not in realm isp' }]);
  });

  it('set_service to a plan in another currency: a subscriber with its own price fails alone, the others move', async () => {
    const planId = await rootPlan('yen-bulk', 1500, 'JPY');
    const [own, plain] = [await mkSub({ override_price: true, price: 15 }), await mkSub()];
    const res = await bulk({ ids: [own.id, plain.id], action: 'set_service', payload: { service_id: planId } });
    expect(res.body.data).toEqual({
      succeeded: [plain.id],
      failed: [
        { id: own.id, reason: "the subscriber's own price is in USD: clear or change it to move to a plan in JPY" },
      ],
    });
    expect(await rows.sub(own.id)).toMatchObject({ serviceId: basic, price: 1500 });
  });

  it('set_static_ipv6: one prefix, one subscriber, normalised; a pool of ours serves each until it runs out; a replaced prefix goes back', async () => {
    const [a, b] = [await mkSub(), await mkSub()];
    const one = await bulk({
      ids: [a.id, b.id],
      action: 'set_static_ipv6',
      payload: { field: 'delegated_ipv6_prefix', prefix: '2001:DB8:0077:0000::/56' },
    });
    expect(one.body.data).toEqual({
      succeeded: [a.id],
      failed: [
        {
          id: b.id,
          reason: 'delegated_ipv6_prefix overlaps 2001:db8:77::/56, already used by another subscriber',
        },
      ],
    });
    expect((await rows.sub(a.id)).delegatedIpv6Prefix).toBe('2001:db8:77::/56');
    expect((await rows.reply(a.username)).map((r) => [r.attribute, r.value])).toContainEqual([
      'Delegated-IPv6-Prefix',
      '2001:db8:77::/56',
    ]);
    expect((await rows.outbox(a.id)).at(-1)?.payload).toMatchObject({ reason: 'ipv6_prefix' });
    // A /64 inside a's /56 overlaps it: refused, b keeps none.
    const inside = await bulk({
      ids: [b.id],
      action: 'set_static_ipv6',
      payload: { field: 'delegated_ipv6_prefix', prefix: '2001:db8:77:5::/64' },
    });
    expect(inside.body.data.failed).toEqual([
      { id: b.id, reason: 'delegated_ipv6_prefix overlaps 2001:db8:77::/56, already used by another subscriber' },
    ]);
    expect((await rows.sub(b.id)).delegatedIpv6Prefix).toBeNull();
    // A WAN prefix from a pool of two /64s: a and b get the two lowest, c finds none and keeps its own.
    await t.db.execute(
      sql`insert into ipv6_pools (name, prefix, prefix_length) values ('wan-two', '2001:db8:99::/63', 64)`,
    );
    const c = await mkSub({ ipv6_prefix: '2001:db8:98::/64' });
    const pool = await bulk({
      ids: [a.id, b.id, c.id],
      action: 'set_static_ipv6',
      payload: { field: 'ipv6_prefix', pool_name: 'wan-two' },
    });
    expect(pool.body.data).toEqual({
      succeeded: [a.id, b.id],
      failed: [{ id: c.id, reason: 'IPv6 pool wan-two has no free prefix' }],
    });
    expect([
      (await rows.sub(a.id)).ipv6Prefix,
      (await rows.sub(b.id)).ipv6Prefix,
      (await rows.sub(c.id)).ipv6Prefix,
    ]).toEqual(['2001:db8:99::/64', '2001:db8:99:1::/64', '2001:db8:98::/64']);
    // a's pool prefix replaced by hand goes back to the pool: c may draw it now.
    expect(
      (
        await bulk({
          ids: [a.id],
          action: 'set_static_ipv6',
          payload: { field: 'ipv6_prefix', prefix: '2001:db8:97::/64' },
        })
      ).body.data.succeeded,
    ).toEqual([a.id]);
    const again = await bulk({
      ids: [c.id],
      action: 'set_static_ipv6',
      payload: { field: 'ipv6_prefix', pool_name: 'wan-two' },
    });
    expect(again.body.data.succeeded).toEqual([c.id]);
    expect((await rows.sub(c.id)).ipv6Prefix).toBe('2001:db8:99::/64');
    const held = await t.db.execute(
      sql`select subscriber_id from ipv6_pool_assignments where pool_name = 'wan-two' order by index`,
    );
    expect(held.rows.map((r) => Number(r.subscriber_id))).toEqual([c.id, b.id]);
    for (const [payload, field] of [
      [{ field: 'delegated_ipv6_prefix', prefix: '2001:db8::/32' }, 'delegated_ipv6_prefix'],
      [{ field: 'ipv6_prefix', prefix: 'not-v6' }, 'ipv6_prefix'],
      [{ field: 'ipv6_prefix', pool_name: 'nope' }, 'payload.pool_name'],
      [{ field: 'wan', prefix: '2001:db8::/64' }, 'payload.field'],
      [{ field: 'ipv6_prefix' }, 'payload'],
    ] as const) {
      const r = await bulk({ ids: [a.id], action: 'set_static_ipv6', payload });
      expect([r.status, r.body.message]).toEqual([400, expect.stringContaining(field)]);
    }
  });

  it('set_reseller moves only the subscribers whose plan the new reseller sells, within its caps', async () => {
    const target = await mkReseller('target', null);
    await allow(target, premium, 2);
    // One of the cap's two places is held by a subscriber named in the job: it is not counted again.
    const already = await mkSub({ reseller_id: target, service_id: premium });
    const onBasic = await mkSub();
    const onPremium = [];
    for (let i = 0; i < 2; i++) onPremium.push(await mkSub({ service_id: premium }));
    const ids = [already.id, onBasic.id, ...onPremium.map((p) => p.id)];
    const res = await bulk({ ids, action: 'set_reseller', payload: { reseller_id: target } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      succeeded: [already.id, onPremium[0].id],
      failed: [
        { id: onBasic.id, reason: 'reseller has no service limit for this plan' },
        { id: onPremium[1].id, reason: 'reseller service limit reached for this plan' },
      ],
    });
    const owners = await t.db
      .select({ id: subscribers.id, resellerId: subscribers.resellerId })
      .from(subscribers)
      .where(inArray(subscribers.id, ids))
      .orderBy(subscribers.id);
    expect(owners).toEqual([
      { id: already.id, resellerId: target },
      { id: onBasic.id, resellerId: root },
      { id: onPremium[0].id, resellerId: target },
      { id: onPremium[1].id, resellerId: root },
    ]);
  });

  it('set_reseller respects the tree; per-id permission failures; bad payloads are 400 naming the field', async () => {
    const s = await mkSub({ reseller_id: child });
    const childTok = token('reseller', { resellerId: child, permissions: ['subscribers.transfer'] });
    expect((await bulk({ ids: [s.id], action: 'set_reseller', payload: { reseller_id: root } }, childTok)).status).toBe(
      403,
    );
    const noPerm = token('reseller', { resellerId: root, permissions: [] });
    const res = await bulk({ ids: [s.id], action: 'delete' }, noPerm);
    expect(res.body.data).toEqual({
      succeeded: [],
      failed: [{ id: s.id, reason: 'permission subscribers.delete required' }],
    });
    expect((await rows.sub(s.id)).deletedAt).toBeNull();
    expect((await bulk({ ids: [s.id], action: 'renew' }, token('user', { permissions: ALL }))).status).toBe(403);
    const jobsBefore = (await t.db.execute(sql`select count(*)::int as n from bulk_jobs`)).rows[0];
    const bad: [unknown, string][] = [
      [{ ids: [], action: 'renew' }, 'ids'],
      [{ ids: [s.id], action: 'explode' }, 'action'],
      [{ ids: [s.id], action: 'set_service', payload: {} }, 'payload.service_id'],
      [{ ids: [s.id], action: 'set_service', payload: { service_id: 9999 } }, 'payload.service_id'],
      [{ ids: [s.id], action: 'set_static_ip', payload: { ip: '999.1.1.1' } }, 'payload.ip'],
      [{ ids: [s.id], action: 'set_static_ip', payload: { pool_name: 'nope' } }, 'payload.pool_name'],
      [{ ids: [s.id], action: 'set_daily_quota', payload: { gb: 'lots' } }, 'payload.gb'],
      [{ ids: [s.id], action: 'rename', payload: { old_realm: 'a' } }, 'payload.new_realm'],
      [{ ids: ['x'], action: 'renew' }, 'ids'],
    ];
    for (const [body, field] of bad) {
      const r = await bulk(body);
      expect([r.status, r.body.message]).toEqual([400, expect.stringContaining(field)]);
    }
    expect((await t.db.execute(sql`select count(*)::int as n from bulk_jobs`)).rows[0]).toEqual(jobsBefore);
  });
});
