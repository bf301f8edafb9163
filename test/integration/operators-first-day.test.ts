/**
 * The decisions of docs/operators-first-day.md through the gateway: the default reseller of direct
 * subscribers, the named invoice permissions, who pays for a reseller top-up, and phones stored in
 * E.164 and found by any common spelling.
 */
import { eq, sql } from 'drizzle-orm';
import { INVOICE_PERMISSIONS } from '../../shared/auth/permissions';
import { coaOutcomes, nas, resellers, settings, subscribers, transactions } from '../../shared/db/schema';
import { normaliseStoredPhones } from '../../services/subscribers/phone-backfill';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = { token: adminToken() };
const asReseller = (id: number, permissions: string[] = []) => ({
  token: token('reseller', { resellerId: id, permissions }),
});

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
});
afterAll(() => t.close());

const line = { description: 'Install', qty: 1, unit_price: 10 };

describe('default reseller of direct subscribers', () => {
  it('an admin naming no reseller creates under "Direct subscribers", made once and renameable', async () => {
    const plan = (await api.post('/api/services', { name: 'Direct 10', price: 10, duration_days: 30 }, admin)).body.data
      .id;
    const first = await api.post('/api/subscribers', { username: 'direct1', password: 'pw1', service_id: plan }, admin);
    expect(first.status).toBe(201);
    const [setting] = await t.db.select().from(settings).where(eq(settings.key, 'default_reseller_id'));
    const defaultId = setting.value as number;
    expect(first.body.data.reseller_id).toBe(defaultId);
    const [row] = await t.db.select().from(resellers).where(eq(resellers.id, defaultId));
    expect(row).toMatchObject({ name: 'Direct subscribers', parentId: null, path: `/${defaultId}/`, currency: 'USD' });

    const second = await api.post(
      '/api/subscribers',
      { username: 'direct2', password: 'pw2', service_id: plan },
      admin,
    );
    expect(second.body.data.reseller_id).toBe(defaultId);
    const [{ n }] = (await t.db.execute<{ n: number }>(sql`select count(*)::int as n from resellers`)).rows;
    expect(n).toBe(1);

    expect((await api.put(`/api/resellers/${defaultId}`, { name: 'Our own' }, admin)).status).toBe(200);
    const third = await api.post('/api/subscribers', { username: 'direct3', password: 'pw3', service_id: plan }, admin);
    expect(third.body.data.reseller_id).toBe(defaultId);
  });

  it('an admin may name another default; an unknown one is refused; a reseller keeps its own', async () => {
    const other = await seedReseller(t.db, { name: 'Main' });
    const plan = await seedPlan(t.db, { price: 500 });
    expect((await api.put('/api/settings', { default_reseller_id: 999999 }, admin)).body).toEqual({
      success: false,
      message: 'default_reseller_id not found',
    });
    expect((await api.put('/api/settings', { default_reseller_id: 1e308 }, admin)).status).toBe(400);
    expect((await api.put('/api/settings', { default_reseller_id: other.id }, admin)).status).toBe(200);
    const direct = await api.post(
      '/api/subscribers',
      { username: 'main1', password: 'pw', service_id: plan.id },
      admin,
    );
    expect(direct.body.data.reseller_id).toBe(other.id);

    // A reseller's own subscribers stay its own, and it still needs a service limit for the plan.
    const shop = await seedReseller(t.db, { name: 'Shop' });
    const shopToken = asReseller(shop.id, ['subscribers.create']);
    const refused = await api.post(
      '/api/subscribers',
      { username: 'shop1', password: 'pw', service_id: plan.id },
      shopToken,
    );
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('reseller has no service limit for this plan');
    await api.post(`/api/resellers/${shop.id}/service-limits`, { service_id: plan.id }, admin);
    const own = await api.post(
      '/api/subscribers',
      { username: 'shop1', password: 'pw', service_id: plan.id },
      shopToken,
    );
    expect(own.status).toBe(201);
    expect(own.body.data.reseller_id).toBe(shop.id);
  });
});

