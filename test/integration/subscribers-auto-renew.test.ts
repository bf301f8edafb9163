/**
 * Issue 24: the subscriber field `auto_renew` (create, update, detail, list and its filter, bulk
 * set_auto_renew) and the read-only `blocked_reason` (detail, list, filters blocked= and
 * blocked_reason=). Every bad input is a 400 naming the field, with no row written.
 */
import { count, eq, inArray, sql } from 'drizzle-orm';
import { bulkJobs, subscribers } from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();

let north: number;
let south: number;
let plan: number;
let northTok: string;

const subRow = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const subCount = async () => (await t.db.select({ n: count() }).from(subscribers))[0].n;
const jobCount = async () => (await t.db.select({ n: count() }).from(bulkJobs))[0].n;

let seq = 0;
async function mkSub(extra: Record<string, unknown> = {}, tok = admin) {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `auto${seq}@isp`, password: 'secret1', service_id: plan, reseller_id: north, ...extra },
    { token: tok },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; username: string; auto_renew: boolean; blocked_reason: string | null };
}

/** The ids of one list query, all pages of it (the test database holds a few dozen rows). */
async function listIds(query: string, tok = admin): Promise<number[]> {
  const res = await api.get(`/api/subscribers?limit=500&${query}`, { token: tok });
  expect(res.status).toBe(200);
  return (res.body.data as { id: number }[]).map((s) => s.id).sort((a, b) => a - b);
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  const mkReseller = async (name: string) => {
    const res = await api.post('/api/resellers', { name, balance: 100, currency: 'USD' }, { token: admin });
    expect(res.status).toBe(201);
    return res.body.data.id as number;
  };
  north = await mkReseller('north');
  south = await mkReseller('south');
  const p = await api.post(
    '/api/services',
    { name: 'home', price: 10, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  expect(p.status).toBe(201);
  plan = p.body.data.id;
  for (const r of [north, south]) {
    const res = await api.post(
      `/api/resellers/${r}/service-limits`,
      { service_id: plan, max_subscribers: null },
      { token: admin },
    );
    expect(res.status).toBe(200);
  }
  northTok = token('reseller', {
    resellerId: north,
    permissions: ['subscribers.view', 'subscribers.create', 'subscribers.edit'],
  });
});
afterAll(() => t.close());

describe('auto_renew on create, update and reads', () => {
  it('create without it: false; with it: true; both in the answer, the row, the detail and the list', async () => {
    const plain = await mkSub();
    expect(plain.auto_renew).toBe(false);
    expect(plain.blocked_reason).toBeNull();
    expect((await subRow(plain.id)).autoRenew).toBe(false);

    const auto = await mkSub({ auto_renew: true }, northTok);
    expect(auto.auto_renew).toBe(true);
    expect((await subRow(auto.id)).autoRenew).toBe(true);

    const detail = await api.get(`/api/subscribers/${auto.id}`, { token: admin });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({ id: auto.id, auto_renew: true, blocked_reason: null });

    const list = await api.get('/api/subscribers?limit=500', { token: admin });
    const byId = new Map((list.body.data as { id: number }[]).map((s) => [s.id, s]));
    expect(byId.get(auto.id)).toMatchObject({ auto_renew: true, blocked_reason: null });
    expect(byId.get(plain.id)).toMatchObject({ auto_renew: false, blocked_reason: null });
  });

  it('update turns it on and off and leaves it alone when not sent', async () => {
    const s = await mkSub();
    const on = await api.put(`/api/subscribers/${s.id}`, { auto_renew: true }, { token: northTok });
    expect(on.status).toBe(200);
    expect(on.body.data.auto_renew).toBe(true);
    expect((await subRow(s.id)).autoRenew).toBe(true);

    const other = await api.put(`/api/subscribers/${s.id}`, { notes: 'kept' }, { token: admin });
    expect(other.status).toBe(200);
    expect(other.body.data).toMatchObject({ auto_renew: true, notes: 'kept' });

    const off = await api.put(`/api/subscribers/${s.id}`, { auto_renew: false }, { token: admin });
    expect(off.body.data.auto_renew).toBe(false);
    expect((await subRow(s.id)).autoRenew).toBe(false);
  });

  it('a value that is not a boolean is 400 naming auto_renew, and nothing is written', async () => {
    const before = await subCount();
    for (const value of ['yes', 1, null]) {
      const res = await api.post(
        '/api/subscribers',
        { username: 'badauto@isp', password: 'secret1', service_id: plan, auto_renew: value },
        { token: admin },
      );
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.message).toContain('auto_renew');
    }
    expect(await subCount()).toBe(before);

    const s = await mkSub({ auto_renew: true });
    const res = await api.put(`/api/subscribers/${s.id}`, { auto_renew: 'false', notes: 'no' }, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('auto_renew');
    const row = await subRow(s.id);
    expect([row.autoRenew, row.notes]).toEqual([true, null]);
  });

  it('blocked_reason is read-only: the system keeps it, a request cannot set it', async () => {
    const s = await mkSub();
    const created = await api.post(
      '/api/subscribers',
      { username: 'blockme@isp', password: 'secret1', service_id: plan, blocked_reason: 'quota' },
      { token: admin },
    );
    // Create refuses fields its schema does not name; PUT drops them (spec: unknown fields are dropped).
    expect(created.status).toBe(400);
    expect(created.body.message).toContain('blocked_reason');
    const put = await api.put(`/api/subscribers/${s.id}`, { blocked_reason: 'quota', notes: 'x' }, { token: admin });
    expect(put.status).toBe(200);
    expect(put.body.data.blocked_reason).toBeNull();
    expect((await subRow(s.id)).blockedReason).toBeNull();
  });
});

describe('list filters', () => {
  it('auto_renew=true|false, blocked=true|false and blocked_reason= select the matching rows', async () => {
    const a = await mkSub({ auto_renew: true });
    const b = await mkSub();
    const c = await mkSub({ auto_renew: true });
    // blocked_reason is kept by the lifecycle; set here as it would be.
    await t.db.update(subscribers).set({ blockedReason: 'quota' }).where(eq(subscribers.id, b.id));
    await t.db.update(subscribers).set({ blockedReason: 'overdue' }).where(eq(subscribers.id, c.id));
    const all = await t.db.select({ id: subscribers.id, autoRenew: subscribers.autoRenew }).from(subscribers);
    const autoIds = all
      .filter((r) => r.autoRenew)
      .map((r) => r.id)
      .sort((x, y) => x - y);
    const manualIds = all
      .filter((r) => !r.autoRenew)
      .map((r) => r.id)
      .sort((x, y) => x - y);

    expect(await listIds('auto_renew=true')).toEqual(autoIds);
    expect(await listIds('auto_renew=false')).toEqual(manualIds);
    expect(await listIds('auto_renew=true')).toEqual(expect.arrayContaining([a.id, c.id]));
    expect(await listIds('auto_renew=false')).toContain(b.id);

    expect(await listIds('blocked=true')).toEqual([b.id, c.id]);
    expect(await listIds('blocked_reason=overdue')).toEqual([c.id]);
    expect(await listIds('blocked_reason=quota&auto_renew=false')).toEqual([b.id]);
    expect(await listIds('blocked_reason=quota&auto_renew=true')).toEqual([]);
    const unblocked = await listIds('blocked=false');
    expect(unblocked).toContain(a.id);
    expect(unblocked).not.toContain(b.id);
    expect(unblocked).not.toContain(c.id);

    const detail = await api.get(`/api/subscribers/${c.id}`, { token: admin });
    expect(detail.body.data).toMatchObject({ auto_renew: true, blocked_reason: 'overdue' });
    // A reseller's list is its own rows only, filters included.
    const mine = await listIds('blocked=true', northTok);
    expect(mine).toEqual([b.id, c.id]);
  });

  it('a bad filter value is 400 naming it', async () => {
    for (const [query, field] of [
      ['auto_renew=yes', 'auto_renew'],
      ['blocked=maybe', 'blocked'],
      ['blocked_reason=broke', 'blocked_reason'],
    ]) {
      const res = await api.get(`/api/subscribers?${query}`, { token: admin });
      expect([res.status, res.body.message]).toEqual([400, expect.stringContaining(field)]);
    }
  });
});

describe('bulk set_auto_renew', () => {
  const bulk = (body: unknown, tok = admin) => api.post('/api/subscribers/bulk-action', body, { token: tok });

  it('sets it on every id; an unknown id fails "subscriber not found", another reseller\'s "out of scope"', async () => {
    const a = await mkSub();
    const b = await mkSub({ auto_renew: true });
    const theirs = await mkSub({ reseller_id: south });
    const res = await bulk(
      { ids: [a.id, b.id, theirs.id, 999999], action: 'set_auto_renew', payload: { auto_renew: true } },
      northTok,
    );
    expect(res.status).toBe(200);
    expect(res.body.data.succeeded).toEqual([a.id, b.id]);
    expect(res.body.data.failed).toEqual(
      expect.arrayContaining([
        { id: theirs.id, reason: 'out of scope' },
        { id: 999999, reason: 'subscriber not found' },
      ]),
    );
    expect(res.body.data.failed).toHaveLength(2);
    const rows = await t.db
      .select({ id: subscribers.id, autoRenew: subscribers.autoRenew })
      .from(subscribers)
      .where(inArray(subscribers.id, [a.id, b.id, theirs.id]));
    expect(Object.fromEntries(rows.map((r) => [r.id, r.autoRenew]))).toEqual({
      [a.id]: true,
      [b.id]: true,
      [theirs.id]: false,
    });
    const [job] = (
      await t.db.execute<{ action: string; status: string; processed: number }>(
        sql`select action, status, processed from bulk_jobs where id = ${res.body.job_id}`,
      )
    ).rows;
    expect(job).toEqual({ action: 'set_auto_renew', status: 'done', processed: 4 });

    const off = await bulk({ ids: [a.id, theirs.id], action: 'set_auto_renew', payload: { auto_renew: false } });
    expect(off.body.data).toEqual({ succeeded: [a.id, theirs.id], failed: [] });
    expect((await subRow(a.id)).autoRenew).toBe(false);
    expect((await subRow(b.id)).autoRenew).toBe(true);
  });

  it('needs subscribers.edit: without it every id fails with the permission and nothing changes', async () => {
    const s = await mkSub();
    const tok = token('reseller', { resellerId: north, permissions: ['subscribers.view'] });
    const res = await bulk({ ids: [s.id], action: 'set_auto_renew', payload: { auto_renew: true } }, tok);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      succeeded: [],
      failed: [{ id: s.id, reason: 'permission subscribers.edit required' }],
    });
    expect((await subRow(s.id)).autoRenew).toBe(false);
  });

  it('a bad payload is 400 naming payload.auto_renew; no job row and no change', async () => {
    const s = await mkSub();
    const jobs = await jobCount();
    for (const payload of [{}, { auto_renew: 'true' }, { auto_renew: null }, { auto_renew: true, extra: 1 }]) {
      const res = await bulk({ ids: [s.id], action: 'set_auto_renew', payload });
      expect(res.status).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.message).toContain(Object.keys(payload).includes('extra') ? 'payload' : 'payload.auto_renew');
    }
    const none = await bulk({ ids: [s.id], action: 'set_auto_renew' });
    expect([none.status, none.body.message]).toEqual([400, expect.stringContaining('auto_renew')]);
    // Without a payload the action's required fields are still checked (another action alike).
    const noPlan = await bulk({ ids: [s.id], action: 'set_service' });
    expect([noPlan.status, noPlan.body.message]).toEqual([400, 'payload.service_id is required']);
    expect(await jobCount()).toBe(jobs);
    expect((await subRow(s.id)).autoRenew).toBe(false);
  });

  it('is listed in the OpenAPI document with its payload, and the subscriber schema has auto_renew', async () => {
    const res = await api.get('/api/openapi.json');
    expect(res.status).toBe(200);
    const text = JSON.stringify(res.body);
    expect(text).toContain('set_auto_renew');
    expect(text).toContain('auto_renew');
    expect(text).toContain('blocked_reason');
  });
});
