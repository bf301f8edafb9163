/**
 * Issue 43, finding 2: the sign-in limits hold under concurrent bursts. A try is counted before its
 * password or code is checked, so N concurrent wrong guesses get at most the limit checked (401) and
 * the rest 429, counted by the answers and by the audit rows of the checked ones. Finding 10: a
 * disabled manager's right password is answered, counted and audited like a wrong one.
 * TRUST_PROXY lets each test choose its client address (X-Forwarded-For).
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { setTotpClock } from '../../services/auth/totp';
import { auditLog, managerRecoveryCodes } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type HttpResult, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
// The server's TOTP clock, pinned: 5 s into a 30-second step.
const now = Date.UTC(2026, 10, 27, 9, 0, 5);
const PASSWORD = 'long-enough-1';
const PER_USERNAME = 5;
// Below the default 20: each checked guess is a bcrypt comparison, and 20 at once on a loaded
// machine outlasted the request timeout (504).
const PER_ADDRESS = 8;

beforeAll(async () => {
  setTotpClock(() => now);
  t = await startTestApp({
    env: {
      TRUST_PROXY: '1',
      LOGIN_FAILURES_PER_USERNAME: String(PER_USERNAME),
      LOGIN_FAILURES_PER_ADDRESS: String(PER_ADDRESS),
      LOGIN_LOCK_SECONDS: '900',
    },
  });
  api = client(t.baseUrl);
});
afterAll(() => t?.close());

let addresses = 0;
/** A client address no other request of the file uses. */
const freshAddress = () => `10.43.${Math.floor(++addresses / 250)}.${(addresses % 250) + 1}`;
const from = (address: string) => ({ headers: { 'X-Forwarded-For': address } });

const login = (username: string, password: string, address = freshAddress()) =>
  api.post('/api/auth/login', { username, password }, from(address));
const verify = (challenge: string, code: string, address = freshAddress()) =>
  api.post('/api/auth/login/verify', { challenge, code }, from(address));
const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: at,
  });

async function createManager(username: string): Promise<number> {
  const created = await api.post(
    '/api/managers',
    { username, password: PASSWORD, role: 'user', permissions: ['subscribers.view'] },
    { token: adminToken() },
  );
  expect(created.status).toBe(201);
  return created.body.data.id;
}

/** A manager with two-factor sign-in on: its TOTP secret and recovery codes. */
async function twoFactorManager(
  username: string,
): Promise<{ id: number; secret: string; recovery: string[]; token: string }> {
  const id = await createManager(username);
  const token = (await login(username, PASSWORD)).body.data.token;
  const started = await api.post('/api/auth/two-factor/enrol', {}, { token });
  expect(started.status).toBe(200);
  const secret = started.body.data.secret as string;
  const confirmed = await api.post('/api/auth/two-factor/confirm', { code: codeAt(secret, now) }, { token });
  expect(confirmed.status).toBe(200);
  return { id, secret, recovery: confirmed.body.data.recovery_codes, token: confirmed.body.data.token };
}

/** How many answers had each status, e.g. `{ 401: 5, 429: 35 }`. */
function statuses(results: HttpResult[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of results) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

/** Audit rows of failed tries (`action`) naming `username`. */
async function failuresAudited(action: string, username: string): Promise<number> {
  const rows = await t.db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.action, action), sql`${auditLog.details} ->> 'username' = ${username}`));
  return rows.length;
}

