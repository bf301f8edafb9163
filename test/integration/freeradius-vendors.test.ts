/**
 * Vendor profiles through the stock FreeRADIUS (deploy/freeradius through run.sh,
 * test/helpers/freeradius.ts) driven with radclient and Debian's vendor dictionaries: for a NAS of
 * each vendor, the Access-Accept of a subscriber on its plan, of one throttled to a fair-use tier
 * and of one in the walled garden, decoded by radclient, with their exact reply attributes. One NAS
 * (127.0.0.1, radclient's source) moves from vendor to vendor through PUT /api/nas/:id, and
 * FreeRADIUS, which reads its clients at start, is started again for each.
 */
import { rollupUsage } from '../../shared/access/usage-rollup';
import { GIB } from '../../shared/domain/fup';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { startFreeradius, type Radius, type RadiusAnswer } from '../helpers/freeradius';

const SECRET = 'radius-vendor-secret';
const DAY_MS = 86_400_000;

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let reseller: number;
let plan: number;
let nasId: number;
let seq = 0;

interface Sub {
  id: number;
  username: string;
  password: string;
}
let onPlan: Sub;
let throttled: Sub;
let blocked: Sub;
let ruled: Sub;
/** On the IPv6 plan: one with no prefix of its own (the NAS's pools), one dual-stack with its own. */
let pooled6: Sub;
let dualStack: Sub;
/** IPv6-only: no IPv4 address of its own, its own delegated prefix, the NAS's WAN pool. */
let v6Only: Sub;
const V6_ONLY_DELEGATED = '2001:db8:6200::/56';
const DUAL = { ipv4: '10.61.0.5', wan: '2001:db8:61::/64', delegated: '2001:db8:6100::/56' };

/** The attribute naming the NAS's delegated-prefix pool, per vendor (Framed-IPv6-Pool is the same on all). */
const DELEGATED_POOL: Record<string, string> = {
  mikrotik: 'Mikrotik-Delegated-IPv6-Pool',
  'accel-ppp': 'Delegated-IPv6-Prefix-Pool',
  cisco: 'Delegated-IPv6-Prefix-Pool',
  juniper: 'ERX-IPv6-Delegated-Pool-Name',
  huawei: 'Delegated-IPv6-Prefix-Pool',
  nokia: 'Alc-Delegated-IPv6-Pool',
  generic: 'Delegated-IPv6-Prefix-Pool',
};

