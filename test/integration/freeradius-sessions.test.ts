/**
 * Ghost sessions with a real FreeRADIUS (deploy/freeradius, driven with radclient): Accounting-On and
 * Accounting-Off close every open session of the NAS that sends them (FreeRADIUS's stock
 * accounting-on/off query), and only that NAS's; is_online and the online filter follow through the
 * radacct trigger. Stale sessions (no update for 2 x accounting_interim_minutes + 1) are closed as
 * Stale-Session by closeStaleSessions.
 */
import { sql } from 'drizzle-orm';
import { closeStaleSessions } from '../../shared/access/stale-sessions';
import { rollupUsage } from '../../shared/access/usage-rollup';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { startFreeradius, type Radius } from '../helpers/freeradius';

const SECRET = 'radius-sessions-secret';
const OTHER_NAS = '10.77.0.1';

let t: TestApp;
let api: ReturnType<typeof client>;
let radius: Radius;
const admin = adminToken();
let reseller: number;
let plan: number;

let seq = 0;
async function mkSub() {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `gs${seq}@isp`, password: `pass-${seq}`, service_id: plan, reseller_id: reseller },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; username: string };
}

const start = (username: string, session: string, nas: string, ip: string) =>
  radius.acct(username, session, 'Start', { 'NAS-IP-Address': nas, 'Framed-IP-Address': ip });

const onlineIds = async (): Promise<number[]> => {
  const res = await api.get('/api/subscribers?status=online&per_page=100', { token: admin });
  expect(res.status).toBe(200);
  return (res.body.data as { id: number }[]).map((s) => s.id).sort((a, b) => a - b);
};

const openSessions = async (username: string) =>
  (
    await t.pool.query<{ n: number }>(
      'select count(*)::int n from radacct where username = $1 and acctstoptime is null',
      [username],
    )
  ).rows[0].n;

const savedInterval = process.env.USAGE_INTERVAL_SECONDS;

beforeAll(async () => {
  // The usage service (which also closes stale sessions) runs only when called: the test's own run.
  process.env.USAGE_INTERVAL_SECONDS = '0';
  t = await startTestApp();
  api = client(t.baseUrl);
  reseller = (
    await api.post('/api/resellers', { name: 'ghost shop', balance: 1000, currency: 'USD' }, { token: admin })
  ).body.data.id;
  plan = (
    await api.post(
      '/api/services',
      { name: 'ghost', price: 10, duration_days: 30, currency: 'USD', rate_limit: '10M/10M' },
      { token: admin },
    )
  ).body.data.id;
  await api.post(`/api/resellers/${reseller}/service-limits`, { service_id: plan }, { token: admin });
  // FreeRADIUS reads its clients from the nas table once, at start: the NASes exist first.
  for (const [name, ip] of [
    ['lab', '127.0.0.1'],
    ['edge', OTHER_NAS],
  ]) {
    expect((await api.post('/api/nas', { name, ip_address: ip, secret: SECRET }, { token: admin })).status).toBe(201);
  }
  radius = await startFreeradius(t, SECRET);
}, 60_000);

afterAll(async () => {
  if (radius) await radius.stop();
  if (t) await t.close();
  if (savedInterval === undefined) delete process.env.USAGE_INTERVAL_SECONDS;
  else process.env.USAGE_INTERVAL_SECONDS = savedInterval;
});

describe.each(['Accounting-On', 'Accounting-Off'])('%s', (status) => {
  it("closes every open session of the NAS that sends it, none of another NAS's; is_online and the online filter follow", async () => {
    const a = await mkSub();
    const b = await mkSub();
    const c = await mkSub();
    const tag = status === 'Accounting-On' ? 'on' : 'off';
    expect((await start(a.username, `${tag}-a`, '127.0.0.1', '100.64.1.1')).code).toBe('Accounting-Response');
    expect((await start(b.username, `${tag}-b`, '127.0.0.1', '100.64.1.2')).code).toBe('Accounting-Response');
    expect((await start(c.username, `${tag}-c`, OTHER_NAS, '100.64.1.3')).code).toBe('Accounting-Response');
    const before = await onlineIds();
    expect(before).toEqual(expect.arrayContaining([a.id, b.id, c.id]));

    // What a router sends after a reboot (On) or before a shutdown (Off): no user, no session.
    const res = await radius.request('acct', {
      'Acct-Status-Type': status,
      'NAS-IP-Address': '127.0.0.1',
      'Acct-Session-Id': '00000000',
    });
    expect(res.code).toBe('Accounting-Response');

    expect(await openSessions(a.username)).toBe(0);
    expect(await openSessions(b.username)).toBe(0);
    expect(await openSessions(c.username)).toBe(1);
    const rows = await t.pool.query<{ username: string; acctterminatecause: string; stopped: boolean }>(
      `select username, acctterminatecause, acctstoptime is not null stopped from radacct
        where acctsessionid = any($1) order by username`,
      [[`${tag}-a`, `${tag}-b`]],
    );
    expect(rows.rows).toEqual([
      { username: a.username, acctterminatecause: 'NAS-Reboot', stopped: true },
      { username: b.username, acctterminatecause: 'NAS-Reboot', stopped: true },
    ]);
    // The closed sessions' subscribers go offline at the usage rollup (every USAGE_ROLLUP_SECONDS).
    await rollupUsage(t.db);
    const online = await onlineIds();
    expect(online).not.toContain(a.id);
    expect(online).not.toContain(b.id);
    expect(online).toContain(c.id);
    const detail = (await api.get(`/api/subscribers/${a.id}`, { token: admin })).body.data;
    expect(detail.is_online).toBe(false);
    expect(detail.ip_address).toBeNull();

    // The other NAS's own Accounting-On closes its session too.
    await radius.request('acct', { 'Acct-Status-Type': status, 'NAS-IP-Address': OTHER_NAS });
    expect(await openSessions(c.username)).toBe(0);
    await rollupUsage(t.db);
    expect(await onlineIds()).not.toContain(c.id);
  });
});