describe('sign-in limits under concurrent bursts', () => {
  it('40 concurrent wrong passwords for one username: 5 checked, 35 refused with 429; then the right one is 429', async () => {
    await createManager('burst-pw');
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => login('burst-pw', `wrong-${i}`)));
    expect(statuses(results)).toEqual({ 401: PER_USERNAME, 429: 40 - PER_USERNAME });
    expect(results.filter((r) => r.status === 429).every((r) => Number(r.headers.get('retry-after')) >= 1)).toBe(true);
    expect(await failuresAudited('auth.login_failed', 'burst-pw')).toBe(PER_USERNAME);
    expect((await login('burst-pw', PASSWORD)).status).toBe(429);
  });

  it('30 concurrent wrong passwords from one address over 30 usernames: 8 checked, 22 refused with 429', async () => {
    const address = freshAddress();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => login(`nobody-${i}`, 'wrong', address)));
    expect(statuses(results)).toEqual({ 401: PER_ADDRESS, 429: 30 - PER_ADDRESS });
    const audited = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'auth.login_failed'), sql`${auditLog.ip} = ${address}`));
    expect(audited).toHaveLength(PER_ADDRESS);
  });

  it('a right password that leads to a second step gives its try back', async () => {
    await twoFactorManager('burst-refund');
    for (let i = 0; i < PER_USERNAME - 1; i++) expect((await login('burst-refund', 'wrong')).status).toBe(401);
    for (let i = 0; i < 3; i++) {
      const res = await login('burst-refund', PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body.data.two_factor_required).toBe(true);
    }
  });

  it('40 concurrent wrong TOTP codes at login/verify: 5 checked, 35 refused with 429; then the right code is 429', async () => {
    const { secret } = await twoFactorManager('burst-totp');
    const challenge = (await login('burst-totp', PASSWORD)).body.data.challenge as string;
    const valid = new Set([-30_000, 0, 30_000].map((d) => codeAt(secret, now + d)));
    const wrong = Array.from({ length: 400 }, (_, i) => String(100_000 + i * 2_203))
      .filter((c) => !valid.has(c))
      .slice(0, 40);
    const results = await Promise.all(wrong.map((code) => verify(challenge, code)));
    expect(statuses(results)).toEqual({ 401: PER_USERNAME, 429: 40 - PER_USERNAME });
    expect(results.filter((r) => r.status === 401).every((r) => r.body.message === 'invalid two-factor code')).toBe(
      true,
    );
    expect(await failuresAudited('auth.two_factor_failed', 'burst-totp')).toBe(PER_USERNAME);
    expect((await verify(challenge, codeAt(secret, now))).status).toBe(429);
  });

  it('60 concurrent wrong recovery codes: 5 checked, 55 refused with 429; then a right one is 429 and stays unused', async () => {
    const { id, recovery } = await twoFactorManager('burst-recovery');
    const challenge = (await login('burst-recovery', PASSWORD)).body.data.challenge as string;
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) => verify(challenge, `wrong-${String(i).padStart(4, '0')}`)),
    );
    expect(statuses(results)).toEqual({ 401: PER_USERNAME, 429: 60 - PER_USERNAME });
    expect(await failuresAudited('auth.two_factor_failed', 'burst-recovery')).toBe(PER_USERNAME);
    expect((await verify(challenge, recovery[0])).status).toBe(429);
    const unused = await t.db
      .select()
      .from(managerRecoveryCodes)
      .where(and(eq(managerRecoveryCodes.managerId, id), isNull(managerRecoveryCodes.usedAt)));
    expect(unused).toHaveLength(recovery.length);
  });

  it('40 concurrent wrong recovery codes to turn two-factor sign-in off: 5 checked, 35 refused with 429; it stays on', async () => {
    const { id, recovery, token } = await twoFactorManager('burst-disable');
    const address = freshAddress();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        api.post('/api/auth/two-factor/disable', { code: `wrong-${i}` }, { token, ...from(address) }),
      ),
    );
    expect(statuses(results)).toEqual({ 400: PER_USERNAME, 429: 40 - PER_USERNAME });
    expect(await failuresAudited('auth.two_factor_failed', 'burst-disable')).toBe(PER_USERNAME);
    const refused = await api.post('/api/auth/two-factor/disable', { code: recovery[0] }, { token, ...from(address) });
    expect(refused.status).toBe(429);
    const status = await api.get(`/api/auth/two-factor?manager_id=${id}`, { token: adminToken() });
    expect(status.body.data).toMatchObject({ enabled: true, recovery_codes_left: recovery.length });
  });
});

describe('a disabled manager (finding 10)', () => {
  it('its right password is answered, counted and audited exactly like a wrong one', async () => {
    const id = await createManager('disabled-one');
    expect((await api.put(`/api/managers/${id}`, { active: false }, { token: adminToken() })).status).toBe(200);
    const wrong = await login('disabled-one', 'not-the-password');
    const right = await login('disabled-one', PASSWORD);
    expect([right.status, right.body]).toEqual([wrong.status, wrong.body]);
    expect(right.body).toEqual({ success: false, message: 'invalid username or password' });
    expect(await failuresAudited('auth.login_failed', 'disabled-one')).toBe(2);
    for (let i = 2; i < PER_USERNAME; i++) expect((await login('disabled-one', PASSWORD)).status).toBe(401);
    expect((await login('disabled-one', PASSWORD)).status).toBe(429);
  });

  it('a challenge taken before the manager was disabled is refused as invalid, even with the right code', async () => {
    const { id, secret } = await twoFactorManager('disabled-two');
    const challenge = (await login('disabled-two', PASSWORD)).body.data.challenge as string;
    expect((await api.put(`/api/managers/${id}`, { active: false }, { token: adminToken() })).status).toBe(200);
    // The next step's code: the confirmation used this step's.
    const res = await verify(challenge, codeAt(secret, now + 30_000));
    expect(res.body).toEqual({ success: false, message: 'two-factor challenge expired or invalid; sign in again' });
  });
});
