/**
 * Self-care security (issue 40, docs/self-care.md, threat model): no subscriber reaches another's
 * data by any id it can name; tokens do not cross between /api/my and the rest (walked over every
 * route of the OpenAPI document); no password or code in an answer; limits hold under bursts.
 */
import { eq } from 'drizzle-orm';
import { selfCareCodes } from '../../shared/db/schema';
import { http } from '../helpers/app';
import { admin, ChatDouble, selfCareWorld, type SelfCareWorld } from './self-care-fixtures';

let w: SelfCareWorld;
let chat: ChatDouble;
let alice: { id: number; username: string; password: string };
let bob: { id: number; username: string; password: string };
let aliceTok: string;
let bobInvoice: number;
let apiKey: string;
let routes: { method: string; path: string; security: string }[];

/** A concrete path: every `{param}` filled with `id`. */
const fill = (path: string, id: number) => path.replace(/\{[a-z_]+\}/g, String(id));

beforeAll(async () => {
  w = await selfCareWorld({ LOGIN_FAILURES_PER_USERNAME: '3', LOGIN_FAILURES_PER_ADDRESS: '1000' });
  chat = new ChatDouble();
  await w.setSettings({
    messaging_provider: 'telegram',
    telegram_bot_token: '123:abc',
    telegram_base_url: await chat.start(),
    allow_private_targets: true,
    self_care_code_sign_in: true,
  });
  alice = await w.mkSub({ phone: '5553001' });
  bob = await w.mkSub({ phone: '5553002' });
  aliceTok = await w.signIn(alice.username, alice.password);
  const inv = await w.api.post(
    '/api/invoices',
    { subscriber_id: bob.id, items: [{ description: 'Bob only', qty: 1, unit_price: 9 }] },
    { token: admin },
  );
  bobInvoice = inv.body.data.id;
  const key = await w.api.post('/api/api-keys', { name: 'full', full: true }, { token: admin });
  expect(key.status).toBe(201);
  apiKey = key.body.data.key;
  const doc = (await w.api.get('/api/openapi.json')).body as {
    paths: Record<string, Record<string, { security: Record<string, unknown>[] }>>;
  };
  routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      security: Object.keys(op.security[0] ?? {})[0] ?? 'none',
    })),
  );
});
afterAll(async () => {
  await chat?.stop();
  await w?.t.close();
});

describe('scope', () => {
  it("every /api/my route with an id answers not found for bob's records and bob's own id", async () => {
    const withId = routes.filter((r) => r.security === 'subscriber' && r.path.includes('{'));
    expect(withId.length).toBeGreaterThanOrEqual(3);
    for (const r of withId) {
      for (const id of [bobInvoice, bob.id]) {
        const res = await http(w.t.baseUrl, r.method, fill(r.path, id), {
          token: aliceTok,
          ...(r.method === 'GET' ? {} : { body: {} }),
        });
        expect([r.method, r.path, id, res.status]).toEqual([r.method, r.path, id, 404]);
        expect(res.text).not.toContain('Bob only');
      }
    }
  });

  it('no request field names a subscriber: one given changes nothing, and every read is alice’s', async () => {
    for (const query of [`subscriber_id=${bob.id}`, `id=${bob.id}`, `username=${bob.username}`]) {
      const res = await w.api.get(`/api/my/invoices?${query}`, { token: aliceTok });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    }
    const put = await w.api.put('/api/my/account', { auto_renew: true, id: bob.id }, { token: aliceTok });
    expect(put.status).toBe(400);
    const reads = routes.filter((r) => r.security === 'subscriber' && r.method === 'GET' && !r.path.includes('{'));
    for (const r of reads) {
      const res = await w.api.get(r.path.replace('change-plan', `change-plan?service_id=${w.plan}`), {
        token: aliceTok,
      });
      expect(res.text).not.toContain(bob.username);
      expect(res.text).not.toContain('Bob only');
    }
  });
});

describe('tokens do not cross', () => {
  it('no manager token or API key works on any /api/my route', async () => {
    const mine = routes.filter((r) => r.security === 'subscriber');
    expect(mine.length).toBeGreaterThanOrEqual(15);
    for (const r of mine) {
      for (const bearer of [admin, apiKey]) {
        const res = await http(w.t.baseUrl, r.method, fill(r.path, 1), {
          token: bearer,
          ...(r.method === 'GET' ? {} : { body: {} }),
        });
        expect([r.method, r.path, res.status]).toEqual([r.method, r.path, 401]);
      }
    }
  });

  it('a subscriber token works on no other route', async () => {
    const others = routes.filter((r) => r.security === 'bearer');
    expect(others.length).toBeGreaterThan(50);
    for (const r of others) {
      const res = await http(w.t.baseUrl, r.method, fill(r.path, alice.id), {
        token: aliceTok,
        ...(r.method === 'GET' ? {} : { body: {} }),
      });
      expect([r.method, r.path, res.status]).toEqual([r.method, r.path, 401]);
    }
  });

  it('every /api/my route but sign-in needs the subscriber token', async () => {
    const open = routes.filter((r) => r.path.startsWith('/api/my') && r.security !== 'subscriber').map((r) => r.path);
    expect(open.sort()).toEqual(['/api/my/login', '/api/my/login/code', '/api/my/login/code/verify']);
  });
});

describe('no secret in an answer', () => {
  it('no /api/my read carries the PPPoE password', async () => {
    for (const r of routes.filter((x) => x.security === 'subscriber' && x.method === 'GET' && !x.path.includes('{'))) {
      const res = await w.api.get(r.path, { token: aliceTok });
      expect(res.text).not.toContain(alice.password);
    }
  });
});

describe('bursts', () => {
  it('20 concurrent wrong codes: no more checked than the username limit, and the code survives for its owner', async () => {
    await w.api.post('/api/my/login/code', { username: bob.username });
    const code = await chat.codeFor('5553002');
    const wrong = code === '000000' ? '111111' : '000000';
    const burst = await Promise.all(
      Array.from({ length: 20 }, () =>
        w.api.post('/api/my/login/code/verify', { username: bob.username, code: wrong }),
      ),
    );
    expect(burst.filter((r) => r.status === 401)).toHaveLength(3);
    expect(burst.filter((r) => r.status === 429)).toHaveLength(17);
    const [row] = await w.t.db.select().from(selfCareCodes).where(eq(selfCareCodes.subscriberId, bob.id));
    expect(row.tries).toBe(3);
  });

  it('concurrent right codes sign in once', async () => {
    const carol = await w.mkSub({ phone: '5553003' });
    await w.api.post('/api/my/login/code', { username: carol.username });
    const code = await chat.codeFor('5553003');
    const burst = await Promise.all(
      Array.from({ length: 3 }, () => w.api.post('/api/my/login/code/verify', { username: carol.username, code })),
    );
    expect(burst.map((r) => r.status).sort()).toEqual([200, 401, 401]);
  });
});