async function mkSub(extra: Record<string, unknown> = {}, servicePlan = plan): Promise<Sub> {
  seq += 1;
  const password = `vendor-${seq}`;
  const res = await api.post(
    '/api/subscribers',
    { username: `v${seq}@isp`, password, service_id: servicePlan, reseller_id: reseller, ...extra },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return { ...(res.body.data as { id: number; username: string }), password };
}

/** What the reply says beyond Session-Timeout (the Expiration row's, the same for every vendor). */
const replyPairs = (res: RadiusAnswer) => res.pairs.filter(([name]) => name !== 'Session-Timeout');

/**
 * Plan 10M/20M (MikroTik's rx/tx: 10 Mbit/s up, 20 down) with pool home_pool; tier 1 at 2 GB is
 * 2M/4M; the garden's rate 256k/256k. Each vendor's exact reply, in the order FreeRADIUS sends it.
 */
const EXPECTED: Record<string, { plan: [string, string][]; tier: [string, string][]; garden: [string, string][] }> = {
  mikrotik: {
    plan: [
      ['Framed-Pool', 'home_pool'],
      ['Mikrotik-Rate-Limit', '10M/20M'],
    ],
    tier: [
      ['Mikrotik-Rate-Limit', '2M/4M'],
      ['Framed-Pool', 'home_pool'],
    ],
    garden: [
      ['Mikrotik-Address-List', 'billing-blocked'],
      ['Mikrotik-Rate-Limit', '256k/256k'],
    ],
  },
  'accel-ppp': {
    plan: [
      ['Framed-Pool', 'home_pool'],
      ['Filter-Id', '20000/10000'],
    ],
    tier: [
      ['Filter-Id', '4000/2000'],
      ['Framed-Pool', 'home_pool'],
    ],
    garden: [
      ['Filter-Id', '256/256'],
      ['Framed-Pool', 'billing-blocked'],
    ],
  },
  cisco: {
    plan: [
      ['Framed-Pool', 'home_pool'],
      ['Cisco-AVPair', 'ip:sub-qos-policy-in=billing-up-10000k'],
      ['Cisco-AVPair', 'ip:sub-qos-policy-out=billing-down-20000k'],
      // The plan's own template for Cisco (vendor_attributes).
      ['Cisco-AVPair', 'ip:dns-servers=10.0.0.53'],
    ],
    tier: [
      ['Cisco-AVPair', 'ip:sub-qos-policy-in=billing-up-2000k'],
      ['Cisco-AVPair', 'ip:sub-qos-policy-out=billing-down-4000k'],
      ['Framed-Pool', 'home_pool'],
      ['Cisco-AVPair', 'ip:dns-servers=10.0.0.53'],
    ],
    garden: [['Cisco-Account-Info', 'Abilling-garden']],
  },
  juniper: {
    plan: [
      ['Framed-Pool', 'home_pool'],
      ['ERX-Service-Activate:1', 'billing-rate(20000000,10000000)'],
    ],
    tier: [
      ['ERX-Service-Activate:1', 'billing-rate(4000000,2000000)'],
      ['Framed-Pool', 'home_pool'],
    ],
    garden: [['ERX-Service-Activate:1', 'billing-garden']],
  },
  huawei: {
    plan: [
      ['Framed-Pool', 'home_pool'],
      ['Huawei-Input-Average-Rate', '10000000'],
      ['Huawei-Input-Peak-Rate', '10000000'],
      ['Huawei-Output-Average-Rate', '20000000'],
      ['Huawei-Output-Peak-Rate', '20000000'],
    ],
    tier: [
      ['Huawei-Input-Average-Rate', '2000000'],
      ['Huawei-Input-Peak-Rate', '2000000'],
      ['Huawei-Output-Average-Rate', '4000000'],
      ['Huawei-Output-Peak-Rate', '4000000'],
      ['Framed-Pool', 'home_pool'],
    ],
    garden: [
      ['Huawei-Input-Average-Rate', '256000'],
      ['Huawei-Input-Peak-Rate', '256000'],
      ['Huawei-Output-Average-Rate', '256000'],
      ['Huawei-Output-Peak-Rate', '256000'],
      // The operator's portal (walled_garden_vendor_attributes.huawei replaces the profile's default).
      ['Huawei-PortalURL', 'http://pay.isp.example/portal'],
    ],
  },
  nokia: {
    plan: [
      ['Framed-Pool', 'home_pool'],
      ['Alc-Subscriber-QoS-Override', 'e:r:rate=20000'],
      ['Alc-Subscriber-QoS-Override', 'i:q:1:pir=10000'],
    ],
    tier: [
      ['Alc-Subscriber-QoS-Override', 'e:r:rate=4000'],
      ['Alc-Subscriber-QoS-Override', 'i:q:1:pir=2000'],
      ['Framed-Pool', 'home_pool'],
    ],
    garden: [['Alc-SLA-Prof-Str', 'billing-garden']],
  },
  generic: {
    plan: [['Framed-Pool', 'home_pool']],
    tier: [['Framed-Pool', 'home_pool']],
    garden: [['Framed-Pool', 'billing-blocked']],
  },
};

beforeAll(async () => {
  process.env.USAGE_INTERVAL_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (
    await api.post('/api/resellers', { name: 'vendor shop', balance: 1000, currency: 'USD' }, { token: admin })
  ).body.data.id;
  const res = await api.post(
    '/api/services',
    {
      name: 'home',
      price: 10,
      duration_days: 30,
      currency: 'USD',
      rate_limit: '10M/20M',
      pool_name: 'home_pool',
      fup_tiers: [{ level: 1, threshold_gb: 2, rate_limit: '2M/4M' }],
      vendor_attributes: { cisco: 'Cisco-AVPair += "ip:dns-servers=10.0.0.53"' },
    },
    { token: admin },
  );
  expect(res.status).toBe(201);
  plan = res.body.data.id;
  expect(
    (await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: plan }, { token: admin })).status,
  ).toBe(200);
  const nas = await api.post('/api/nas', { name: 'lab', ip_address: '127.0.0.1', secret: SECRET }, { token: admin });
  expect(nas.status).toBe(201);
  expect(nas.body.data).toMatchObject({ vendor: 'mikrotik', coa_port: 3799 });
  nasId = nas.body.data.id;
  expect(
    (
      await api.put(
        '/api/settings',
        {
          blocked_access: 'walled_garden',
          walled_garden_vendor_attributes: {
            huawei:
              'Huawei-Input-Average-Rate := 256000\nHuawei-Input-Peak-Rate := 256000\nHuawei-Output-Average-Rate := 256000\nHuawei-Output-Peak-Rate := 256000\nHuawei-PortalURL := "http://pay.isp.example/portal"',
          },
        },
        { token: admin },
      )
    ).status,
  ).toBe(200);

  onPlan = await mkSub();
  // A plan with the NAS's IPv6 pools only (no rate, no IPv4 pool): its reply is the pool names alone.
  const v6 = await api.post(
    '/api/services',
    { name: 'v6', price: 10, duration_days: 30, currency: 'USD', framed_ipv6_pool: 'wan6', delegated_ipv6_pool: 'pd6' },
    { token: admin },
  );
  expect(v6.status).toBe(201);
  expect(
    (await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: v6.body.data.id }, { token: admin }))
      .status,
  ).toBe(200);
  pooled6 = await mkSub({}, v6.body.data.id);
  dualStack = await mkSub(
    { static_ip: DUAL.ipv4, ipv6_prefix: DUAL.wan, delegated_ipv6_prefix: DUAL.delegated },
    v6.body.data.id,
  );
  v6Only = await mkSub({ delegated_ipv6_prefix: V6_ONLY_DELEGATED }, v6.body.data.id);
  blocked = await mkSub({ expiry_date: new Date(Date.now() - DAY_MS).toISOString().slice(0, 10) });
  throttled = await mkSub();
  // A subscriber's own rate (a permanent bandwidth rule: radreply Mikrotik-Rate-Limit :=).
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
  // 3 GiB of accounting from the NAS: past tier 1 (2 GB) at the usage run.
  const radius = await startFreeradius(t, SECRET);
  try {
    await radius.acct(throttled.username, 'tier-1', 'Start', { 'Framed-IP-Address': '100.64.9.1' });
    await radius.acct(throttled.username, 'tier-1', 'Interim-Update', {
      'Acct-Output-Octets': 2 ** 31 + GIB,
      'Acct-Output-Gigawords': 0,
    });
    await radius.acct(throttled.username, 'tier-1', 'Stop', {
      'Acct-Output-Octets': 2 ** 31 + GIB,
      'Acct-Output-Gigawords': 0,
    });
  } finally {
    await radius.stop();
  }
  await rollupUsage(t.db);
  await t.app.broker.call('usage.run', {});
  expect((await api.get(`/api/subscribers/${throttled.id}`, { token: admin })).body.data.fup_level).toBe(1);
}, 90_000);

