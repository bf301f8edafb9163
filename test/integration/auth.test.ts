import jwt from 'jsonwebtoken';
import { eq } from 'drizzle-orm';
import { hashPassword } from '../../shared/auth/passwords';
import { managers, tokenBlacklist } from '../../shared/db/schema';
import { adminToken, client, startTestApp, token, TEST_JWT_SECRET, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  await t.db
    .insert(managers)
    .values({ username: 'boss', passwordHash: await hashPassword('correct horse'), role: 'admin' });
});
afterAll(() => t.close());

describe('JWT on every /api route', () => {
  const claims = { sub: '1', role: 'admin', permissions: [], jti: 'j-1' };

  it('401 without a token', async () => {
    const res = await api.get('/api/services');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, message: 'missing bearer token' });
  });

  it('401 with a malformed header or garbage token', async () => {
    expect((await api.get('/api/services', { headers: { authorization: 'Token abc' } })).status).toBe(401);
    const res = await api.get('/api/services', { token: 'not.a.jwt' });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('invalid token');
  });

  it('401 for alg none', async () => {
    const unsigned = jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) + 60 }, '', { algorithm: 'none' });
    const res = await api.get('/api/services', { token: unsigned });
    expect(res.status).toBe(401);
  });

  it('401 for a wrong signature', async () => {
    const forged = jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) + 60 }, 'another-secret', {
      algorithm: 'HS256',
    });
    expect((await api.get('/api/services', { token: forged })).status).toBe(401);
  });

  it('401 for an expired token', async () => {
    const expired = jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 }, TEST_JWT_SECRET, {
      algorithm: 'HS256',
    });
    const res = await api.get('/api/services', { token: expired });
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('token expired');
  });

  it('401 for claims of the wrong shape', async () => {
    const noJti = jwt.sign(
      { sub: '1', role: 'admin', permissions: [], exp: Math.floor(Date.now() / 1000) + 60 },
      TEST_JWT_SECRET,
    );
    const badRole = jwt.sign({ ...claims, role: 'root', exp: Math.floor(Date.now() / 1000) + 60 }, TEST_JWT_SECRET);
    const resellerWithoutId = jwt.sign(
      { ...claims, role: 'reseller', exp: Math.floor(Date.now() / 1000) + 60 },
      TEST_JWT_SECRET,
    );
    for (const bad of [noJti, badRole, resellerWithoutId])
      expect((await api.get('/api/services', { token: bad })).status).toBe(401);
  });

  it('200 with a valid token', async () => {
    const res = await api.get('/api/services', { token: adminToken() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [], pagination: { page: 1, limit: 50, total: 0 } });
  });
});

describe('login and logout', () => {
  it('issues a token for the right password and refuses a wrong one', async () => {
    const bad = await api.post('/api/auth/login', { username: 'boss', password: 'wrong' });
    expect(bad.status).toBe(401);
    expect(bad.body.success).toBe(false);
    const unknown = await api.post('/api/auth/login', { username: 'nobody', password: 'whatever' });
    expect(unknown.status).toBe(401);

    const ok = await api.post('/api/auth/login', { username: 'boss', password: 'correct horse' });
    expect(ok.status).toBe(200);
    expect(ok.body.success).toBe(true);
    expect(typeof ok.body.data.token).toBe('string');
    expect(new Date(ok.body.data.expires_at).getTime()).toBeGreaterThan(Date.now());
    const decoded = jwt.verify(ok.body.data.token, TEST_JWT_SECRET) as Record<string, unknown>;
    expect(decoded).toMatchObject({ role: 'admin', permissions: [] });
    expect(decoded.reseller_id).toBeUndefined();
    expect((await api.get('/api/services', { token: ok.body.data.token })).status).toBe(200);
  });

  it('400 when a login field is missing', async () => {
    const res = await api.post('/api/auth/login', { username: 'boss' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ success: false, message: 'password is required' });
  });

  it('logout blacklists the jti and the token then gets 401', async () => {
    const { body } = await api.post('/api/auth/login', { username: 'boss', password: 'correct horse' });
    const tok = body.data.token as string;
    const out = await api.post('/api/auth/logout', {}, { token: tok });
    expect(out.status).toBe(200);
    const { jti } = jwt.decode(tok) as { jti: string };
    const rows = await t.db.select().from(tokenBlacklist).where(eq(tokenBlacklist.jti, jti));
    expect(rows).toHaveLength(1);
    const after = await api.get('/api/services', { token: tok });
    expect(after.status).toBe(401);
    expect(after.body.message).toBe('token revoked');
    // Another token of the same manager still works.
    expect((await api.get('/api/services', { token: token('admin') })).status).toBe(200);
  });

  it('stores manager passwords with a slow hash, never in clear', async () => {
    const [row] = await t.db.select().from(managers).where(eq(managers.username, 'boss'));
    expect(row.passwordHash).toMatch(/^\$2[aby]\$1[01]\$/);
  });
});
