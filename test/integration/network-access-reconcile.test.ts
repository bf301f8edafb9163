/**
 * Reconciliation of accounting with the router (POST /api/nas/:id/reconcile) against the RouterOS
 * API simulator: ghosts closed, sessions that should not exist removed, dry run changing nothing,
 * the metric, the refusals, and the periodic run (reconcile_minutes).
 */
import { rollupUsage } from '../../shared/access/usage-rollup';
import { sql } from 'drizzle-orm';
import { radacct } from '../../shared/db/schema';
import { registry } from '../../shared/metrics';
import { saveSettings } from '../../shared/settings';
import { parseUptime } from '../../services/network-access/reconcile';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import { RouterOsSimulator } from '../sim/routeros-simulator';

const API = { username: 'billing', password: 'api-pass-r' };

let t: TestApp;
let api: ReturnType<typeof client>;
let ros: RouterOsSimulator;
let resellerId: number;
let planId: number;
let nasId: number;
let bareNasId: number;
const admin = adminToken();

async function subscriber(username: string): Promise<number> {
  const res = await api.post(
    '/api/subscribers',
    { username, password: 'pw', service_id: planId, reseller_id: resellerId },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data.id;
}

let seq = 0;
async function open(username: string, nasIp = '127.0.0.1'): Promise<string> {
  const id = `rc-${++seq}`;
  await t.db.insert(radacct).values({
    acctsessionid: id,
    acctuniqueid: `u-${id}`,
    username,
    nasipaddress: nasIp,
    framedipaddress: `100.64.5.${seq}`,
    acctstarttime: new Date(Date.now() - 3600_000),
    acctupdatetime: new Date(Date.now() - 60_000),
    acctoutputoctets: 1234,
  });
  return id;
}

const isOpen = async (session: string) =>
  (
    await t.pool.query<{ open: boolean; cause: string | null }>(
      'select acctstoptime is null as open, acctterminatecause as cause from radacct where acctsessionid = $1',
      [session],
    )
  ).rows[0];

const mismatchCount = async (kind: string) => {
  const metric = (await registry.getSingleMetric('session_mismatch_total')?.get()) as
    { values: { labels: Record<string, string>; value: number }[] } | undefined;
  return metric?.values.find((v) => v.labels.kind === kind && v.labels.nas === 'edge-r')?.value ?? 0;
};

const reconcile = (id: number, body: Record<string, unknown> = {}, tok = admin) =>
  api.post(`/api/nas/${id}/reconcile`, body, { token: tok });

beforeAll(async () => {
  process.env.RECONCILE_CHECK_MS = '200';
  t = await startTestApp();
  api = client(t.baseUrl);
  ros = await new RouterOsSimulator({ ...API, emptyReply: true }).start();
  resellerId = (await api.post('/api/resellers', { name: 'rec', balance: 1000, currency: 'USD' }, { token: admin }))
    .body.data.id;
  planId = (
    await api.post(
      '/api/services',
      { name: 'rec-plan', price: 10, duration_days: 30, currency: 'USD', rate_limit: '10M/10M' },
      { token: admin },
    )
  ).body.data.id;
  await api.post(`/api/resellers/${resellerId}/service-limits`, { service_id: planId }, { token: admin });
  const nas = await api.post(
    '/api/nas',
    {
      name: 'edge-r',
      ip_address: '127.0.0.1',
      secret: 'nas-secret-r',
      api_port: ros.port,
      api_username: API.username,
      api_password: API.password,
    },
    { token: admin },
  );
  expect(nas.status).toBe(201);
  nasId = nas.body.data.id;
  bareNasId = (
    await api.post('/api/nas', { name: 'bare', ip_address: '10.99.0.1', secret: 'nas-secret-r' }, { token: admin })
  ).body.data.id;
});

afterAll(async () => {
  delete process.env.RECONCILE_CHECK_MS;
  await t?.close();
  await ros?.stop();
});

describe('POST /api/nas/:id/reconcile', () => {
  it('closes ghosts, removes sessions that should not exist, keeps the rest; a dry run reports the same and changes nothing', async () => {
    // fine: online on both sides. ghost: open in accounting only. stray: on the router only.
    // young: on the router only, 30 s old (its Start may be in flight). inactive, blocked, deleted: on both.
    await subscriber('fine@rec');
    await subscriber('ghost@rec');
    await subscriber('stray@rec');
    await subscriber('young@rec');
    const inactive = await subscriber('inactive@rec');
    const blocked = await subscriber('blocked@rec');
    const deleted = await subscriber('deleted@rec');
    const fineSession = await open('fine@rec');
    const ghostSession = await open('ghost@rec');
    const otherNasSession = await open('ghost@rec', '10.99.0.1'); // another NAS: not this router's business
    for (const name of ['inactive@rec', 'blocked@rec', 'deleted@rec']) await open(name);
    expect((await api.post(`/api/subscribers/${inactive}/deactivate`, {}, { token: admin })).status).toBe(200);
    await t.db.execute(sql`update subscribers set blocked_reason = 'overdue' where id = ${blocked}`);
    expect((await api.del(`/api/subscribers/${deleted}`, { token: admin })).status).toBe(200);
    for (const name of ['fine@rec', 'stray@rec', 'inactive@rec', 'blocked@rec', 'deleted@rec', 'unknown@rec'])
      ros.addSession({ name, address: '100.64.6.1' });
    ros.addSession({ name: 'young@rec', address: '100.64.6.2', uptime: '30s' });

    // Dry run: the lists, nothing changed.
    const dry = await reconcile(nasId, { dry_run: true });
    expect(dry.status).toBe(200);
    const d = dry.body.data;
    expect(d.dry_run).toBe(true);
    expect(d.nas).toEqual({ id: nasId, name: 'edge-r', ip_address: '127.0.0.1' });
    expect(d.router_sessions).toBe(7);
    expect(d.open_sessions).toBeGreaterThanOrEqual(5);
    expect(d.ghosts.map((g: { username: string }) => g.username)).toEqual(['ghost@rec']);
    expect(d.ghosts[0]).toMatchObject({ session_id: ghostSession, closed: false });
    const reasons = Object.fromEntries(
      d.unwanted.map((u: { username: string; reason: string }) => [u.username, u.reason]),
    );
    expect(reasons).toEqual({
      'stray@rec': 'not_in_accounting',
      'inactive@rec': 'inactive',
      'blocked@rec': 'blocked',
      'deleted@rec': 'deleted',
      'unknown@rec': 'deleted',
    });
    expect(d.unwanted.every((u: { removed: boolean }) => !u.removed)).toBe(true);
    expect((await isOpen(ghostSession)).open).toBe(true);
    expect(ros.sessions.size).toBe(7);
    expect(await mismatchCount('ghost')).toBe(1);
    expect(await mismatchCount('not_in_accounting')).toBe(1);

    // For real.
    const res = await reconcile(nasId, { dry_run: false });
    expect(res.status).toBe(200);
    const r = res.body.data;
    expect(r.dry_run).toBe(false);
    expect(r.ghosts).toEqual([
      expect.objectContaining({ username: 'ghost@rec', session_id: ghostSession, closed: true }),
    ]);
    expect(r.unwanted).toHaveLength(5);
    expect(r.unwanted.every((u: { removed: boolean }) => u.removed)).toBe(true);
    expect(await isOpen(ghostSession)).toEqual({ open: false, cause: 'Lost-Service' });
    expect((await isOpen(otherNasSession)).open).toBe(true);
    expect((await isOpen(fineSession)).open).toBe(true);
    expect([...ros.sessions.values()].map((s) => s.name).sort()).toEqual(['fine@rec', 'young@rec']);
    // The ghost's subscriber is not offline: the other NAS's session is still open (the run rolled usage up).
    const onlineOf = async (username: string) =>
      (await t.pool.query<{ is_online: boolean }>('select is_online from subscribers where username = $1', [username]))
        .rows[0].is_online;
    expect(await onlineOf('ghost@rec')).toBe(true);
    await t.pool.query(`update radacct set acctstoptime = now() where acctsessionid = $1`, [otherNasSession]);
    await rollupUsage(t.db);
    expect(await onlineOf('ghost@rec')).toBe(false);
    expect(await mismatchCount('ghost')).toBe(2);

    // The router sends the Stop of each session it removed (here, by hand); then a second run finds
    // nothing left to do. Without those Stops, the next run would close them as ghosts.
    await t.pool.query(
      `update radacct set acctstoptime = now(), acctterminatecause = 'Admin-Reset'
        where acctstoptime is null and username = any($1)`,
      [['inactive@rec', 'blocked@rec', 'deleted@rec']],
    );
    const again = (await reconcile(nasId)).body.data;
    expect(again.ghosts).toEqual([]);
    expect(again.unwanted).toEqual([]);
  });

  it('keeps a blocked subscriber online in walled_garden mode (it belongs in the garden)', async () => {
    const id = await subscriber('garden@rec');
    await open('garden@rec');
    await t.db.execute(sql`update subscribers set blocked_reason = 'expired' where id = ${id}`);
    ros.addSession({ name: 'garden@rec', address: '100.64.6.9' });
    await saveSettings(t.db, { blocked_access: 'walled_garden' });
    try {
      const r = (await reconcile(nasId, { dry_run: true })).body.data;
      expect(r.unwanted.map((u: { username: string }) => u.username)).not.toContain('garden@rec');
    } finally {
      await saveSettings(t.db, { blocked_access: 'reject' });
    }
    const r = (await reconcile(nasId, { dry_run: true })).body.data;
    expect(r.unwanted).toEqual([expect.objectContaining({ username: 'garden@rec', reason: 'blocked' })]);
    await reconcile(nasId);
  });

  it('IPv6-only sessions (no IPv4 on either side): kept when on both, a ghost reported with its IPv6 address, a stray removed', async () => {
    await subscriber('v6fine@rec');
    await subscriber('v6ghost@rec');
    const v6 = async (username: string, n: number, v6: { address?: string; delegated?: string }) => {
      const id = `rc-${++seq}`;
      await t.pool.query(
        `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipv6address, framedipv6prefix,
                              delegatedipv6prefix, acctstarttime, acctupdatetime)
         values ($1, $2, $3, '127.0.0.1', $4, $5, $6, now() - interval '1 hour', now() - interval '1 minute')`,
        [id, `u-${id}`, username, v6.address ?? null, `2001:db8:${n}::/64`, v6.delegated ?? null],
      );
      return id;
    };
    const fine = await v6('v6fine@rec', 71, { address: '2001:db8:71::2' });
    const ghost = await v6('v6ghost@rec', 72, { address: '2001:db8:72::2' });
    const pdOnlyGhost = await v6('v6ghost@rec', 73, { delegated: '2001:db8:7300::/56' });
    ros.addSession({ name: 'v6fine@rec', ipv6Prefix: '2001:db8:71::/64' });
    ros.addSession({ name: 'v6stray@rec', ipv6Prefix: '2001:db8:74::/64', delegatedPrefix: '2001:db8:7400::/56' });

    const r = (await reconcile(nasId)).body.data;
    const ghosts = r.ghosts.filter((g: { username: string }) => g.username.startsWith('v6'));
    expect(ghosts).toEqual([
      expect.objectContaining({ session_id: ghost, ip_address: '2001:db8:72::2', closed: true }),
      expect.objectContaining({ session_id: pdOnlyGhost, ip_address: '2001:db8:73::/64', closed: true }),
    ]);
    const unwanted = r.unwanted.filter((u: { username: string }) => u.username.startsWith('v6'));
    expect(unwanted).toEqual([
      expect.objectContaining({ username: 'v6stray@rec', address: null, reason: 'deleted', removed: true }),
    ]);
    expect((await isOpen(fine)).open).toBe(true);
    expect([...ros.sessions.values()].map((s) => s.name)).toContain('v6fine@rec');
    expect([...ros.sessions.values()].map((s) => s.name)).not.toContain('v6stray@rec');
  });

  it('refuses: 404 for an unknown NAS, 409 without API credentials, 403 for a reseller, 400 for a bad dry_run; 500 names the API failure', async () => {
    expect((await reconcile(999_999)).status).toBe(404);
    const bare = await reconcile(bareNasId);
    expect(bare.status).toBe(409);
    expect(bare.body.message).toBe('access server bare has no API credentials');
    expect((await reconcile(nasId, {}, token('reseller', { resellerId }))).status).toBe(403);
    const bad = await reconcile(nasId, { dry_run: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/dry_run/);

    const down = await new RouterOsSimulator({ username: 'x', password: 'y' }).start();
    const port = down.port;
    await down.stop();
    // A router whose API port is closed (loopback only: the port the simulator had).
    const dead = await api.post(
      '/api/nas',
      {
        name: 'dead',
        ip_address: '127.0.0.2',
        secret: 'nas-secret-r',
        api_port: port,
        api_username: 'x',
        api_password: 'y',
      },
      { token: admin },
    );
    expect(dead.status).toBe(201);
    const failed = await reconcile(dead.body.data.id);
    expect(failed.status).toBe(500);
    expect(failed.body.message).toMatch(/^access server API failed \(connect\)/);
  });

  it('runs by itself every reconcile_minutes (0 = never)', async () => {
    await subscriber('periodic@rec');
    const session = await open('periodic@rec');
    await new Promise((r) => setTimeout(r, 600));
    expect((await isOpen(session)).open).toBe(true); // default 0: never
    // The periodic run counts minutes from the service's start (or its last run): make one due now.
    const svc = t.app.broker.getLocalService('networkAccess') as unknown as { clients: { lastReconcile: number } };
    svc.clients.lastReconcile = 0;
    await saveSettings(t.db, { reconcile_minutes: 1 });
    try {
      await waitFor('the periodic reconciliation', async () => !(await isOpen(session)).open, 10_000);
      expect((await isOpen(session)).cause).toBe('Lost-Service');
    } finally {
      await saveSettings(t.db, { reconcile_minutes: 0 });
    }
  });
});

describe('parseUptime', () => {
  it('reads the forms RouterOS prints', () => {
    expect(parseUptime('30s')).toBe(30);
    expect(parseUptime('1h')).toBe(3600);
    expect(parseUptime('1w2d3h4m5s')).toBe(604_800 + 2 * 86_400 + 3 * 3600 + 4 * 60 + 5);
    expect(parseUptime('00:04:05')).toBe(245);
    expect(parseUptime('2d03:04:05')).toBe(2 * 86_400 + 3 * 3600 + 245);
    expect(parseUptime('1m30s500ms')).toBe(90);
    expect(parseUptime('soon')).toBeNull();
    expect(parseUptime(undefined)).toBeNull();
  });
});