afterAll(async () => {
  if (t) await t.close();
  delete process.env.USAGE_INTERVAL_SECONDS;
});

describe.each(Object.keys(EXPECTED))('a NAS of vendor %s', (vendor) => {
  let radius: Radius;
  beforeAll(async () => {
    const res = await api.put(`/api/nas/${nasId}`, { vendor }, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.data.vendor).toBe(vendor);
    radius = await startFreeradius(t, SECRET);
  }, 30_000);
  afterAll(async () => {
    if (radius) await radius.stop();
  });

  it("gives a subscriber its plan's pool and rate in the vendor's attributes", async () => {
    const res = await radius.login(onPlan.username, onPlan.password);
    expect(res.code).toBe('Access-Accept');
    expect(replyPairs(res)).toEqual(EXPECTED[vendor].plan);
    expect(Number(res.attrs['Session-Timeout'])).toBeGreaterThan(0);
  });

  it("gives a throttled subscriber the tier's rate instead of the plan's", async () => {
    const res = await radius.login(throttled.username, throttled.password);
    expect(res.code).toBe('Access-Accept');
    expect(replyPairs(res)).toEqual(EXPECTED[vendor].tier);
  });

  it("puts a blocked subscriber in the vendor's walled garden, with none of the plan's replies", async () => {
    const res = await radius.login(blocked.username, blocked.password);
    expect(res.code).toBe('Access-Accept');
    expect(res.pairs).toEqual(EXPECTED[vendor].garden);
  });

  it("gives a subscriber's own rate (a bandwidth rule) to a MikroTik only; other vendors get the plan's", async () => {
    const res = await radius.login(ruled.username, ruled.password);
    expect(res.code).toBe('Access-Accept');
    expect(replyPairs(res)).toEqual(
      vendor === 'mikrotik'
        ? [
            ['Mikrotik-Rate-Limit', '3000k/3000k'],
            ['Framed-Pool', 'home_pool'],
          ]
        : EXPECTED[vendor].plan,
    );
  });

  it("names the plan's IPv6 pools to a subscriber with no prefix: Framed-IPv6-Pool and the vendor's delegated-pool attribute", async () => {
    const res = await radius.login(pooled6.username, pooled6.password);
    expect(res.code).toBe('Access-Accept');
    const pools: [string, string][] = [
      ['Framed-IPv6-Pool', 'wan6'],
      [DELEGATED_POOL[vendor], 'pd6'],
    ];
    expect(replyPairs(res)).toEqual(pools);
  });

  it('gives a dual-stack subscriber its IPv4 address and both IPv6 prefixes, and no pool name', async () => {
    const res = await radius.login(dualStack.username, dualStack.password);
    expect(res.code).toBe('Access-Accept');
    expect(replyPairs(res)).toEqual([
      ['Framed-IP-Address', DUAL.ipv4],
      ['Framed-IPv6-Prefix', DUAL.wan],
      ['Delegated-IPv6-Prefix', DUAL.delegated],
    ]);
  });

  it('gives an IPv6-only subscriber its own delegated prefix with no delegated pool, and the WAN pool it has no prefix for', async () => {
    const res = await radius.login(v6Only.username, v6Only.password);
    expect(res.code).toBe('Access-Accept');
    // The subscriber's own rows come before its plan group's; the vendor's delegated-pool attribute is gone.
    expect(replyPairs(res)).toEqual([
      ['Delegated-IPv6-Prefix', V6_ONLY_DELEGATED],
      ['Framed-IPv6-Pool', 'wan6'],
    ]);
  });

  it('still refuses a wrong password', async () => {
    expect((await radius.login(onPlan.username, 'not-it')).code).toBe('Access-Reject');
  });
});

