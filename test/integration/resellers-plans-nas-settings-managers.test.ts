import { and, eq, ne, sql } from 'drizzle-orm';
import { PERMISSIONS } from '../../shared/auth/permissions';
import {
  managers,
  nas,
  radgroupreply,
  resellers,
  services,
  settings,
  subscribers,
  transactions,
} from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { creditWallet, lockWalletCurrency } from '../../shared/billing';
import { saveSettings } from '../../shared/settings';
import { behindAWriter, whileHeld } from '../helpers/row-locks';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = () => ({ token: adminToken() });
const asReseller = (id: number, permissions: string[] = []) => ({
  token: token('reseller', { resellerId: id, permissions }),
});

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
});
afterAll(() => t.close());

/** behindAWriter for a reseller's row and a change of its columns. */
const behindAResellerWriter = <R>(
  id: number,
  change: Partial<typeof resellers.$inferInsert>,
  request: () => Promise<R>,
) =>
  behindAWriter(
    t,
    (tx) => tx.select().from(resellers).where(eq(resellers.id, id)).for('update'),
    (tx) => tx.update(resellers).set(change).where(eq(resellers.id, id)),
    request,
  );

describe('reseller tree and scope', () => {
  let root: number, child: number, grandchild: number, sibling: number;

  beforeAll(async () => {
    root = (
      await api.post('/api/resellers', { name: 'Root', currency: 'USD', balance: 100, commission_rate: 10 }, admin())
    ).body.data.id;
    sibling = (await api.post('/api/resellers', { name: 'Sibling', currency: 'USD' }, admin())).body.data.id;
    child = (await api.post('/api/resellers', { name: 'Child' }, asReseller(root))).body.data.id;
    grandchild = (await api.post('/api/resellers', { name: 'Grandchild', parent_id: child }, asReseller(root))).body
      .data.id;
  });

  it('stores the tree as a materialised path, child created under the calling reseller', async () => {
    const rows = await t.db.select().from(resellers).orderBy(resellers.id);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(child)).toMatchObject({ parentId: root, path: `/${root}/${child}/`, currency: 'USD' });
    expect(byId.get(grandchild)!.path).toBe(`/${root}/${child}/${grandchild}/`);
  });

  it('a parent sees its descendants', async () => {
    expect((await api.get(`/api/resellers/${grandchild}`, asReseller(root))).status).toBe(200);
    const list = await api.get('/api/resellers', asReseller(root));
    expect(list.body.data.map((r: { id: number }) => r.id)).toEqual([root, child, grandchild]);
    expect(list.body.pagination.total).toBe(3);
  });

  it('a child does not see its parent, and sibling trees are isolated', async () => {
    const up = await api.get(`/api/resellers/${root}`, asReseller(child));
    expect(up.status).toBe(403);
    expect(up.body.success).toBe(false);
    expect((await api.get(`/api/resellers/${sibling}`, asReseller(root))).status).toBe(403);
    expect((await api.get(`/api/resellers/${root}`, asReseller(sibling))).status).toBe(403);
    const list = await api.get('/api/resellers', asReseller(child));
    expect(list.body.data.map((r: { id: number }) => r.id)).toEqual([child, grandchild]);
  });

  it('a missing reseller is 404, out of scope is 403', async () => {
    expect((await api.get('/api/resellers/999999', admin())).status).toBe(404);
    expect((await api.post('/api/resellers', { name: 'x', parent_id: sibling }, asReseller(root))).status).toBe(403);
    expect((await api.post('/api/resellers', { name: 'x', parent_id: 999999 }, admin())).body).toEqual({
      success: false,
      message: 'parent_id not found',
    });
  });

  it('subscribers.view_all widens reads but not writes', async () => {
    const viewer = asReseller(child, ['subscribers.view_all']);
    expect((await api.get(`/api/resellers/${sibling}`, viewer)).status).toBe(200);
    expect((await api.put(`/api/resellers/${sibling}`, { name: 'hijack' }, viewer)).status).toBe(403);
  });

  it('a reseller cannot edit itself or hand out an opening balance; a user role cannot write', async () => {
    expect((await api.put(`/api/resellers/${root}`, { commission_rate: 90 }, asReseller(root))).status).toBe(403);
    expect((await api.put(`/api/resellers/${child}`, { commission_rate: 5 }, asReseller(root))).status).toBe(200);
    expect((await api.post('/api/resellers', { name: 'rich', balance: 5 }, asReseller(root))).status).toBe(403);
    const user = { token: token('user', { resellerId: root, permissions: ['subscribers.view'] }) };
    expect((await api.post('/api/resellers', { name: 'u' }, user)).status).toBe(403);
  });

  it('balance moves through the ledger: admin credit, ancestor transfer, no overdraft', async () => {
    const opening = await t.db.select().from(transactions).where(eq(transactions.resellerId, root));
    expect(opening.map((r) => [r.type, r.amount])).toEqual([['reseller_credit', 10000]]);

    const credit = await api.post(`/api/resellers/${child}/balance`, { amount: 25.5, notes: 'top-up' }, admin());
    expect(credit.status).toBe(200);
    expect(credit.body.data.balance).toBe(25.5);
    expect(typeof credit.body.data.transaction_id).toBe('number');

    const transfer = await api.post(`/api/resellers/${child}/balance`, { amount: 40 }, asReseller(root));
    expect(transfer.status).toBe(200);
    expect(transfer.body.data.balance).toBe(65.5);
    const [r] = await t.db.select().from(resellers).where(eq(resellers.id, root));
    expect(r.balance).toBe(6000);

    const overdraft = await api.post(`/api/resellers/${child}/balance`, { amount: 61 }, asReseller(root));
    expect(overdraft.status).toBe(402);
    const debitTooMuch = await api.post(`/api/resellers/${child}/balance`, { amount: -1000 }, admin());
    expect(debitTooMuch.status).toBe(402);

    // The ledger explains every balance: sum of entries = balance, for each reseller.
    for (const id of [root, child]) {
      const rows = await t.db.select().from(transactions).where(eq(transactions.resellerId, id));
      const [row] = await t.db.select().from(resellers).where(eq(resellers.id, id));
      expect(rows.reduce((s, x) => s + x.amount, 0)).toBe(row.balance);
    }
  });

  it('refuses amounts with more decimals than the currency and a zero amount', async () => {
    const res = await api.post(`/api/resellers/${child}/balance`, { amount: 1.005 }, admin());
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/^amount /);
    expect((await api.post(`/api/resellers/${child}/balance`, { amount: 0 }, admin())).status).toBe(400);
  });

  it('service limits: admin grants, an ancestor passes on only plans it holds', async () => {
    const plan = (await api.post('/api/services', { name: 'Home 20', price: 20, duration_days: 30 }, admin())).body.data
      .id;
    const other = (await api.post('/api/services', { name: 'Biz 100', price: 100, duration_days: 30 }, admin())).body
      .data.id;
    expect(
      (await api.post(`/api/resellers/${root}/service-limits`, { service_id: plan, max_subscribers: 100 }, admin()))
        .status,
    ).toBe(200);
    expect(
      (await api.post(`/api/resellers/${child}/service-limits`, { service_id: plan }, asReseller(root))).status,
    ).toBe(200);
    expect(
      (await api.post(`/api/resellers/${child}/service-limits`, { service_id: other }, asReseller(root))).status,
    ).toBe(403);
    expect(
      (await api.post(`/api/resellers/${child}/service-limits`, { service_id: 999999 }, admin())).body.message,
    ).toBe('service_id not found');
    const list = await api.get(`/api/resellers/${child}/service-limits`, asReseller(child));
    expect(list.body.data).toEqual([
      { reseller_id: child, service_id: plan, service_name: 'Home 20', max_subscribers: null },
    ]);
  });
});

