/**
 * Accounting retention (issue 26): the usage run deletes closed radacct sessions that ended before
 * the first day of the month `accounting_retention_months` back, in bounded batches, and never an
 * open one, however old. Rows are written as FreeRADIUS writes them, with the triggers on.
 * freeradius-sessions.test.ts covers accounting through a real FreeRADIUS on the same schema.
 */
import { eq } from 'drizzle-orm';
import { subscribers } from '../../shared/db/schema';
import { retentionCutoff } from '../../shared/access/retention-cutoff';
import { purgeAccountingHistory } from '../../services/network-access/usage/retention';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();
let plan: number;
let reseller: number;
let today: string;
let cutoff: string;
const savedInterval = process.env.USAGE_INTERVAL_SECONDS;

beforeAll(async () => {
  process.env.USAGE_INTERVAL_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (
    await api.post('/api/resellers', { name: 'retention shop', balance: 1000, currency: 'USD' }, { token: admin })
  ).body.data.id;
  plan = (
    await api.post(
      '/api/services',
      { name: 'kept', price: 10, duration_days: 30, currency: 'USD', rate_limit: '10M/10M' },
      { token: admin },
    )
  ).body.data.id;
  await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: plan }, { token: admin });
  today = (await t.pool.query("select ((now() at time zone 'UTC')::date)::text as today")).rows[0].today;
  cutoff = `${retentionCutoff(today, 13)}T00:00:00Z`;
});
afterAll(async () => {
  await t.close();
  if (savedInterval === undefined) delete process.env.USAGE_INTERVAL_SECONDS;
  else process.env.USAGE_INTERVAL_SECONDS = savedInterval;
});

let seq = 0;
async function mkSub() {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `r${seq}@retention`, password: 'secret1', service_id: plan, reseller_id: reseller },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data as { id: number; username: string };
}

/** A session as FreeRADIUS's Start (and Stop) leave it; times are SQL expressions over :cutoff. */
async function session(id: string, username: string, start: string, stop: string | null, ip = '100.64.9.9') {
  await t.pool.query(
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, acctstarttime, acctupdatetime,
                          acctstoptime, acctinputoctets, acctoutputoctets)
     select $1, $1, $2, '10.9.0.1', $3::inet, ${start}, coalesce(${stop ?? 'null'}, now()), ${stop ?? 'null'}, 0, 0
       from (select $4::timestamptz as cutoff) c`,
    [id, username, ip, cutoff],
  );
}

const ids = async () =>
  (await t.pool.query<{ acctuniqueid: string }>('select acctuniqueid from radacct order by acctuniqueid')).rows.map(
    (r) => r.acctuniqueid,
  );
const run = () => t.app.broker.call('usage.run', {}) as Promise<{ history_deleted: number; stale_closed: number }>;
const sub = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];

afterEach(async () => {
  await t.pool.query('delete from radacct');
  await api.put('/api/settings', { accounting_retention_months: 13 }, { token: admin });
});

describe('accounting retention', () => {
  it('the usage run deletes closed sessions that ended before the cutoff, and keeps open, straddling and newer ones', async () => {
    const s = await mkSub();
    await session('a-old', s.username, `c.cutoff - interval '40 days'`, `c.cutoff - interval '39 days'`);
    await session('b-just-before', s.username, `c.cutoff - interval '2 hours'`, `c.cutoff - interval '1 second'`);
    await session('c-at-cutoff', s.username, `c.cutoff - interval '2 hours'`, 'c.cutoff');
    await session('d-straddles', s.username, `c.cutoff - interval '2 hours'`, `c.cutoff + interval '1 hour'`);
    await session('e-recent', s.username, `now() - interval '2 hours'`, `now() - interval '1 hour'`);
    // Open for 14 months and still heard of (a fresh update): online, not stale, not history.
    await session('f-open-old', s.username, `c.cutoff - interval '30 days'`, null, '100.64.7.7');
    expect((await sub(s.id)).isOnline).toBe(true);

    const res = await run();
    expect(res).toMatchObject({ history_deleted: 2, stale_closed: 0 });
    expect(await ids()).toEqual(['c-at-cutoff', 'd-straddles', 'e-recent', 'f-open-old']);
    const after = await sub(s.id);
    expect([after.isOnline, after.ipAddress]).toEqual([true, '100.64.7.7']);
    // A second run finds nothing more.
    expect((await run()).history_deleted).toBe(0);
  });

  it('0 keeps every session; the setting is validated and listed with its default', async () => {
    const s = await mkSub();
    const got = await api.get('/api/settings', { token: admin });
    expect(got.body.data.accounting_retention_months).toBe(13);
    for (const bad of [-1, 1201, 2.5, 'thirteen', null]) {
      const res = await api.put('/api/settings', { accounting_retention_months: bad }, { token: admin });
      expect(res.status).toBe(400);
    }
    expect((await api.get('/api/settings', { token: admin })).body.data.accounting_retention_months).toBe(13);

    await session('old-1', s.username, `c.cutoff - interval '400 days'`, `c.cutoff - interval '399 days'`);
    expect((await api.put('/api/settings', { accounting_retention_months: 0 }, { token: admin })).status).toBe(200);
    expect((await run()).history_deleted).toBe(0);
    expect(await ids()).toEqual(['old-1']);

    // A shorter retention takes more: 1 month keeps this month and the last one only.
    await session('two-months', s.username, `now() - interval '70 days'`, `now() - interval '69 days'`);
    expect((await api.put('/api/settings', { accounting_retention_months: 1 }, { token: admin })).status).toBe(200);
    expect((await run()).history_deleted).toBe(2);
    expect(await ids()).toEqual([]);
  });

  it('works in bounded batches: a run stops after its batches, the next one goes on', async () => {
    const s = await mkSub();
    for (let i = 0; i < 5; i++) {
      await session(
        `old-${i}`,
        s.username,
        `c.cutoff - interval '${50 + i} days'`,
        `c.cutoff - interval '${49 + i} days'`,
      );
    }
    const first = await purgeAccountingHistory(t.db, today, { months: 13, batch: 2, maxBatches: 2 });
    expect(first).toEqual({ cutoff: cutoff.slice(0, 10), deleted: 4 });
    expect(await ids()).toEqual(['old-0']);
    expect(await purgeAccountingHistory(t.db, today, { months: 13, batch: 2, maxBatches: 2 })).toMatchObject({
      deleted: 1,
    });
    expect(await ids()).toEqual([]);
  });

  it('deleting an open session still takes the subscriber offline (the delete trigger fires for open rows)', async () => {
    const s = await mkSub();
    await session('closed', s.username, `now() - interval '3 hours'`, `now() - interval '2 hours'`);
    await session('open', s.username, `now() - interval '1 hour'`, null, '100.64.8.8');
    await t.pool.query(`delete from radacct where acctuniqueid = 'closed'`);
    expect([(await sub(s.id)).isOnline, (await sub(s.id)).ipAddress]).toEqual([true, '100.64.8.8']);
    await t.pool.query(`delete from radacct where acctuniqueid = 'open'`);
    expect([(await sub(s.id)).isOnline, (await sub(s.id)).ipAddress]).toEqual([false, null]);
  });
});
