/**
 * Failed sign-ins are limited per username and per address (429 with Retry-After), recorded in the
 * audit trail, and answered alike whether the username exists (docs/security.md).
 */
import { eq } from 'drizzle-orm';
import { auditLog } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
let aliceId: number;

beforeAll(async () => {
  // 20 s: under heavy load seven bcrypt sign-ins took 8.4 s, and the first failures aged out of a 6 s window.
  t = await startTestApp({
    env: { LOGIN_FAILURES_PER_USERNAME: '3', LOGIN_FAILURES_PER_ADDRESS: '6', LOGIN_LOCK_SECONDS: '20' },
  });
  api = client(t.baseUrl);
  const created = await api.post(
    '/api/managers',
    { username: 'alice', password: 'long-enough-1', role: 'admin' },
    { token: adminToken() },
  );
  expect(created.status).toBe(201);
  aliceId = created.body.data.id;
});
afterAll(() => t?.close());

const login = (username: string, password: string) => api.post('/api/auth/login', { username, password });

describe('sign-in limits', () => {
  it('per username, alike for a username that exists and one that does not; per address; then over', async () => {
    for (const name of ['alice', 'nobody']) {
      for (let i = 0; i < 3; i++) {
        const res = await login(name, 'wrong-password');
        expect(res.status).toBe(401);
        expect(res.body.message).toBe('invalid username or password');
      }
    }
    // alice is locked even with her password; nobody the same way.
    const locked = await login('alice', 'long-enough-1');
    expect(locked.status).toBe(429);
    expect(locked.body.message).toBe('too many failed sign-ins; try again later');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await login('nobody', 'wrong-password')).status).toBe(429);
    // Six failures from this address: any username is refused now.
    expect((await login('carol', 'whatever-1')).status).toBe(429);

    const failed = await t.db.select().from(auditLog).where(eq(auditLog.action, 'auth.login_failed'));
    expect(failed).toHaveLength(6);
    expect(failed.every((r) => r.actorType === 'anonymous' && /127\.0\.0\.1/.test(r.ip ?? ''))).toBe(true);
    // The username tried, and the manager's id only when it exists.
    const tried = failed.map((r) => [(r.details as { username: string }).username, r.entityId]);
    expect(tried.filter(([name]) => name === 'alice')).toEqual(Array(3).fill(['alice', aliceId]));
    expect(tried.filter(([name]) => name === 'nobody')).toEqual(Array(3).fill(['nobody', null]));

    const wait = Number((await login('alice', 'long-enough-1')).headers.get('retry-after'));
    await new Promise((r) => setTimeout(r, wait * 1000 + 300));
    expect((await login('alice', 'long-enough-1')).status).toBe(200);
  });

  it("a successful sign-in clears its username's count", async () => {
    // Two failures, a sign-in, two more: four in the window, yet never past three in a row.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 2; i++) expect((await login('alice', 'wrong-password')).status).toBe(401);
      expect((await login('alice', 'long-enough-1')).status).toBe(200);
    }
  });
});