describe('named invoice permissions', () => {
  let R: number;
  let planId: number;
  let n = 0;
  const subscriberOf = async () =>
    (await seedSubscriber(t.db, { resellerId: R, serviceId: planId, username: `inv${++n}@isp` })).id;
  const invoiceOf = async (subscriberId: number) =>
    (await api.post('/api/invoices', { subscriber_id: subscriberId, items: [line] }, admin)).body.data.id as number;

  beforeAll(async () => {
    R = (await seedReseller(t.db, { name: 'Desk' })).id;
    planId = (await seedPlan(t.db, { price: 1000 })).id;
  });

  /** Each invoice write by the route that needs it: the status it answered. */
  const writes: Record<(typeof INVOICE_PERMISSIONS)[number], (tok: { token: string }) => Promise<number>> = {
    'invoices.create': async (tok) =>
      (await api.post('/api/invoices', { subscriber_id: await subscriberOf(), items: [line] }, tok)).status,
    'invoices.edit': async (tok) =>
      (await api.put(`/api/invoices/${await invoiceOf(await subscriberOf())}`, { notes: 'edited' }, tok)).status,
    'invoices.pay': async (tok) =>
      (await api.post(`/api/invoices/${await invoiceOf(await subscriberOf())}/payment`, { amount: 1 }, tok)).status,
    'invoices.consolidate': async (tok) => {
      const s = await subscriberOf();
      await invoiceOf(s);
      await invoiceOf(s);
      return (await api.post(`/api/invoices/consolidate/${s}`, {}, tok)).status;
    },
    'invoices.send': async (tok) =>
      (await api.post(`/api/invoices/${await invoiceOf(await subscriberOf())}/public-token`, {}, tok)).status,
    'invoices.void': async (tok) =>
      (await api.post(`/api/invoices/${await invoiceOf(await subscriberOf())}/void`, {}, tok)).status,
  };
  const success: Record<string, number> = { 'invoices.create': 201 };

  it('a reseller-role manager naming no invoices.* keeps every invoice write (the spec default)', async () => {
    for (const permission of INVOICE_PERMISSIONS) {
      expect([permission, await writes[permission](asReseller(R, ['subscribers.view']))]).toEqual([
        permission,
        success[permission] ?? 200,
      ]);
    }
  });

  it('one naming a single invoice permission may do that write and is refused every other', async () => {
    for (const granted of INVOICE_PERMISSIONS) {
      const tok = asReseller(R, ['subscribers.view', granted]);
      for (const permission of INVOICE_PERMISSIONS) {
        const expected = permission === granted ? (success[permission] ?? 200) : 403;
        expect([granted, permission, await writes[permission](tok)]).toEqual([granted, permission, expected]);
      }
    }
  });

  it('quick pay needs invoices.pay, and a refusal names the permission and changes nothing', async () => {
    const s = await subscriberOf();
    const id = await invoiceOf(s);
    const desk = asReseller(R, ['invoices.create']);
    const refused = await api.post(`/api/invoices/quick-pay/${s}`, { amount: 10 }, desk);
    expect(refused.body).toEqual({ success: false, message: 'permission invoices.pay required' });
    expect((await api.get(`/api/invoices/${id}`, admin)).body.data.paid_amount).toBe(0);
    const paid = await api.post(`/api/invoices/quick-pay/${s}`, { amount: 10 }, asReseller(R, ['invoices.pay']));
    expect(paid.status).toBe(200);
    expect(paid.body.applied).toEqual([{ invoice_id: id, amount: 10 }]);
  });

  it('operator staff (role user) never writes invoices, even naming a permission', async () => {
    const staff = { token: token('user', { resellerId: R, permissions: ['invoices.create', 'invoices.pay'] }) };
    expect(await writes['invoices.create'](staff)).toBe(403);
    expect(await writes['invoices.pay'](staff)).toBe(403);
  });

  it('the catalogue lists the six names', async () => {
    const list = await api.get('/api/permissions', admin);
    expect(list.body.data).toEqual(expect.arrayContaining([...INVOICE_PERMISSIONS]));
    const created = await api.post(
      '/api/managers',
      {
        username: 'desk1',
        password: 'desk-password-1',
        role: 'reseller',
        reseller_id: R,
        permissions: ['invoices.pay'],
      },
      admin,
    );
    expect(created.status).toBe(201);
    expect(created.body.data.permissions).toEqual(['invoices.pay']);
  });
});