describe('the API of vendors', () => {
  it('takes a NAS vendor from the list, 400 otherwise; a Cisco NAS gets its CoA port 1700 unless given one', async () => {
    const bad = await api.post(
      '/api/nas',
      { name: 'odd', ip_address: '10.9.0.1', secret: SECRET, vendor: 'ericsson' },
      { token: admin },
    );
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/vendor/);
    expect((await api.put(`/api/nas/${nasId}`, { vendor: 'zte' }, { token: admin })).status).toBe(400);
    const isg = await api.post(
      '/api/nas',
      { name: 'isg', ip_address: '10.9.0.2', secret: SECRET, vendor: 'cisco' },
      { token: admin },
    );
    expect(isg.status).toBe(201);
    expect(isg.body.data).toMatchObject({ vendor: 'cisco', coa_port: 1700 });
    const mx = await api.post(
      '/api/nas',
      { name: 'mx', ip_address: '10.9.0.3', secret: SECRET, vendor: 'juniper', coa_port: 3799 },
      { token: admin },
    );
    expect(mx.body.data).toMatchObject({ vendor: 'juniper', coa_port: 3799 });
    // FreeRADIUS's client query reads the vendor as the client's nas_type; the nas row's own type is unchanged.
    const rows = await t.pool.query(
      'select c.type as nas_type, n.type from radius_clients c join nas n using (id) where c.nasname = $1',
      ['10.9.0.2'],
    );
    expect(rows.rows).toEqual([{ nas_type: 'cisco', type: 'mikrotik' }]);
  });

  it("checks a plan's vendor_attributes against the dictionary: 400 naming the vendor, line and attribute, nothing saved", async () => {
    const put = (vendor_attributes: Record<string, string>) =>
      api.put(`/api/services/${plan}`, { vendor_attributes }, { token: admin });
    const unknown = await put({ huawei: 'Huawei-Qos-Profile-Name := "gold"\nHuawei-Turbo := 1' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toBe('vendor_attributes: huawei: line 2: unknown attribute Huawei-Turbo');
    const badValue = await put({ huawei: 'Huawei-Input-Average-Rate := fast' });
    expect(badValue.status).toBe(400);
    expect(badValue.body.message).toBe(
      'vendor_attributes: huawei: line 1: Huawei-Input-Average-Rate: "fast" is not an integer 0..4294967295',
    );
    expect((await put({ ericsson: 'Filter-Id = "x"' })).status).toBe(400);
    const kept = await api.get(`/api/services/${plan}`, { token: admin });
    expect(kept.body.data.vendor_attributes).toEqual({ cisco: 'Cisco-AVPair += "ip:dns-servers=10.0.0.53"' });
    const rows = await t.pool.query(`select attribute, op, value from radgroupreply where groupname = $1 order by id`, [
      `plan_${plan}@huawei`,
    ]);
    expect(rows.rows.map((r) => r.attribute)).not.toContain('Huawei-Qos-Profile-Name');
  });

  it('refuses a value FreeRADIUS would expand; one stored before the rule is left out, not a 500 on every write', async () => {
    const put = (body: Record<string, unknown>) => api.put(`/api/services/${plan}`, body, { token: admin });
    const refused = await put({ vendor_attributes: { cisco: 'Cisco-AVPair += "`%{sql:select secret from nas}`"' } });
    expect([refused.status, refused.body.message]).toEqual([
      400,
      'vendor_attributes: cisco: line 1: Cisco-AVPair: "`%{sql:select secret from nas}`" would be expanded by FreeRADIUS (a backtick, %{ or a value wrapped in quotes)',
    ]);
    const kept = (await api.get(`/api/services/${plan}`, { token: admin })).body.data.vendor_attributes;
    await t.pool.query(`update services set vendor_attributes = $2 where id = $1`, [
      plan,
      { cisco: 'Cisco-AVPair += "ip:dns-servers=10.0.0.53"\nCisco-AVPair += "`id`"' },
    ]);
    try {
      const priced = await put({ price: 12 });
      expect(priced.status).toBe(200);
      const rows = await t.pool.query(`select value from radgroupreply where groupname = $1 order by id`, [
        `plan_${plan}@cisco`,
      ]);
      expect(rows.rows.map((r) => r.value)).toContain('ip:dns-servers=10.0.0.53');
      expect(rows.rows.map((r) => r.value)).not.toContain('`id`');
    } finally {
      await t.pool.query(`update services set vendor_attributes = $2 where id = $1`, [plan, kept]);
    }
  });

  it('checks walled_garden_vendor_attributes the same way', async () => {
    const res = await api.put(
      '/api/settings',
      { walled_garden_vendor_attributes: { nokia: 'Alc-SLA-Prof-Str := "garden"\nAlc-Nope := "x"' } },
      { token: admin },
    );
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('walled_garden_vendor_attributes: nokia: line 2: unknown attribute Alc-Nope');
  });
});
