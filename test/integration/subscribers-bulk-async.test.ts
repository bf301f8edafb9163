import { eq, sql } from 'drizzle-orm';
import { subscribers } from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();

beforeAll(async () => {
  // A zero threshold: every bulk job answers 202 and finishes in the background. The bulk service
  // reads it from the process environment, as in production.
  process.env.BULK_SYNC_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
});
afterAll(async () => {
  delete process.env.BULK_SYNC_SECONDS;
  await t.close();
});

it('a job not done within BULK_SYNC_SECONDS answers 202 { job_id }; bulk-jobs/:id reports progress and outcome', async () => {
  const r = await api.post('/api/resellers', { name: 'r', balance: 100, currency: 'USD' }, { token: admin });
  const plan = await api.post(
    '/api/services',
    { name: 'p', price: 1, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  await api.post(
    `/api/resellers/${r.body.data.id}/service-limits`,
    { service_id: plan.body.data.id },
    { token: admin },
  );
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) {
    const s = await api.post(
      '/api/subscribers',
      { username: `a${i}`, password: 'pw', service_id: plan.body.data.id, reseller_id: r.body.data.id },
      { token: admin },
    );
    ids.push(s.body.data.id);
  }
  const res = await api.post(
    '/api/subscribers/bulk-action',
    { ids: [...ids, 424242], action: 'disable' },
    { token: admin },
  );
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ success: true, data: { job_id: expect.any(Number) } });
  type Job = { status: string; processed: number; total: number; succeeded: number[]; failed: unknown[] };
  const job = await waitFor(
    'the job leaving running',
    async () => {
      const poll = await api.get(`/api/subscribers/bulk-jobs/${res.body.data.job_id}`, { token: admin });
      expect(poll.status).toBe(200);
      const data = poll.body.data as Job;
      return data.status !== 'running' && data;
    },
    10_000,
  );
  expect(job).toMatchObject({
    status: 'done',
    total: 4,
    processed: 4,
    succeeded: ids,
    failed: [{ id: 424242, reason: 'subscriber not found' }],
  });
  for (const id of ids)
    expect((await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0].status).toBe('inactive');
  const other = token('reseller', { managerId: 99, resellerId: r.body.data.id, permissions: [] });
  expect((await api.get(`/api/subscribers/bulk-jobs/${res.body.data.job_id}`, { token: other })).status).toBe(403);
});

it('a bulk renew of subscribers already renewed today answers 202 when it outlives the wait: only a synchronous answer is 422', async () => {
  const r = await api.post('/api/resellers', { name: 'r2', balance: 100, currency: 'USD' }, { token: admin });
  const plan = await api.post(
    '/api/services',
    { name: 'p2', price: 1, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  await api.post(
    `/api/resellers/${r.body.data.id}/service-limits`,
    { service_id: plan.body.data.id },
    { token: admin },
  );
  const s = await api.post(
    '/api/subscribers',
    { username: 'renewed', password: 'pw', service_id: plan.body.data.id, reseller_id: r.body.data.id },
    { token: admin },
  );
  await t.db
    .update(subscribers)
    .set({ lastRenewedOn: new Date().toISOString().slice(0, 10) })
    .where(eq(subscribers.id, s.body.data.id));
  const res = await api.post(
    '/api/subscribers/bulk-action',
    { ids: [s.body.data.id], action: 'renew' },
    { token: admin },
  );
  expect(res.status).toBe(202);
  const job = await waitFor(
    'the job leaving running',
    async () => {
      const data = (await api.get(`/api/subscribers/bulk-jobs/${res.body.data.job_id}`, { token: admin })).body.data;
      return data.status !== 'running' && data;
    },
    10_000,
  );
  expect(job).toMatchObject({
    status: 'done',
    succeeded: [],
    failed: [{ id: s.body.data.id, reason: 'already renewed today' }],
  });
});

it('a job over several batches (64, 128, 256, then 500s) acts on every id once, in order, with its outbox and audit rows', async () => {
  const r = await api.post('/api/resellers', { name: 'r3', balance: 100, currency: 'USD' }, { token: admin });
  const plan = await api.post(
    '/api/services',
    { name: 'p3', price: 1, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  const { rows } = await t.db.execute<{ id: number }>(sql`
    insert into subscribers (username, password_enc, service_id, reseller_id, expiry_date)
    select 'many' || g, 'x', ${plan.body.data.id}::int, ${r.body.data.id}::int, current_date + 30
      from generate_series(1, 700) g order by g returning id`);
  const ids = rows.map((row) => Number(row.id));
  // A missing id inside the first batch (64) and one in the fourth (from 448 on).
  const requested = [...ids.slice(0, 10), 424243, ...ids.slice(10, 600), 424244, ...ids.slice(600)];
  const res = await api.post('/api/subscribers/bulk-action', { ids: requested, action: 'disable' }, { token: admin });
  expect(res.status).toBe(202);
  const jobId = res.body.data.job_id as number;
  const job = await waitFor(
    'the job leaving running',
    async () => {
      const data = (await api.get(`/api/subscribers/bulk-jobs/${jobId}`, { token: admin })).body.data;
      return data.status !== 'running' && data;
    },
    30_000,
  );
  expect(job).toMatchObject({
    status: 'done',
    total: 702,
    processed: 702,
    succeeded: ids,
    failed: [
      { id: 424243, reason: 'subscriber not found' },
      { id: 424244, reason: 'subscriber not found' },
    ],
  });
  const [counts] = (
    await t.db.execute<{ inactive: number; events: number; audits: number }>(sql`
      select (select count(*)::int from subscribers where id = any(${sql.param(ids)}::int[]) and status = 'inactive') as inactive,
             (select count(*)::int from outbox where (payload ->> 'subscriber_id')::int = any(${sql.param(ids)}::int[])
                and payload ->> 'reason' = 'disable') as events,
             (select count(*)::int from audit_log where action = 'subscriber.disable'
                and (details ->> 'bulk_job')::int = ${jobId}::int) as audits`)
  ).rows;
  expect(counts).toEqual({ inactive: 700, events: 700, audits: 700 });
  // One transaction per batch, so the events of a batch share their created_at (now()).
  const batches = (
    await t.db.execute<{ n: number }>(sql`
      select count(*)::int as n from outbox
       where (payload ->> 'subscriber_id')::int = any(${sql.param(ids)}::int[]) and payload ->> 'reason' = 'disable'
       group by created_at order by min(id)`)
  ).rows.map((b) => b.n);
  expect(batches).toEqual([63, 128, 256, 253]);
});
