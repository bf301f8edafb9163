/**
 * Issue 43, findings 5 and 12 (docs/two-factor.md, "A fresh second factor" and "Tokens"), through
 * HTTP: the steps that hand out a lasting admin sign-in or another manager's second factor need a
 * current code of the caller's own when it has two-factor sign-in on, and are refused to API keys;
 * enabling two-factor sign-in ends the manager's earlier tokens. The server's TOTP clock is pinned
 * (setTotpClock) and moved by whole steps: each code is accepted once.
 */
import { and, eq } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { apiKeys, auditLog, managers } from '../../shared/db/schema';
import { setTotpClock } from '../../services/auth/totp';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
let now = Date.UTC(2026, 10, 26, 12, 0, 5);
const PASSWORD = 'long-enough-1';
const ids: Record<string, number> = {};
const secrets: Record<string, string> = {};
/** The token of a signed-in admin with two-factor sign-in on: what a thief would hold. */
let stolen: string;

const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: at,
  });
const nextStep = () => (now += 30_000);
const rootCode = () => codeAt(secrets.root, nextStep());

async function passwordToken(username: string): Promise<string> {
  const res = await api.post('/api/auth/login', { username, password: PASSWORD });
  expect(res.status).toBe(200);
  return res.body.data.token;
}

/** Enrols and confirms with `token`; the new token the confirmation answers. */
async function enable(username: string, token: string): Promise<string> {
  const started = await api.post('/api/auth/two-factor/enrol', {}, { token });
  expect(started.status).toBe(200);
  secrets[username] = started.body.data.secret;
  const confirmed = await api.post('/api/auth/two-factor/confirm', { code: codeAt(secrets[username], now) }, { token });
  expect(confirmed.status).toBe(200);
  return confirmed.body.data.token;
}

async function row(username: string) {
  return (await t.db.select().from(managers).where(eq(managers.username, username)))[0];
}

beforeAll(async () => {
  setTotpClock(() => now);
  t = await startTestApp({ env: { LOGIN_FAILURES_PER_USERNAME: '20', LOGIN_FAILURES_PER_ADDRESS: '100' } });
  api = client(t.baseUrl);
  for (const [username, role] of [
    ['root', 'admin'],
    ['other', 'admin'],
    ['staff', 'user'],
    ['clerk', 'user'],
    ['temp', 'user'],
  ] as const) {
    const created = await api.post('/api/managers', { username, password: PASSWORD, role }, { token: adminToken() });
    expect(created.status).toBe(201);
    ids[username] = created.body.data.id;
  }
  stolen = await enable('root', await passwordToken('root'));
  nextStep();
  await enable('other', await passwordToken('other'));
});
afterAll(() => t?.close());