describe('plans', () => {
  it('creates a plan with money in minor units and its RADIUS group reply rows', async () => {
    const res = await api.post(
      '/api/services',
      {
        name: 'Fiber 50',
        price: 29.99,
        duration_days: 30,
        currency: 'EUR',
        monthly_quota_gb: 500,
        rate_limit: '50M/50M',
        pool_name: 'pool-fiber',
        mac_binding: true,
        fup_tiers: [{ level: 1, threshold_gb: 400, rate_limit: '10M/10M' }],
      },
      admin(),
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: 'Fiber 50',
      price: 29.99,
      currency: 'EUR',
      monthly_quota_gb: 500,
      daily_quota_gb: null,
      mac_binding: true,
    });
    const id = res.body.data.id;
    const reply = await t.db
      .select()
      .from(radgroupreply)
      .where(eq(radgroupreply.groupname, `plan_${id}`))
      .orderBy(radgroupreply.attribute);
    expect(reply.map((r) => [r.attribute, r.op, r.value])).toEqual([
      ['Framed-Pool', '=', 'pool-fiber'],
      ['Mikrotik-Rate-Limit', '=', '50M/50M'],
    ]);
    const upd = await api.put(`/api/services/${id}`, { rate_limit: '100M/100M', pool_name: null }, admin());
    expect(upd.status).toBe(200);
    const after = await t.db
      .select()
      .from(radgroupreply)
      .where(eq(radgroupreply.groupname, `plan_${id}`));
    expect(after.map((r) => [r.attribute, r.value])).toEqual([['Mikrotik-Rate-Limit', '100M/100M']]);
  });

  it('reads are open to any authenticated manager, writes are admin only', async () => {
    const user = { token: token('user', { permissions: [] }) };
    expect((await api.get('/api/services', user)).status).toBe(200);
    expect((await api.post('/api/services', { name: 'x', price: 1, duration_days: 1 }, user)).status).toBe(403);
    expect((await api.post('/api/services', { name: 'x', price: 1, duration_days: 1 }, asReseller(1))).status).toBe(
      403,
    );
  });

  it('409 on a duplicate name, 404 on a missing plan, decimals checked against the currency', async () => {
    await api.post('/api/services', { name: 'Dup', price: 1, duration_days: 1 }, admin());
    expect((await api.post('/api/services', { name: 'Dup', price: 1, duration_days: 1 }, admin())).status).toBe(409);
    expect((await api.get('/api/services/999999', admin())).body).toEqual({
      success: false,
      message: 'service not found',
    });
    const yen = await api.post(
      '/api/services',
      { name: 'Yen', price: 10.5, duration_days: 1, currency: 'JPY' },
      admin(),
    );
    expect(yen.status).toBe(400);
    expect(yen.body.message).toMatch(/^price /);
  });

  it('a rate FreeRADIUS would expand is 400, for the plan and for a tier, and writes no plan', async () => {
    const message =
      "must be a rate such as 10M/20M (rx/tx, k, M or G, then MikroTik's burst fields), with no backtick or %{";
    const body = { name: 'Expanding', price: 1, duration_days: 30 };
    const plain = await api.post('/api/services', { ...body, rate_limit: '10M/10M %{exec:/bin/id}' }, admin());
    expect([plain.status, plain.body.message]).toEqual([400, `rate_limit ${message}`]);
    const tier = await api.post(
      '/api/services',
      { ...body, fup_tiers: [{ level: 1, threshold_gb: 1, rate_limit: '1M/1M `id`' }] },
      admin(),
    );
    expect([tier.status, tier.body.message]).toEqual([400, `fup_tiers[0].rate_limit ${message}`]);
    const burst = await api.post('/api/services', { ...body, rate_limit: '512k/1M 0/0 0/0 0/0 8' }, admin());
    expect(burst.status).toBe(201);
    expect((await t.pool.query(`select count(*)::int as n from services where name = 'Expanding'`)).rows[0].n).toBe(1);
    // One stored before the rule (an import took any text): its rows leave the rate out, the rest written.
    const id = burst.body.data.id;
    await t.pool.query(`update services set rate_limit = '\`/bin/id\`', fup_tiers = $2 where id = $1`, [
      id,
      JSON.stringify([
        { level: 1, threshold_gb: 1, rate_limit: '1M/1M %{exec:/bin/id}' },
        { level: 2, threshold_gb: 2, rate_limit: '512k/512k' },
      ]),
    ]);
    expect((await api.put(`/api/services/${id}`, { pool_name: 'exp-pool' }, admin())).status).toBe(200);
    const rows = await t.pool.query(
      `select groupname, attribute, value from radgroupreply
        where groupname like $1 and groupname not like '%@%' order by groupname, attribute`,
      [`plan\\_${id}%`],
    );
    expect(rows.rows).toEqual([
      { groupname: `plan_${id}`, attribute: 'Framed-Pool', value: 'exp-pool' },
      { groupname: `plan_${id}_fup2`, attribute: 'Fall-Through', value: 'Yes' },
      { groupname: `plan_${id}_fup2`, attribute: 'Mikrotik-Rate-Limit', value: '512k/512k' },
    ]);
    const expanding = await t.pool.query(
      `select value from radgroupreply where groupname like $1 and (value like '%\`%' or value like '%\\%{%')`,
      [`plan\\_${id}%`],
    );
    expect(expanding.rows).toEqual([]);
  });
});