describe('stale sessions', () => {
  it('closes as Stale-Session every open session with no update for 2 x accounting_interim_minutes + 1, set-based; fresh ones stay', async () => {
    const stale = await mkSub();
    const neverUpdated = await mkSub();
    const fresh = await mkSub();
    await start(stale.username, 'st-1', '127.0.0.1', '100.64.2.1');
    await radius.acct(stale.username, 'st-1', 'Interim-Update', {
      'Framed-IP-Address': '100.64.2.1',
      'Acct-Input-Octets': 100,
      'Acct-Output-Octets': 200,
    });
    await start(neverUpdated.username, 'st-2', '127.0.0.1', '100.64.2.2');
    await start(fresh.username, 'st-3', '127.0.0.1', '100.64.2.3');
    // Default interim 5 minutes: 11 minutes is the limit. Age two of them past it, one just under.
    await t.db.execute(sql`update radacct set acctupdatetime = now() - interval '12 minutes',
      acctstarttime = now() - interval '1 hour' where acctsessionid = 'st-1'`);
    await t.db.execute(sql`update radacct set acctstarttime = now() - interval '30 minutes', acctupdatetime = null
      where acctsessionid = 'st-2'`);
    await t.db.execute(sql`update radacct set acctupdatetime = now() - interval '10 minutes',
      acctstarttime = now() - interval '2 hours' where acctsessionid = 'st-3'`);
    expect(await onlineIds()).toEqual(expect.arrayContaining([stale.id, neverUpdated.id, fresh.id]));

    const closed = await closeStaleSessions(t.db);
    expect(closed.map((s) => s.username).sort()).toEqual([stale.username, neverUpdated.username].sort());

    const rows = await t.pool.query<{
      acctsessionid: string;
      acctterminatecause: string | null;
      stopped: boolean;
      session_time: number;
      octets: string;
    }>(
      `select acctsessionid, acctterminatecause, acctstoptime is not null stopped,
              acctsessiontime::int session_time, acctoutputoctets::text octets
         from radacct where acctsessionid in ('st-1', 'st-2', 'st-3') order by acctsessionid`,
    );
    expect(rows.rows[0]).toMatchObject({ acctsessionid: 'st-1', acctterminatecause: 'Stale-Session', stopped: true });
    expect(rows.rows[0].octets).toBe('200'); // the octets stay what the last update said
    // The stop time is the last word heard from the session, not the sweep's time.
    expect(rows.rows[0].session_time).toBe(48 * 60);
    expect(rows.rows[1]).toMatchObject({ acctsessionid: 'st-2', acctterminatecause: 'Stale-Session', stopped: true });
    expect(rows.rows[1].session_time).toBe(0);
    expect(rows.rows[2]).toMatchObject({ acctsessionid: 'st-3', acctterminatecause: null, stopped: false });

    const online = await onlineIds();
    expect(online).not.toContain(stale.id);
    expect(online).not.toContain(neverUpdated.id);
    expect(online).toContain(fresh.id);

    // A later Stop for a closed session matches no open row and changes nothing; a second run closes nothing.
    await radius.acct(stale.username, 'st-1', 'Stop', { 'Acct-Input-Octets': 100, 'Acct-Output-Octets': 200 });
    expect(await closeStaleSessions(t.db)).toEqual([]);

    // The setting moves the limit: 1 minute interim -> 3 minutes.
    expect((await api.put('/api/settings', { accounting_interim_minutes: 1 }, { token: admin })).status).toBe(200);
    const closedNow = await closeStaleSessions(t.db);
    expect(closedNow.map((s) => s.username)).toEqual([fresh.username]);
    expect(await onlineIds()).not.toContain(fresh.id);
    await api.put('/api/settings', { accounting_interim_minutes: 5 }, { token: admin });
  });
});