describe('void', () => {
  it('voids a pending invoice without payments; refuses one with payments; void twice is 409', async () => {
    const R = await seedReseller(t.db, { name: 'Voids' });
    const plan = await seedPlan(t.db, { price: 1000 });
    const s = await seedSubscriber(t.db, { resellerId: R.id, serviceId: plan.id });
    const a = (await api.post('/api/invoices', { subscriber_id: s.id, items: [line] }, admin)).body.data.id;
    const b = (await api.post('/api/invoices', { subscriber_id: s.id, items: [line] }, admin)).body.data.id;
    const voided = await api.post(`/api/invoices/${a}/void`, {}, asReseller(R.id));
    expect(voided.status).toBe(200);
    expect(voided.body.data).toMatchObject({ id: a, status: 'void', balance: 10 });
    expect((await api.post(`/api/invoices/${a}/void`, {}, admin)).body).toEqual({
      success: false,
      message: 'invoice is void',
    });
    await api.post(`/api/invoices/${b}/payment`, { amount: 1 }, admin);
    expect((await api.post(`/api/invoices/${b}/void`, {}, admin)).body).toEqual({
      success: false,
      message: 'invoice has payments: void is for an invoice nobody paid',
    });
    const other = await seedReseller(t.db, { name: 'Elsewhere' });
    expect((await api.post(`/api/invoices/${b}/void`, {}, asReseller(other.id))).status).toBe(403);
    expect((await api.post('/api/invoices/999999/void', {}, admin)).status).toBe(404);
  });
});

describe('reseller top-ups: who pays', () => {
  it('an ancestor pays from its own balance (both ledger rows); an admin adds new money', async () => {
    const top = (await api.post('/api/resellers', { name: 'Top', currency: 'USD', balance: 100 }, admin)).body.data.id;
    const mid = (await api.post('/api/resellers', { name: 'Mid' }, asReseller(top))).body.data.id;
    const leaf = (await api.post('/api/resellers', { name: 'Leaf', parent_id: mid }, asReseller(top))).body.data.id;
    const balance = async (id: number) => (await t.db.select().from(resellers).where(eq(resellers.id, id)))[0].balance;

    // The parent's manager tops up its child: taken from the parent.
    const moved = await api.post(`/api/resellers/${mid}/balance`, { amount: 30 }, asReseller(top, []));
    expect(moved.status).toBe(200);
    expect([await balance(top), await balance(mid)]).toEqual([7000, 3000]);
    // A grandparent's top-up is taken from the grandparent, not from the leaf's parent.
    expect((await api.post(`/api/resellers/${leaf}/balance`, { amount: 10 }, asReseller(top))).status).toBe(200);
    expect([await balance(top), await balance(mid), await balance(leaf)]).toEqual([6000, 3000, 1000]);
    const rows = await t.db.select().from(transactions).where(eq(transactions.resellerId, leaf));
    expect(rows.map((r) => [r.type, r.amount, r.notes])).toEqual([
      ['reseller_credit', 1000, `transfer from Top (#${top})`],
    ]);

    // More than the parent holds: 402, and no balance moves.
    const refused = await api.post(`/api/resellers/${leaf}/balance`, { amount: 40 }, asReseller(mid));
    expect(refused.body).toEqual({ success: false, message: 'insufficient reseller balance' });
    expect(refused.status).toBe(402);
    expect([await balance(mid), await balance(leaf)]).toEqual([3000, 1000]);

    // An admin's top-up is new money: the parent's balance does not move.
    expect((await api.post(`/api/resellers/${leaf}/balance`, { amount: 50 }, admin)).status).toBe(200);
    expect([await balance(top), await balance(mid), await balance(leaf)]).toEqual([6000, 3000, 6000]);

    // Each balance is the sum of its ledger rows, and transfers add nothing to the tree's total:
    // the tree holds the opening 100 plus the admin's 50.
    for (const id of [top, mid, leaf]) {
      const ledger = await t.db.select().from(transactions).where(eq(transactions.resellerId, id));
      expect(ledger.reduce((sum, r) => sum + r.amount, 0)).toBe(await balance(id));
    }
    expect((await balance(top)) + (await balance(mid)) + (await balance(leaf))).toBe(15000);
  });
});