/** A subscriber written straight to the database, under a reseller of its own (USD). */
async function seededSubscriber(name: string, serviceId: number, extra: Partial<typeof subscribers.$inferInsert> = {}) {
  const [owner] = await t.db
    .insert(resellers)
    .values({ name: `${name} owner`, path: '/', currency: 'USD' })
    .returning();
  const [sub] = await t.db
    .insert(subscribers)
    .values({
      username: `${name}@isp`,
      passwordEnc: 'x',
      serviceId,
      resellerId: owner.id,
      expiryDate: '2099-01-01',
      ...extra,
    })
    .returning();
  return sub;
}

describe('a plan under concurrent and currency changes', () => {
  const plan = async (id: number) => (await t.db.select().from(services).where(eq(services.id, id)))[0];
  const mkPlan = async (name: string) => {
    const res = await api.post('/api/services', { name, price: 10, duration_days: 30, currency: 'USD' }, admin());
    expect(res.status).toBe(201);
    return res.body.data.id as number;
  };

  it('a change of currency needs the price in the new one', async () => {
    const id = await mkPlan('Currency plan');
    const bare = await api.put(`/api/services/${id}`, { currency: 'JPY' }, admin());
    expect([bare.status, bare.body.message]).toEqual([400, 'price is required when currency changes']);
    expect(await plan(id)).toMatchObject({ currency: 'USD', price: 1000 });
    const priced = await api.put(`/api/services/${id}`, { currency: 'JPY', price: 1500 }, admin());
    expect(priced.status).toBe(200);
    expect(await plan(id)).toMatchObject({ currency: 'JPY', price: 1500 });
    // The same currency again needs nothing more.
    expect((await api.put(`/api/services/${id}`, { currency: 'JPY', name: 'Yen plan' }, admin())).status).toBe(200);
  });

  it('a change of currency is 409 while a subscriber on the plan has its own price (kept in the old one)', async () => {
    const id = await mkPlan('Own price plan');
    const sub = await seededSubscriber('own-price', id, { overridePrice: true, price: 1500 });
    const res = await api.put(`/api/services/${id}`, { currency: 'JPY', price: 1500 }, admin());
    expect([res.status, res.body.message]).toEqual([
      409,
      'subscribers on this plan have their own price in USD: change or clear those prices first',
    ]);
    expect(await plan(id)).toMatchObject({ currency: 'USD', price: 1000 });
    await t.db.update(subscribers).set({ overridePrice: false, price: null }).where(eq(subscribers.id, sub.id));
    expect((await api.put(`/api/services/${id}`, { currency: 'JPY', price: 1500 }, admin())).status).toBe(200);
  });

  it("a subscriber's price sent while its plan changes currency is read in the currency the plan ends with", async () => {
    const id = await mkPlan('Repriced under a PUT');
    const sub = await seededSubscriber('repriced', id);
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(services).where(eq(services.id, id)).for('update'),
      (tx) => tx.update(services).set({ currency: 'JPY', price: 1500 }).where(eq(services.id, id)),
      () => api.put(`/api/subscribers/${sub.id}`, { price: 20, override_price: true }, admin()),
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ price: 20, currency: 'JPY' });
    const [after] = await t.db.select().from(subscribers).where(eq(subscribers.id, sub.id));
    expect(after.price).toBe(20);
  });

  it('a retirement counts the subscribers of a create in flight, and refuses', async () => {
    const id = await mkPlan('Retire race plan');
    const [owner] = await t.db
      .insert(resellers)
      .values({ name: 'Retire race', path: '/', currency: 'USD' })
      .returning();
    // The create holds the plan shared (as checkPlacements does) and commits its subscriber first.
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(services).where(eq(services.id, id)).for('share'),
      (tx) =>
        tx.insert(subscribers).values({
          username: 'retire-race@isp',
          passwordEnc: 'x',
          serviceId: id,
          resellerId: owner.id,
          expiryDate: '2099-01-01',
        }),
      () => api.del(`/api/services/${id}`, admin()),
    );
    expect([res.status, res.body.message]).toEqual([409, 'service is in use by subscribers']);
    expect((await plan(id)).deletedAt).toBeNull();
  });

  it('a create waits for a retirement in flight, then finds the plan gone', async () => {
    const id = await mkPlan('Retired under a create');
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(services).where(eq(services.id, id)).for('update'),
      (tx) =>
        tx
          .update(services)
          .set({ deletedAt: sql`now()` })
          .where(eq(services.id, id)),
      () => api.post('/api/subscribers', { username: 'too-late@isp', password: 'secret1', service_id: id }, admin()),
    );
    expect([res.status, res.body.message]).toEqual([400, 'service_id not found']);
    expect(await t.db.select().from(subscribers).where(eq(subscribers.username, 'too-late@isp'))).toEqual([]);
  });

  it('a PUT keeps the fields it leaves out as they are under the lock', async () => {
    const id = await mkPlan('Edit race plan');
    const res = await behindAWriter(
      t,
      (tx) => tx.select().from(services).where(eq(services.id, id)).for('update'),
      (tx) => tx.update(services).set({ durationDays: 45 }).where(eq(services.id, id)),
      () => api.put(`/api/services/${id}`, { name: 'Edit race plan, renamed' }, admin()),
    );
    expect(res.status).toBe(200);
    expect(await plan(id)).toMatchObject({ name: 'Edit race plan, renamed', durationDays: 45 });
  });
});