describe('a fresh second factor for steps that grant admin sign-in (issue 43, finding 5)', () => {
  it('a stolen admin token (two-factor on) cannot create an admin without a code of its own; with one it can', async () => {
    const body = { username: 'mallory', password: PASSWORD, role: 'admin' };
    const noCode = await api.post('/api/managers', body, { token: stolen });
    expect(noCode.status).toBe(400);
    expect(noCode.body.message).toBe(
      'two_factor_code is required: this step needs a current code of your own two-factor sign-in',
    );
    expect(await row('mallory')).toBeUndefined();

    const wrong = await api.post('/api/managers', { ...body, two_factor_code: '000000' }, { token: stolen });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('code is not a valid two-factor code');
    expect(await row('mallory')).toBeUndefined();
    // Counted against the sign-in limits and audited as the caller's, like a wrong code anywhere.
    const failed = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'auth.two_factor_failed'), eq(auditLog.entityId, ids.root)));
    expect(failed.map((r) => r.managerId)).toEqual([ids.root]);

    const ok = await api.post('/api/managers', { ...body, two_factor_code: rootCode() }, { token: stolen });
    expect(ok.status).toBe(201);
    expect((await row('mallory')).role).toBe('admin');
    // Only admin-granting steps ask: a manager of another role is created with the token alone.
    const user = await api.post(
      '/api/managers',
      { username: 'plain', password: PASSWORD, role: 'user' },
      { token: stolen },
    );
    expect(user.status).toBe(201);
  });

  it("a stolen admin token cannot promote a manager to admin or set an admin's password without a code", async () => {
    const promote = await api.put(`/api/managers/${ids.staff}`, { role: 'admin' }, { token: stolen });
    expect(promote.status).toBe(400);
    expect(promote.body.message).toBe(
      'two_factor_code is required: this step needs a current code of your own two-factor sign-in',
    );
    expect((await row('staff')).role).toBe('user');

    const before = await row('other');
    const password = await api.put(`/api/managers/${ids.other}`, { password: 'taken-over-1' }, { token: stolen });
    expect(password.status).toBe(400);
    expect((await row('other')).passwordHash).toBe(before.passwordHash);

    const promoted = await api.put(
      `/api/managers/${ids.staff}`,
      { role: 'admin', two_factor_code: rootCode() },
      { token: stolen },
    );
    expect(promoted.status).toBe(200);
    expect((await row('staff')).role).toBe('admin');
    // A change that grants nothing needs no code.
    expect((await api.put(`/api/managers/${ids.clerk}`, { permissions: [] }, { token: stolen })).status).toBe(200);
  });

  it("a stolen admin token cannot turn off another manager's two-factor sign-in or renew its codes without a code", async () => {
    const off = await api.post('/api/auth/two-factor/disable', { manager_id: ids.other }, { token: stolen });
    expect(off.status).toBe(400);
    expect(off.body.message).toBe('code is required: this step needs a current code of your own two-factor sign-in');
    const renew = await api.post('/api/auth/two-factor/recovery-codes', { manager_id: ids.other }, { token: stolen });
    expect(renew.status).toBe(400);
    // The code asked for is the caller's own, not the other manager's.
    nextStep();
    const theirs = await api.post(
      '/api/auth/two-factor/disable',
      { manager_id: ids.other, code: codeAt(secrets.other, now) },
      { token: stolen },
    );
    expect(theirs.status).toBe(400);
    expect((await row('other')).totpEnabledAt).not.toBeNull();

    const done = await api.post(
      '/api/auth/two-factor/disable',
      { manager_id: ids.other, code: rootCode() },
      { token: stolen },
    );
    expect(done.status).toBe(200);
    expect((await row('other')).totpEnabledAt).toBeNull();
  });

  it('a stolen token (two-factor on) cannot leave an API key behind without a code; with one it can', async () => {
    const keys = async () => (await t.db.select().from(apiKeys).where(eq(apiKeys.managerId, ids.root))).length;
    const before = await keys();
    const noCode = await api.post('/api/api-keys', { name: 'backdoor', full: true }, { token: stolen });
    expect([noCode.status, noCode.body.message]).toEqual([
      400,
      'two_factor_code is required: this step needs a current code of your own two-factor sign-in',
    ]);
    const wrong = await api.post(
      '/api/api-keys',
      { name: 'backdoor', full: true, two_factor_code: '000000' },
      { token: stolen },
    );
    expect([wrong.status, wrong.body.message]).toEqual([400, 'code is not a valid two-factor code']);
    expect(await keys()).toBe(before);
    const ok = await api.post(
      '/api/api-keys',
      { name: 'kept', full: true, two_factor_code: rootCode() },
      { token: stolen },
    );
    expect(ok.status).toBe(201);
    expect(await keys()).toBe(before + 1);
  });

  it('an admin without two-factor sign-in does these steps with its token alone (nothing stronger to ask)', async () => {
    const created = await api.post(
      '/api/managers',
      { username: 'second', password: PASSWORD, role: 'admin' },
      { token: adminToken() },
    );
    expect(created.status).toBe(201);
  });

  it("an API key, even a full admin key, cannot create or promote an admin or set an admin's password", async () => {
    const created = await api.post('/api/api-keys', { name: 'script', full: true }, { token: adminToken() });
    expect(created.status).toBe(201);
    const key = created.body.data.key;
    const refused = "an api key cannot create or promote an admin or set an admin's password";

    const admin = await api.post(
      '/api/managers',
      { username: 'keyed', password: PASSWORD, role: 'admin' },
      { token: key },
    );
    expect(admin.status).toBe(403);
    expect(admin.body.message).toBe(refused);
    expect(await row('keyed')).toBeUndefined();
    const promote = await api.put(`/api/managers/${ids.clerk}`, { role: 'admin' }, { token: key });
    expect([promote.status, promote.body.message]).toEqual([403, refused]);
    expect((await row('clerk')).role).toBe('user');
    const password = await api.put(`/api/managers/${ids.root}`, { password: 'taken-over-1' }, { token: key });
    expect([password.status, password.body.message]).toEqual([403, refused]);
    // The key still does the rest of a full admin key's work.
    const user = await api.post(
      '/api/managers',
      { username: 'keyed-user', password: PASSWORD, role: 'user' },
      { token: key },
    );
    expect(user.status).toBe(201);
  });
});

describe("enabling two-factor sign-in ends the manager's other tokens (issue 43, finding 12)", () => {
  it('an earlier password-only token gets 401; the confirmation answers the token the caller continues with', async () => {
    const elsewhere = await passwordToken('clerk');
    const here = await passwordToken('clerk');
    expect((await api.get('/api/invoices', { token: elsewhere })).status).toBe(200);
    nextStep();
    const fresh = await enable('clerk', here);

    const old = await api.get('/api/invoices', { token: elsewhere });
    expect(old.status).toBe(401);
    expect(old.body.message).toBe('token revoked');
    expect((await api.get('/api/invoices', { token: here })).status).toBe(401);
    expect((await api.get('/api/invoices', { token: fresh })).status).toBe(200);
  });

  it("an admin enabling it for another manager ends that manager's tokens", async () => {
    const temp = await passwordToken('temp');
    const started = await api.post('/api/auth/two-factor/enrol', { manager_id: ids.temp }, { token: adminToken() });
    expect(started.status).toBe(200);
    nextStep();
    const confirmed = await api.post(
      '/api/auth/two-factor/confirm',
      { manager_id: ids.temp, code: codeAt(started.body.data.secret, now) },
      { token: adminToken() },
    );
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.data.token).toBeUndefined();
    expect((await api.get('/api/invoices', { token: temp })).status).toBe(401);
  });
});