describe('phones in E.164', () => {
  let plan: number;
  let R: number;
  beforeAll(async () => {
    R = (await seedReseller(t.db, { name: 'Phones' })).id;
    plan = (await seedPlan(t.db, { price: 1000 })).id;
    await api.post(`/api/resellers/${R}/service-limits`, { service_id: plan }, admin);
  });

  it('stores any common spelling as E.164 of default_country, on create and on update', async () => {
    const tok = asReseller(R, ['subscribers.create', 'subscribers.edit', 'subscribers.view']);
    const created = await api.post(
      '/api/subscribers',
      { username: 'ph1', password: 'pw', service_id: plan, phone: '0780 123 4507' },
      tok,
    );
    expect(created.body.data.phone).toBe('+9647801234507');
    const updated = await api.put(`/api/subscribers/${created.body.data.id}`, { phone: '(0770) 555-0101' }, tok);
    expect(updated.body.data.phone).toBe('+9647705550101');
    // A number it cannot read is kept as given (trimmed), not refused.
    const odd = await api.put(`/api/subscribers/${created.body.data.id}`, { phone: '123' }, tok);
    expect(odd.body.data.phone).toBe('123');
    await api.put(`/api/subscribers/${created.body.data.id}`, { phone: '07801234507' }, tok);
    const [row] = await t.db.select().from(subscribers).where(eq(subscribers.id, created.body.data.id));
    expect(row.phone).toBe('+9647801234507');
  });

  it('finds the subscriber and its invoices by "07801234507", "+9647801234507" or "0780 123 4507"', async () => {
    const s = (await t.db.select().from(subscribers).where(eq(subscribers.username, 'ph1')))[0];
    const inv = (await api.post('/api/invoices', { subscriber_id: s.id, items: [line] }, admin)).body.data.id;
    for (const spelling of ['07801234507', '+9647801234507', '0780 123 4507', '0780-123']) {
      const found = await api.get(`/api/subscribers?search=${encodeURIComponent(spelling)}`, admin);
      expect([spelling, found.body.data.map((x: { id: number }) => x.id)]).toEqual([spelling, [s.id]]);
      const invoices = await api.get(`/api/invoices?search=${encodeURIComponent(spelling)}`, admin);
      expect([spelling, invoices.body.data.map((x: { id: number }) => x.id)]).toEqual([spelling, [inv]]);
    }
    expect((await api.get('/api/invoices?search=07709999999', admin)).body.data).toEqual([]);
  });

  it('default_country reads national numbers of another country; a bad code is refused', async () => {
    expect((await api.put('/api/settings', { default_country: 'XX' }, admin)).status).toBe(400);
    expect((await api.put('/api/settings', { default_country: 'GB' }, admin)).status).toBe(200);
    const tok = asReseller(R, ['subscribers.create']);
    const gb = await api.post(
      '/api/subscribers',
      { username: 'ph-gb', password: 'pw', service_id: plan, phone: '07911 123456' },
      tok,
    );
    expect(gb.body.data.phone).toBe('+447911123456');
    await api.put('/api/settings', { default_country: 'IQ' }, admin);
  });

  it('rewrites phones stored before normalisation (the start-up backfill)', async () => {
    const a = await seedSubscriber(t.db, { resellerId: R, serviceId: plan });
    const b = await seedSubscriber(t.db, { resellerId: R, serviceId: plan });
    await t.db.update(subscribers).set({ phone: '0780 765 4321' }).where(eq(subscribers.id, a.id));
    await t.db.update(subscribers).set({ phone: 'ask at desk' }).where(eq(subscribers.id, b.id));
    expect(await normaliseStoredPhones(t.db)).toBe(1);
    const phones = await t.db
      .select({ id: subscribers.id, phone: subscribers.phone })
      .from(subscribers)
      .where(sql`${subscribers.id} in (${a.id}, ${b.id})`)
      .orderBy(subscribers.id);
    expect(phones).toEqual([
      { id: a.id, phone: '+9647807654321' },
      { id: b.id, phone: 'ask at desk' },
    ]);
    expect(await normaliseStoredPhones(t.db)).toBe(0);
    // What is left to read is found through the partial index, not by reading every subscriber.
    await t.db.execute(sql`set enable_seqscan = off`);
    const explained = await t.db.execute<{ 'QUERY PLAN': string }>(sql`
      explain select id, phone from subscribers
       where id > 0 and phone is not null and phone !~ '^[+][1-9][0-9]{3,14}$' order by id limit 1000`);
    await t.db.execute(sql`reset enable_seqscan`);
    expect(explained.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('subscribers_phone_unnormalised_idx');
  });
});

describe('names beside ids, and what the routers answered', () => {
  let R: typeof resellers.$inferSelect;
  let plan: number;
  beforeAll(async () => {
    R = await seedReseller(t.db, { name: 'Named Shop' });
    plan = (await seedPlan(t.db, { price: 1000, name: 'Home 20M' })).id;
  });

  it('invoices carry subscriber_username and reseller_name in the list and the detail', async () => {
    const s = await seedSubscriber(t.db, { resellerId: R.id, serviceId: plan, username: 'named@isp' });
    const id = (await api.post('/api/invoices', { subscriber_id: s.id, items: [line] }, admin)).body.data.id;
    const one = await api.get(`/api/invoices/${id}`, admin);
    expect(one.body.data).toMatchObject({
      subscriber_id: s.id,
      subscriber_username: 'named@isp',
      reseller_name: 'Named Shop',
    });
    const list = await api.get(`/api/invoices?subscriber_id=${s.id}`, admin);
    expect(list.body.data.map((i: Record<string, unknown>) => [i.subscriber_username, i.reseller_name])).toEqual([
      ['named@isp', 'Named Shop'],
    ]);
    // A rename shows at once: names are read when the invoice is shown.
    await api.put(`/api/resellers/${R.id}`, { name: 'Renamed Shop' }, admin);
    expect((await api.get(`/api/invoices/${id}`, admin)).body.data.reseller_name).toBe('Renamed Shop');
  });

  it('audit rows name the manager and the target', async () => {
    const s = await seedSubscriber(t.db, { resellerId: R.id, serviceId: plan, username: 'audited@isp' });
    const manager = token('reseller', { resellerId: R.id, permissions: ['subscribers.edit'] });
    expect((await api.put(`/api/subscribers/${s.id}`, { full_name: 'Audited' }, { token: manager })).status).toBe(200);
    const rows = await api.get(`/api/audit?target_type=subscriber&target_id=${s.id}`, admin);
    expect(rows.body.data[0]).toMatchObject({
      action: 'subscriber.update',
      target_name: 'audited@isp',
      manager_name: expect.stringMatching(/^test-token-/),
    });
  });

  it("a subscriber shows its last access server by name and its last router action's outcome", async () => {
    // Through the API: the detail decrypts the password, which a seeded row does not hold.
    const s = (await api.post('/api/subscribers', { username: 'routed@isp', password: 'pw', service_id: plan }, admin))
      .body.data;
    const [router] = await t.db
      .insert(nas)
      .values({ nasname: '10.9.9.9', shortname: 'tower-east', secret: 's' })
      .returning();
    await t.db.update(subscribers).set({ lastNasId: router.id }).where(eq(subscribers.id, s.id));
    const before = await api.get(`/api/subscribers/${s.id}`, admin);
    expect([before.status, before.body.message]).toEqual([200, undefined]);
    expect(before.body.data).toMatchObject({
      last_nas_id: router.id,
      last_nas_name: 'tower-east',
      last_router_action: null,
    });
    await t.db.insert(coaOutcomes).values({
      source: 'event',
      action: 'disconnect',
      subscriberId: s.id,
      username: s.username,
      reason: 'disable',
      outcome: 'failed',
    });
    const after = await api.get(`/api/subscribers/${s.id}`, admin);
    expect(after.body.data.last_router_action).toMatchObject({
      action: 'disconnect',
      outcome: 'failed',
      reason: 'disable',
    });
  });

  it('a plan-change quote names both plans', async () => {
    const s = (await api.post('/api/subscribers', { username: 'quoted@isp', password: 'pw', service_id: plan }, admin))
      .body.data;
    const other = (await seedPlan(t.db, { price: 2000, name: 'Home 50M' })).id;
    const quote = await api.get(`/api/subscribers/${s.id}/calculate-change-service-price?service_id=${other}`, admin);
    expect(quote.body.data).toMatchObject({
      current_service_id: plan,
      current_service_name: 'Home 20M',
      service_id: other,
      service_name: 'Home 50M',
    });
  });

  it("a bulk deactivation's job counts the routers' answers: ok, failed, waiting", async () => {
    const subs = await Promise.all([1, 2, 3].map(() => seedSubscriber(t.db, { resellerId: R.id, serviceId: plan })));
    const ids = subs.map((s) => s.id);
    const run = await api.post('/api/subscribers/bulk-action', { ids, action: 'disable', payload: {} }, admin);
    expect(run.body.data.succeeded).toEqual(ids);
    const [{ id: jobId }] = (await t.db.execute<{ id: number }>(sql`select id from bulk_jobs order by id desc limit 1`))
      .rows;
    // Offline subscribers: network-access answers `offline` for each disconnect the job queued.
    const settled = await waitFor('router answers', async () => {
      const job = (await api.get(`/api/subscribers/bulk-jobs/${jobId}`, admin)).body.data;
      return job.router?.pending === 0 && job;
    });
    expect(settled.router).toEqual({ ok: 3, failed: 0, pending: 0, by_outcome: { offline: 3 } });
    // A later failed disconnect of one of them (the router refused): counted as failed.
    await t.db.insert(coaOutcomes).values({
      source: 'request',
      action: 'disconnect',
      subscriberId: ids[0],
      username: subs[0].username,
      outcome: 'failed',
      createdAt: new Date(Date.now() + 1000),
    });
    const job = (await api.get(`/api/subscribers/bulk-jobs/${jobId}`, admin)).body.data;
    expect(job.router).toEqual({ ok: 2, failed: 1, pending: 0, by_outcome: { offline: 2, failed: 1 } });
    // A job that disconnects nobody has no router part.
    const renamed = await api.post('/api/subscribers/bulk-action', { ids, action: 'reset_mac', payload: {} }, admin);
    expect(renamed.status).toBe(200);
    const [{ id: quiet }] = (await t.db.execute<{ id: number }>(sql`select id from bulk_jobs order by id desc limit 1`))
      .rows;
    expect((await api.get(`/api/subscribers/bulk-jobs/${quiet}`, admin)).body.data.router).toBeNull();
  });
});