describe('access servers (FreeRADIUS nas table)', () => {
  it('writes the nas row FreeRADIUS reads and never returns secrets', async () => {
    const res = await api.post(
      '/api/nas',
      { name: 'core-1', ip_address: '10.0.0.1', secret: 's3cret!', api_username: 'api', api_password: 'routerpw' },
      admin(),
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: 'core-1',
      ip_address: '10.0.0.1',
      coa_port: 3799,
      type: 'mikrotik',
      has_api_password: true,
    });
    expect(JSON.stringify(res.body)).not.toMatch(/s3cret|routerpw/);
    const [row] = await t.db.select().from(nas).where(eq(nas.id, res.body.data.id));
    expect(row).toMatchObject({ nasname: '10.0.0.1', shortname: 'core-1', secret: 's3cret!' });
    expect(row.apiPasswordEnc).not.toContain('routerpw');
    const list = await api.get('/api/nas', admin());
    expect(JSON.stringify(list.body)).not.toMatch(/s3cret|routerpw/);
    expect(
      (await api.post('/api/nas', { name: 'dup', ip_address: '10.0.0.1', secret: 'another' }, admin())).status,
    ).toBe(409);
    expect(
      (await api.post('/api/nas', { name: 'bad', ip_address: '10.0.0.300', secret: 'another' }, admin())).body.message,
    ).toBe('ip_address must be an IPv4 address');
    expect((await api.put(`/api/nas/${res.body.data.id}`, { coa_port: 1700 }, admin())).body.data.coa_port).toBe(1700);
    expect((await api.del(`/api/nas/${res.body.data.id}`, admin())).status).toBe(200);
    expect((await api.del(`/api/nas/${res.body.data.id}`, admin())).status).toBe(404);
    expect((await api.get('/api/nas', asReseller(1))).status).toBe(403);
  });
});

