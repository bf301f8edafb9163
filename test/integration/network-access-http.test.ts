/**
 * The network-access endpoints over HTTP, through the gateway that learns them from the service
 * registry: paths, validation of body and query, the envelope, and their OpenAPI entries.
 */
import { radacct } from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { NasSimulator } from '../sim/nas-simulator';
import { RouterOsSimulator } from '../sim/routeros-simulator';

const SECRET = 'http-nas-secret';
const API = { username: 'billing', password: 'api-pass-2' };

let t: TestApp;
let api: ReturnType<typeof client>;
let nasSim: NasSimulator;
let rosSim: RouterOsSimulator;
let subscriberId: number;
let resellerId: number;
const admin = () => ({ token: adminToken() });

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  nasSim = await new NasSimulator({ secret: SECRET }).start();
  rosSim = await new RouterOsSimulator({ ...API, tickMs: 5, pingRtts: { '100.64.7.7': [2, 4] } }).start();
  resellerId = (await api.post('/api/resellers', { name: 'r', balance: 100, currency: 'USD' }, admin())).body.data.id;
  const plan = (await api.post('/api/services', { name: 'p', price: 1, duration_days: 30, currency: 'USD' }, admin()))
    .body.data.id;
  await api.post(`/api/resellers/${resellerId}/service-limits`, { service_id: plan }, admin());
  expect(
    (
      await api.post(
        '/api/nas',
        {
          name: 'edge',
          ip_address: '127.0.0.1',
          secret: SECRET,
          coa_port: nasSim.port,
          api_port: rosSim.port,
          api_username: API.username,
          api_password: API.password,
        },
        admin(),
      )
    ).status,
  ).toBe(201);
  subscriberId = (
    await api.post(
      '/api/subscribers',
      { username: 'web@isp', password: 'pw', service_id: plan, reseller_id: resellerId },
      admin(),
    )
  ).body.data.id;
});

afterAll(async () => {
  await t?.close();
  await nasSim?.stop();
  await rosSim?.stop();
});

it('POST /api/subscribers/:id/disconnect: 200 offline, then 200 disconnected once a session is live', async () => {
  const offline = await api.post(`/api/subscribers/${subscriberId}/disconnect`, {}, admin());
  expect(offline.status).toBe(200);
  expect(offline.body).toEqual({
    success: true,
    data: {
      subscriber_id: subscriberId,
      username: 'web@isp',
      outcome: 'offline',
      message: 'subscriber is offline',
      sessions: [],
    },
  });
  await t.db.insert(radacct).values({
    acctsessionid: 'web-1',
    acctuniqueid: 'u-web-1',
    username: 'web@isp',
    nasipaddress: '127.0.0.1',
    framedipaddress: '100.64.7.7',
    acctstarttime: new Date(),
  });
  const res = await api.post(`/api/subscribers/${subscriberId}/disconnect`, undefined, admin());
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ outcome: 'disconnected', sessions: [{ session_id: 'web-1', via: 'coa' }] });
});

it('disconnect: 401 without a token, 403 without the permission, 404 unknown, 400 on a body field', async () => {
  expect((await api.post(`/api/subscribers/${subscriberId}/disconnect`, {})).status).toBe(401);
  expect(
    (
      await api.post(
        `/api/subscribers/${subscriberId}/disconnect`,
        {},
        { token: token('reseller', { resellerId, permissions: ['subscribers.view'] }) },
      )
    ).status,
  ).toBe(403);
  const missing = await api.post('/api/subscribers/999999/disconnect', {}, admin());
  expect(missing.status).toBe(404);
  expect(missing.body).toEqual({ success: false, message: 'subscriber not found' });
  expect((await api.post(`/api/subscribers/${subscriberId}/disconnect`, { force: true }, admin())).status).toBe(400);
});

it('POST /api/subscribers/:id/ping with { count, size }; bad values are 400 naming the field', async () => {
  const res = await api.post(`/api/subscribers/${subscriberId}/ping`, { count: 2, size: 100 }, admin());
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    address: '100.64.7.7',
    sent: 2,
    received: 2,
    loss_percent: 0,
    min_ms: 2,
    max_ms: 4,
  });
  for (const body of [{ count: 0 }, { count: 21 }, { size: 10 }, { count: 'x' }]) {
    const bad = await api.post(`/api/subscribers/${subscriberId}/ping`, body, admin());
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(Object.keys(body)[0]);
  }
});

it('GET /api/subscribers/:id/torch?duration= (max 10)', async () => {
  rosSim.options.torch = {
    '<pppoe-web@isp>': [
      { protocol: 'udp', src: '9.9.9.9', srcPort: 443, dst: '100.64.7.7', dstPort: 6000, tx: 64_000, rx: 8_000 },
    ],
  };
  const res = await api.get(`/api/subscribers/${subscriberId}/torch?duration=1`, admin());
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({
    interface: '<pppoe-web@isp>',
    samples: 1,
    download_bps: 64_000,
    upload_bps: 8_000,
  });
  const tooLong = await api.get(`/api/subscribers/${subscriberId}/torch?duration=11`, admin());
  expect(tooLong.status).toBe(400);
  expect(tooLong.body.message).toMatch(/duration/);
});

it('GET /api/subscribers/:id/bandwidth', async () => {
  const res = await api.get(`/api/subscribers/${subscriberId}/bandwidth`, admin());
  expect(res.status).toBe(200);
  expect(res.body.data.last_24h).toHaveLength(24);
  expect(res.body.data.last_30d).toHaveLength(30);
  expect(res.body.data.sessions[0]).toMatchObject({ session_id: 'web-1', online: true });
});

it('the OpenAPI document shows each endpoint with its permission and response data', async () => {
  const doc = (await api.get('/api/openapi.json')).body;
  const ops = {
    disconnect: doc.paths['/api/subscribers/{id}/disconnect'].post,
    ping: doc.paths['/api/subscribers/{id}/ping'].post,
    torch: doc.paths['/api/subscribers/{id}/torch'].get,
    bandwidth: doc.paths['/api/subscribers/{id}/bandwidth'].get,
  };
  expect(ops.disconnect['x-permission']).toBe('subscribers.disconnect');
  expect(ops.ping['x-permission']).toBe('subscribers.ping');
  expect(ops.torch['x-permission']).toBe('subscribers.torch');
  expect(ops.bandwidth['x-permission']).toBe('subscribers.view_graph');
  const data = (op: {
    responses: Record<
      string,
      { content: Record<string, { schema: { properties: { data: { properties: Record<string, unknown> } } } }> }
    >;
  }) => Object.keys(op.responses['200'].content['application/json'].schema.properties.data.properties);
  expect(data(ops.disconnect)).toEqual(expect.arrayContaining(['outcome', 'message', 'sessions']));
  expect(data(ops.ping)).toEqual(
    expect.arrayContaining(['sent', 'received', 'loss_percent', 'min_ms', 'avg_ms', 'max_ms', 'raw']),
  );
  expect(data(ops.torch)).toEqual(expect.arrayContaining(['download_bps', 'upload_bps', 'connections']));
  expect(data(ops.bandwidth)).toEqual(expect.arrayContaining(['last_24h', 'last_30d', 'sessions']));
});
