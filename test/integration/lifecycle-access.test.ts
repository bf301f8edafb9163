/**
 * Blocked access and its end, without FreeRADIUS (freeradius-garden.test.ts proves the same rows
 * with radclient): who is blocked and why, the RADIUS rows that follow, the garden group written
 * from the settings, and the disconnect that makes a session follow a change of state at once.
 */
import { and, eq, sql } from 'drizzle-orm';
import { outbox, radcheck, radgroupcheck, radgroupreply, radusergroup, subscribers } from '../../shared/db/schema';
import { blockedReasonSql } from '../../shared/access/blocked';
import { blockedReason, type AccessFacts } from '../../shared/domain/access';
import { DISCONNECT_EVENT } from '../../shared/access/outbox';
import { GIB } from '../../shared/domain/fup';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let reseller: number;
let tiered: number;
let tierless: number;
const savedInterval = process.env.USAGE_INTERVAL_SECONDS;
const savedLifecycle = process.env.LIFECYCLE_INTERVAL_SECONDS;

const today = () => new Date().toISOString().slice(0, 10);
const daysFromToday = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  // Nothing on a timer: each change below is made by the request or call that the test makes.
  process.env.USAGE_INTERVAL_SECONDS = '0';
  process.env.LIFECYCLE_INTERVAL_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (
    await api.post('/api/resellers', { name: 'lifecycle shop', balance: 10_000, currency: 'USD' }, { token: admin })
  ).body.data.id;
  const mkPlan = async (name: string, extra: Record<string, unknown>) => {
    const res = await api.post(
      '/api/services',
      { name, price: 10, duration_days: 30, currency: 'USD', rate_limit: '20M/20M', ...extra },
      { token: admin },
    );
    expect(res.status).toBe(201);
    await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: res.body.data.id }, { token: admin });
    return res.body.data.id as number;
  };
  tiered = await mkPlan('tiered', {
    monthly_quota_gb: 10,
    fup_tiers: [{ level: 1, threshold_gb: 1, rate_limit: '5M/5M' }],
  });
  tierless = await mkPlan('tierless', { daily_quota_gb: 1, monthly_quota_gb: 10 });
});
afterAll(async () => {
  await t.close();
  for (const [k, v] of [
    ['USAGE_INTERVAL_SECONDS', savedInterval],
    ['LIFECYCLE_INTERVAL_SECONDS', savedLifecycle],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

let seq = 0;
async function mkSub(plan = tiered) {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `life${seq}`, password: 'secret1', service_id: plan, reseller_id: reseller, phone: '+15550001' },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data as { id: number; username: string };
}

const row = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const groups = async (username: string) =>
  (await t.db.select().from(radusergroup).where(eq(radusergroup.username, username))).map((g) => g.groupname).sort();
const checkAttrs = async (username: string) =>
  (await t.db.select().from(radcheck).where(eq(radcheck.username, username))).map((c) => c.attribute).sort();
const disconnects = async (id: number) =>
  (await t.db.select().from(outbox).where(eq(outbox.event, DISCONNECT_EVENT)).orderBy(outbox.id))
    .map((o) => o.payload as { subscriber_id: number; reason: string })
    .filter((p) => p.subscriber_id === id)
    .map((p) => p.reason);
/** An open accounting session: the radacct trigger marks the subscriber online. */
const goOnline = (username: string) =>
  t.pool.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime, acctinputoctets, acctoutputoctets)
     values ($1, $1, $2, '10.0.0.1', now(), now(), 0, 0)`,
    [`s-${username}-${Date.now()}`, username],
  );
/** A past expiry date written straight to the row, then any edit through the API syncs access. */
async function expire(id: number) {
  await t.db
    .update(subscribers)
    .set({ expiryDate: daysFromToday(-2) })
    .where(eq(subscribers.id, id));
  const res = await api.put(`/api/subscribers/${id}`, { full_name: 'Lapsed Customer' }, { token: admin });
  expect(res.status).toBe(200);
}

describe('blocked reason', () => {
  it('the SQL twin agrees with the domain rule on every combination', async () => {
    await api.put('/api/settings', { suspend_overdue_after_days: 3 }, { token: admin });
    const cases: AccessFacts[] = [];
    for (const expiryDate of [daysFromToday(-1), today(), daysFromToday(5)])
      for (const fupLevel of [0, 1, 3])
        for (const planHasTiers of [true, false])
          for (const overdueDays of [0, 3, 4])
            cases.push({ expiryDate, today: today(), fupLevel, planHasTiers, overdueDays });
    const s = await mkSub();
    for (const c of cases) {
      await t.db
        .update(subscribers)
        .set({ expiryDate: c.expiryDate, fupLevel: c.fupLevel, serviceId: c.planHasTiers ? tiered : tierless })
        .where(eq(subscribers.id, s.id));
      await t.pool.query('delete from invoices where subscriber_id = $1', [s.id]);
      if (c.overdueDays > 0) {
        const due = daysFromToday(-c.overdueDays);
        await t.pool.query(
          `insert into invoices (invoice_number, subscriber_id, reseller_id, issue_date, due_date, currency, amount, tax_rate, tax_amount, total, paid_amount, status)
           values ($1, $2, $3, $4, $4, 'USD', 1000, 0, 0, 1000, 0, 'overdue')`,
          [`T-${s.id}-${cases.indexOf(c)}`, s.id, reseller, due],
        );
      }
      const res = await t.db.execute<{ reason: string | null }>(sql`
        select ${blockedReasonSql(today())} as reason
          from subscribers s join services p on p.id = s.service_id where s.id = ${s.id}`);
      expect({ ...c, reason: res.rows[0].reason }).toEqual({ ...c, reason: blockedReason(c, 3) });
    }
    await t.pool.query('delete from invoices where subscriber_id = $1', [s.id]);
    await api.put('/api/settings', { suspend_overdue_after_days: null }, { token: admin });
  });
});

describe('expired', () => {
  it('a lapsed subscriber is in billing_blocked alone, without Expiration; renew restores with one disconnect', async () => {
    const s = await mkSub();
    expect(await groups(s.username)).toEqual([`plan_${tiered}`]);
    expect(await checkAttrs(s.username)).toContain('Expiration');
    await goOnline(s.username);
    await expire(s.id);
    expect((await row(s.id)).blockedReason).toBe('expired');
    expect(await groups(s.username)).toEqual(['billing_blocked']);
    expect(await checkAttrs(s.username)).not.toContain('Expiration');
    expect(await checkAttrs(s.username)).not.toContain('Auth-Type');
    // Its session (opened before the edit) is dropped so that the next one lands in the garden.
    expect(await disconnects(s.id)).toEqual(['blocked']);

    const renewed = await api.post(`/api/subscribers/${s.id}/renew`, {}, { token: admin });
    expect(renewed.status).toBe(200);
    expect((await row(s.id)).blockedReason).toBeNull();
    expect(await groups(s.username)).toEqual([`plan_${tiered}`]);
    expect(await checkAttrs(s.username)).toContain('Expiration');
    // Renew disconnects anyway: no second event for the end of the block.
    expect(await disconnects(s.id)).toEqual(['blocked', 'renew']);
  });

  it('a subscriber created with a past expiry_date is blocked from the start, and its answer says so', async () => {
    const res = await api.post(
      '/api/subscribers',
      {
        username: 'born-lapsed',
        password: 'secret1',
        service_id: tiered,
        reseller_id: reseller,
        expiry_date: daysFromToday(-1),
      },
      { token: admin },
    );
    expect(res.status).toBe(201);
    expect(res.body.data.blocked_reason).toBe('expired');
    expect(await groups('born-lapsed')).toEqual(['billing_blocked']);
  });

  it('add-days past today restores; an offline subscriber gets no disconnect', async () => {
    const s = await mkSub();
    await expire(s.id);
    expect((await row(s.id)).blockedReason).toBe('expired');
    const res = await api.post(`/api/subscribers/${s.id}/add-days`, { days: 10, reason: 'goodwill' }, { token: admin });
    expect(res.status).toBe(200);
    expect((await row(s.id)).blockedReason).toBeNull();
    expect(await groups(s.username)).toEqual([`plan_${tiered}`]);
    expect(await disconnects(s.id)).toEqual([]);
  });

  it('an inactive subscriber keeps its Auth-Type Reject row whether or not it is expired', async () => {
    const s = await mkSub();
    await api.post(`/api/subscribers/${s.id}/deactivate`, {}, { token: admin });
    await expire(s.id);
    const checks = await t.db
      .select()
      .from(radcheck)
      .where(and(eq(radcheck.username, s.username), eq(radcheck.attribute, 'Auth-Type')));
    expect(checks.map((c) => c.value)).toEqual(['Reject']);
  });
});

describe('overdue suspension and restore on payment', () => {
  it('an invoice past due for more than the grace blocks; paying it restores in the same request', async () => {
    const s = await mkSub();
    await goOnline(s.username);
    const inv = await api.post(
      '/api/invoices',
      { subscriber_id: s.id, items: [{ description: 'install', qty: 1, unit_price: 25 }], due_date: today() },
      { token: admin },
    );
    expect(inv.status).toBe(201);
    await t.pool.query(`update invoices set issue_date = $2, due_date = $2 where id = $1`, [
      inv.body.data.id,
      daysFromToday(-10),
    ]);
    // No grace set: an unpaid invoice never blocks.
    await api.put(`/api/subscribers/${s.id}`, { full_name: 'Slow Payer' }, { token: admin });
    expect((await row(s.id)).blockedReason).toBeNull();

    expect((await api.put('/api/settings', { suspend_overdue_after_days: 5 }, { token: admin })).status).toBe(200);
    await api.put(`/api/subscribers/${s.id}`, { full_name: 'Slow Payer' }, { token: admin });
    expect((await row(s.id)).blockedReason).toBe('overdue');
    expect(await groups(s.username)).toEqual(['billing_blocked']);

    // A partial payment leaves the invoice open: still blocked.
    const part = await api.post(`/api/invoices/${inv.body.data.id}/payment`, { amount: 5 }, { token: admin });
    expect(part.status).toBe(200);
    expect((await row(s.id)).blockedReason).toBe('overdue');

    const paid = await api.post(`/api/invoices/${inv.body.data.id}/payment`, { amount: 20 }, { token: admin });
    expect(paid.status).toBe(200);
    expect(paid.body.data.invoice.status).toBe('paid');
    expect((await row(s.id)).blockedReason).toBeNull();
    expect(await groups(s.username)).toEqual([`plan_${tiered}`]);
    expect(await disconnects(s.id)).toEqual(['blocked', 'restored']);
    await api.put('/api/settings', { suspend_overdue_after_days: null }, { token: admin });
  });

  it('quick-pay that clears the overdue invoice restores too', async () => {
    const s = await mkSub();
    const inv = await api.post(
      '/api/invoices',
      { subscriber_id: s.id, items: [{ description: 'router', qty: 1, unit_price: 40 }], due_date: today() },
      { token: admin },
    );
    await t.pool.query(`update invoices set issue_date = $2, due_date = $2 where id = $1`, [
      inv.body.data.id,
      daysFromToday(-3),
    ]);
    await api.put('/api/settings', { suspend_overdue_after_days: 0 }, { token: admin });
    await api.put(`/api/subscribers/${s.id}`, { full_name: 'Quick Payer' }, { token: admin });
    expect((await row(s.id)).blockedReason).toBe('overdue');
    const res = await api.post(`/api/invoices/quick-pay/${s.id}`, { amount: 50 }, { token: admin });
    expect(res.status).toBe(200);
    expect((await row(s.id)).blockedReason).toBeNull();
    expect(await groups(s.username)).toEqual([`plan_${tiered}`]);
    await api.put('/api/settings', { suspend_overdue_after_days: null }, { token: admin });
  });
});

describe('quotas without tiers', () => {
  const evaluate = () => t.app.broker.call('usage.run', {});
  const use = (id: number, daily: number, monthly: number) =>
    t.db
      .update(subscribers)
      .set({ dailyQuotaUsed: daily, monthlyQuotaUsed: monthly, usageDay: today(), fupPending: true })
      .where(eq(subscribers.id, id));

  it('a used-up daily quota reports level 1 and blocks; reset-fup restores', async () => {
    const s = await mkSub(tierless);
    await goOnline(s.username);
    await use(s.id, 1.5 * GIB, 1.5 * GIB);
    await evaluate();
    const r = await row(s.id);
    expect([r.fupLevel, r.blockedReason]).toEqual([1, 'quota']);
    expect(await groups(s.username)).toEqual(['billing_blocked']);
    expect(await disconnects(s.id)).toEqual(['blocked']);

    expect((await api.post(`/api/subscribers/${s.id}/reset-fup`, {}, { token: admin })).status).toBe(200);
    const after = await row(s.id);
    expect([after.fupLevel, after.blockedReason]).toEqual([0, null]);
    expect(await groups(s.username)).toEqual([`plan_${tierless}`]);
    expect(await disconnects(s.id)).toEqual(['blocked', 'restored']);
  });

  it('a used-up monthly quota reports level 3; topup-data lifts it without waiting for the usage timer', async () => {
    const s = await mkSub(tierless);
    await use(s.id, 0, 10 * GIB);
    await evaluate();
    expect([(await row(s.id)).fupLevel, (await row(s.id)).blockedReason]).toEqual([3, 'quota']);
    const res = await api.post(`/api/subscribers/${s.id}/topup-data`, { gb: 5 }, { token: admin });
    expect(res.status).toBe(200);
    const restored = await waitFor('the FUP engine to lift the quota block', async () => {
      const r = await row(s.id);
      return r.blockedReason === null ? r : undefined;
    });
    expect(restored.fupLevel).toBe(0);
    expect(await groups(s.username)).toEqual([`plan_${tierless}`]);
  });

  it('refill restores a quota block', async () => {
    const s = await mkSub(tierless);
    await use(s.id, 2 * GIB, 2 * GIB);
    await evaluate();
    expect((await row(s.id)).blockedReason).toBe('quota');
    expect((await api.post(`/api/subscribers/${s.id}/refill`, {}, { token: admin })).status).toBe(200);
    expect((await row(s.id)).blockedReason).toBeNull();
  });

  it('a plan with tiers throttles instead of blocking', async () => {
    const s = await mkSub(tiered);
    await use(s.id, 0, 2 * GIB);
    await evaluate();
    const r = await row(s.id);
    expect([r.fupLevel, r.blockedReason]).toEqual([1, null]);
    expect(await groups(s.username)).toEqual([`plan_${tiered}`, `plan_${tiered}_fup1`]);
  });
});

describe('settings of the blocked group', () => {
  const groupRows = async () => ({
    check: (await t.db.select().from(radgroupcheck).where(eq(radgroupcheck.groupname, 'billing_blocked'))).map(
      (r) => `${r.attribute} ${r.op} ${r.value}`,
    ),
    reply: (await t.db.select().from(radgroupreply).where(eq(radgroupreply.groupname, 'billing_blocked')))
      .map((r) => `${r.attribute} ${r.op} ${r.value}`)
      .sort(),
  });

  it('reject by default; walled_garden writes the garden pairs; a bad line is 400 naming it and changes nothing', async () => {
    expect(await groupRows()).toEqual({ check: ['Auth-Type := Reject'], reply: [] });
    const s = await mkSub();
    await expire(s.id);
    await goOnline(s.username);

    const garden = await api.put('/api/settings', { blocked_access: 'walled_garden' }, { token: admin });
    expect(garden.status).toBe(200);
    expect(await groupRows()).toEqual({
      check: [],
      reply: ['Mikrotik-Address-List := billing-blocked', 'Mikrotik-Rate-Limit := 256k/256k'],
    });
    // The blocked subscriber online under the old mode logs in again under the new one.
    expect(await disconnects(s.id)).toEqual(['blocked']);

    const bad = await api.put(
      '/api/settings',
      { walled_garden_attributes: 'Mikrotik-Rate-Limit := "1M/1M"\nnot a pair' },
      { token: admin },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/^walled_garden_attributes: line 2 is not a RADIUS pair/);
    expect((await groupRows()).reply).toEqual([
      'Mikrotik-Address-List := billing-blocked',
      'Mikrotik-Rate-Limit := 256k/256k',
    ]);

    const typo = await api.put(
      '/api/settings',
      { walled_garden_attributes: 'Mikrotik-Adress-List := "billing-blocked"' },
      { token: admin },
    );
    expect(typo.status).toBe(400);
    expect(typo.body.message).toBe('walled_garden_attributes: line 1: unknown attribute Mikrotik-Adress-List');

    const custom = await api.put(
      '/api/settings',
      { walled_garden_attributes: 'Mikrotik-Rate-Limit := "1M/1M"\n\nFramed-Pool := garden' },
      { token: admin },
    );
    expect(custom.status).toBe(200);
    expect((await groupRows()).reply).toEqual(['Framed-Pool := garden', 'Mikrotik-Rate-Limit := 1M/1M']);
    // Same mode: nobody is dropped for a change of attributes.
    expect(await disconnects(s.id)).toEqual(['blocked']);

    expect((await api.put('/api/settings', { blocked_access: 'reject' }, { token: admin })).status).toBe(200);
    expect(await groupRows()).toEqual({ check: ['Auth-Type := Reject'], reply: [] });
  });
});