describe("a reseller's balance and currency under concurrent writers", () => {
  const reseller = async (id: number) => (await t.db.select().from(resellers).where(eq(resellers.id, id)))[0];

  it('a change of currency read a zero balance before a credit committed: refused under the lock', async () => {
    const id = (await api.post('/api/resellers', { name: 'Currency race', currency: 'USD' }, admin())).body.data.id;
    const res = await behindAResellerWriter(id, { balance: 10000 }, () =>
      api.put(`/api/resellers/${id}`, { currency: 'EUR' }, admin()),
    );
    expect([res.status, res.body.message]).toEqual([400, 'currency can change only while the balance is 0']);
    expect(await reseller(id)).toMatchObject({ currency: 'USD', balance: 10000 });
  });

  it('a credit is counted in the currency the reseller has under the lock, as its ledger row records', async () => {
    const id = (await api.post('/api/resellers', { name: 'Amount race', currency: 'USD' }, admin())).body.data.id;
    const res = await behindAResellerWriter(id, { currency: 'JPY' }, () =>
      api.post(`/api/resellers/${id}/balance`, { amount: 10 }, admin()),
    );
    expect(res.status).toBe(200);
    expect(await reseller(id)).toMatchObject({ currency: 'JPY', balance: 10 });
    const [entry] = await t.db.select().from(transactions).where(eq(transactions.id, res.body.data.transaction_id));
    expect(entry).toMatchObject({ amount: 10, currency: 'JPY' });
  });

  it('a rename keeps a commission rate changed while it waited', async () => {
    const id = (await api.post('/api/resellers', { name: 'Edit race', currency: 'USD' }, admin())).body.data.id;
    const res = await behindAResellerWriter(id, { commissionRate: '12.5' }, () =>
      api.put(`/api/resellers/${id}`, { name: 'Edit race, renamed' }, admin()),
    );
    expect(res.status).toBe(200);
    expect(await reseller(id)).toMatchObject({ name: 'Edit race, renamed', commissionRate: '12.50' });
  });
});

