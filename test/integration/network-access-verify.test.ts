/**
 * A disconnect the NAS acknowledged whose session is still open in accounting a while later
 * (DISCONNECT_VERIFY_SECONDS, 1 s here instead of 60) is recorded as such and retried through the
 * router API; one whose Stop arrived is left alone.
 */
import { eq } from 'drizzle-orm';
import type { Auth } from '../../shared/auth/claims';
import { coaOutcomes, radacct } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import { NasSimulator } from '../sim/nas-simulator';
import { RouterOsSimulator } from '../sim/routeros-simulator';

const SECRET = 'nas-secret-v';
const API = { username: 'billing', password: 'api-pass-v' };
const admin: Auth = { managerId: 1, role: 'admin', resellerId: null, permissions: [], jti: 'test', exp: 4102444800 };

let t: TestApp;
let api: ReturnType<typeof client>;
let nasSim: NasSimulator;
let ros: RouterOsSimulator;
let resellerId: number;
let planId: number;
let seq = 0;

async function subscriber(username: string): Promise<number> {
  const res = await api.post(
    '/api/subscribers',
    { username, password: 'pw', service_id: planId, reseller_id: resellerId },
    { token: adminToken() },
  );
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function online(username: string): Promise<string> {
  const id = `v-${++seq}`;
  await t.db.insert(radacct).values({
    acctsessionid: id,
    acctuniqueid: `u-${id}`,
    username,
    nasipaddress: '127.0.0.1',
    framedipaddress: `100.64.8.${seq}`,
    acctstarttime: new Date(Date.now() - 3600_000),
    acctupdatetime: new Date(),
  });
  return id;
}

const disconnect = (id: number) =>
  t.app.broker.call('networkAccess.disconnect', { id }, { meta: { auth: admin } }) as Promise<{
    data: { outcome: string };
  }>;
const verifyRows = (username: string) =>
  t.db
    .select()
    .from(coaOutcomes)
    .where(eq(coaOutcomes.username, username))
    .then((rows) => rows.filter((r) => r.source === 'verify'));

beforeAll(async () => {
  Object.assign(process.env, { DISCONNECT_VERIFY_SECONDS: '1', DISCONNECT_VERIFY_CHECK_MS: '100' });
  t = await startTestApp();
  api = client(t.baseUrl);
  nasSim = await new NasSimulator({ secret: SECRET, latencyMs: 2, answer: () => 'ack' }).start();
  ros = await new RouterOsSimulator({ ...API, emptyReply: true }).start();
  const token = adminToken();
  resellerId = (await api.post('/api/resellers', { name: 'ver', balance: 1000, currency: 'USD' }, { token })).body.data
    .id;
  planId = (
    await api.post(
      '/api/services',
      { name: 'ver-plan', price: 10, duration_days: 30, currency: 'USD', rate_limit: '10M/10M' },
      { token },
    )
  ).body.data.id;
  await api.post(`/api/resellers/${resellerId}/service-limits`, { service_id: planId }, { token });
  const nas = await api.post(
    '/api/nas',
    {
      name: 'edge-v',
      ip_address: '127.0.0.1',
      secret: SECRET,
      coa_port: nasSim.port,
      api_port: ros.port,
      api_username: API.username,
      api_password: API.password,
    },
    { token },
  );
  expect(nas.status).toBe(201);
});

afterAll(async () => {
  delete process.env.DISCONNECT_VERIFY_SECONDS;
  delete process.env.DISCONNECT_VERIFY_CHECK_MS;
  await t?.close();
  await nasSim?.stop();
  await ros?.stop();
});

describe('acknowledged disconnects', () => {
  it('still open a while after the ACK: recorded (source verify) and removed through the router API', async () => {
    const id = await subscriber('stays@ver');
    const session = await online('stays@ver');
    ros.addSession({ name: 'stays@ver', address: '100.64.8.1' });
    expect((await disconnect(id)).data.outcome).toBe('disconnected');
    // The router said yes and did nothing: its session is there, accounting still open.
    const [row] = await waitFor('the verification record', async () => {
      const rows = await verifyRows('stays@ver');
      return rows.length ? rows : undefined;
    });
    expect(row).toMatchObject({ action: 'disconnect', outcome: 'kicked', subscriberId: id, eventId: null });
    expect(row.reason).toMatch(/^acknowledged \(outcome \d+\) but still open in accounting 1 s later$/);
    expect(row.sessions).toEqual([
      expect.objectContaining({
        session_id: session,
        outcome: 'kicked',
        via: 'api',
        detail: expect.stringMatching(/removed through the router API$/),
      }),
    ]);
    expect([...ros.sessions.values()].some((s) => s.name === 'stays@ver')).toBe(false);
    // Recorded once: later checks do not come back to it.
    await new Promise((r) => setTimeout(r, 500));
    expect(await verifyRows('stays@ver')).toHaveLength(1);
  });

  it('an IPv6-only session the router knows under another name: found by its delegated prefix and removed', async () => {
    // Before the router API looked sessions up by address, the retry asked for the subscriber's
    // name, found nothing and recorded offline while the session stayed up.
    const id = await subscriber('six-new@ver');
    const session = `v-${++seq}`;
    await t.pool.query(
      `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipv6prefix, delegatedipv6prefix,
                            acctstarttime, acctupdatetime)
       values ($1, $2, 'six-new@ver', '127.0.0.1', '2001:db8:81::/64', '2001:db8:8100::/56',
               now() - interval '1 hour', now())`,
      [session, `u-${session}`],
    );
    ros.addSession({ name: 'six-old@ver', ipv6Prefix: '2001:db8:81::/64', delegatedPrefix: '2001:db8:8100::/56' });
    expect((await disconnect(id)).data.outcome).toBe('disconnected');
    const [row] = await waitFor('the verification record', async () => {
      const rows = await verifyRows('six-new@ver');
      return rows.length ? rows : undefined;
    });
    expect(row).toMatchObject({ outcome: 'kicked', subscriberId: id });
    expect(row.sessions).toEqual([expect.objectContaining({ session_id: session, outcome: 'kicked', via: 'api' })]);
    expect([...ros.sessions.values()].some((s) => s.name === 'six-old@ver')).toBe(false);
  });

  it('the Stop arrived: nothing recorded; the router has no session: recorded offline (accounting missed its Stop)', async () => {
    const gone = await subscriber('gone@ver');
    const goneSession = await online('gone@ver');
    const ghost = await subscriber('ghosty@ver');
    await online('ghosty@ver');
    expect((await disconnect(gone)).data.outcome).toBe('disconnected');
    // The Stop right after the ACK: the check comes 1 s later, which the next disconnect may take on a loaded machine.
    await t.pool.query(`update radacct set acctstoptime = now() where acctsessionid = $1`, [goneSession]);
    expect((await disconnect(ghost)).data.outcome).toBe('disconnected');
    const [row] = await waitFor('the verification record', async () => {
      const rows = await verifyRows('ghosty@ver');
      return rows.length ? rows : undefined;
    });
    expect(row.outcome).toBe('offline');
    await new Promise((r) => setTimeout(r, 500));
    expect(await verifyRows('gone@ver')).toEqual([]);
  });
});