describe('settings', () => {
  it('returns defaults, accepts typed changes and masks secrets', async () => {
    const before = await api.get('/api/settings', admin());
    expect(before.body.data).toMatchObject({
      default_tax_rate: 0,
      default_due_days: 7,
      currency: 'USD',
      default_paper_size: 'A4',
      commission_basis: 'paid',
      invoice_prefix: 'INV',
    });
    const res = await api.put(
      '/api/settings',
      { default_tax_rate: 7.5, invoice_prefix: 'ISP', telegram_bot_token: '123:abc', operator_name: 'NetCo' },
      admin(),
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      default_tax_rate: 7.5,
      invoice_prefix: 'ISP',
      telegram_bot_token: '********',
      operator_name: 'NetCo',
    });
    const [stored] = await t.db.select().from(settings).where(eq(settings.key, 'telegram_bot_token'));
    expect(JSON.stringify(stored.value)).not.toContain('123:abc');
  });

  it('unknown keys and wrongly typed values are 400 and change nothing', async () => {
    const cases: [unknown, string][] = [
      [{ no_such_key: 1 }, 'no_such_key is not allowed'],
      [{ default_tax_rate: 'ten' }, 'default_tax_rate must be number'],
      [{ default_tax_rate: 101 }, 'default_tax_rate must be <= 100'],
      [{ default_due_days: 1.5 }, 'default_due_days must be integer'],
      [
        { default_paper_size: 'A9' },
        expect.stringMatching(/^default_paper_size must be one of A3, A4/) as unknown as string,
      ],
      [{ commission_basis: 'never' }, 'commission_basis must be one of paid, invoiced'],
      [{ currency: 'XYZ' }, 'currency must be an ISO 4217 code'],
      [{}, 'body has nothing to change'],
    ];
    const before = await t.db.select().from(settings);
    for (const [body, message] of cases) {
      const res = await api.put('/api/settings', body, admin());
      expect({ status: res.status, message: res.body.message }).toEqual({ status: 400, message });
    }
    expect(await t.db.select().from(settings)).toEqual(before);
  });

  it('the system currency changes only while every wallet is 0 (409 otherwise, nothing changed)', async () => {
    const [plan] = await t.db.select().from(services).limit(1);
    const sub = await seededSubscriber('wallet-holder', plan.id, { walletBalance: 1000 });
    const res = await api.put('/api/settings', { currency: 'JPY' }, admin());
    expect([res.status, res.body.message]).toEqual([
      409,
      'wallets hold money in USD: the currency can change only while every wallet is 0',
    ]);
    expect((await api.get('/api/settings', admin())).body.data.currency).toBe('USD');
    await t.db.update(subscribers).set({ walletBalance: 0 }).where(eq(subscribers.id, sub.id));
    const emptied = await t.db.select().from(subscribers).where(ne(subscribers.walletBalance, 0));
    expect(emptied).toEqual([]);
    expect((await api.put('/api/settings', { currency: 'JPY' }, admin())).status).toBe(200);
    expect((await api.put('/api/settings', { currency: 'USD' }, admin())).status).toBe(200);
  });

  it('a currency change waits for a wallet credit under way and counts it (409); a credit behind a change is refused', async () => {
    const [plan] = await t.db.select().from(services).limit(1);
    const sub = await seededSubscriber('credit-race', plan.id);
    const walletOf = async () => (await t.db.select().from(subscribers).where(eq(subscribers.id, sub.id)))[0];
    try {
      // 10.00 USD credited and not yet committed: the change used to see every wallet at 0 and
      // commit JPY, leaving 1,000 minor units read as 1,000 yen.
      const change = await whileHeld(
        t,
        (tx) => creditWallet(tx, { subscriberId: sub.id, amount: 1000, currency: 'USD', reason: 'add-balance' }),
        () => api.put('/api/settings', { currency: 'JPY' }, admin()),
      );
      expect(change.outcome).toBe('waited');
      expect([change.result.status, change.result.body.message]).toEqual([
        409,
        'wallets hold money in USD: the currency can change only while every wallet is 0',
      ]);
      expect((await walletOf()).walletBalance).toBe(1000);
      await t.db.update(subscribers).set({ walletBalance: 0 }).where(eq(subscribers.id, sub.id));

      // The other way: a credit priced in USD waits for a change to JPY and is refused, not credited.
      const credit = await behindAWriter(
        t,
        (tx) => lockWalletCurrency(tx, 'change'),
        (tx) => saveSettings(tx, { currency: 'JPY' }),
        () => api.post(`/api/subscribers/${sub.id}/add-balance`, { amount: 10 }, admin()),
      );
      expect([credit.status, credit.body.message]).toEqual([
        409,
        'the system currency changed to JPY meanwhile; this credit was in USD',
      ]);
      expect((await walletOf()).walletBalance).toBe(0);
    } finally {
      await t.db.update(subscribers).set({ walletBalance: 0 }).where(eq(subscribers.id, sub.id));
      expect((await api.put('/api/settings', { currency: 'USD' }, admin())).status).toBe(200);
    }
  });

  it('is admin only', async () => {
    expect((await api.get('/api/settings', asReseller(1))).status).toBe(403);
    expect(
      (
        await api.put(
          '/api/settings',
          { default_due_days: 3 },
          { token: token('user', { permissions: ['subscribers.edit'] }) },
        )
      ).status,
    ).toBe(403);
  });
});

describe('managers', () => {
  it('creates managers of each role, validates role/reseller pairs, never returns hashes', async () => {
    const [r] = await t.db.insert(resellers).values({ name: 'M', path: '/', currency: 'USD' }).returning();
    const res = await api.post(
      '/api/managers',
      {
        username: 'shop1',
        password: 'longenough',
        role: 'reseller',
        reseller_id: r.id,
        permissions: ['subscribers.renew'],
      },
      admin(),
    );
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      username: 'shop1',
      role: 'reseller',
      reseller_id: r.id,
      permissions: ['subscribers.renew'],
    });
    expect(JSON.stringify(res.body)).not.toMatch(/password/);
    expect(
      (await api.post('/api/managers', { username: 'shop1', password: 'longenough', role: 'user' }, admin())).status,
    ).toBe(409);
    expect(
      (await api.post('/api/managers', { username: 'reseller2', password: 'longenough', role: 'reseller' }, admin()))
        .body.message,
    ).toBe('reseller_id is required for role reseller');
    expect(
      (await api.post('/api/managers', { username: 'user3', password: 'short', role: 'user' }, admin())).body.message,
    ).toBe('password must NOT have fewer than 8 characters');
    // The new manager can log in and gets its claims.
    const login = await api.post('/api/auth/login', { username: 'shop1', password: 'longenough' });
    expect(login.status).toBe(200);
    const upd = await api.put(`/api/managers/${res.body.data.id}`, { permissions: [] }, admin());
    expect(upd.body.data.permissions).toEqual([]);
    expect((await api.get('/api/managers', asReseller(r.id))).status).toBe(403);
  });

  it('takes only the permissions of shared/auth/permissions, and serves that list to admins', async () => {
    const list = await api.get('/api/permissions', admin());
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([...PERMISSIONS]);
    expect((await api.get('/api/permissions', asReseller(1))).status).toBe(403);
    const typo = await api.post(
      '/api/managers',
      {
        username: 'typo',
        password: 'longenough',
        role: 'user',
        permissions: ['subscribers.view', 'subscribers.reneww'],
      },
      admin(),
    );
    expect(typo.status).toBe(400);
    expect(typo.body.message).toBe('unknown permission subscribers.reneww');
    const [{ id }] = await t.db.select({ id: managers.id }).from(managers).where(eq(managers.role, 'admin')).limit(1);
    const upd = await api.put(`/api/managers/${id}`, { permissions: ['billing.view'] }, admin());
    expect(upd.body).toEqual({ success: false, message: 'unknown permission billing.view' });
    expect(await t.db.select().from(managers).where(eq(managers.username, 'typo'))).toEqual([]);
  });

  it('refuses to remove, demote or disable the last admin', async () => {
    // Every admin token stands for a real admin row now, so the last admin is the caller itself.
    const caller = admin();
    await api.get('/api/managers', caller);
    await t.db
      .update(managers)
      .set({ role: 'user' })
      .where(and(eq(managers.role, 'admin'), ne(managers.id, 1)));
    expect((await api.del('/api/managers/1', caller)).status).toBe(409);
    expect((await api.put('/api/managers/1', { role: 'user' }, caller)).body).toEqual({
      success: false,
      message: 'cannot demote the last admin',
    });
    expect((await api.put('/api/managers/1', { active: false }, caller)).body).toEqual({
      success: false,
      message: 'cannot disable the last admin',
    });
  });
});
