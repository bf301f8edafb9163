/**
 * Two-factor sign-in (docs/two-factor.md), through HTTP: enrolment with a QR code, confirmation,
 * the second step of a sign-in with a TOTP code or a recovery code, replay, the sign-in limits,
 * disabling, require_two_factor and the token's amr claim. Codes are generated here with the same
 * library for a fixed clock that the server is pinned to (setTotpClock): no sleeps.
 */
import { and, eq, isNotNull } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { auditLog, managerRecoveryCodes, managers } from '../../shared/db/schema';
import { setTotpClock } from '../../services/auth/totp';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
let api: ReturnType<typeof client>;
// A fixed time, 5 s into a 30-second step; a test moves it by whole steps.
let now = Date.UTC(2026, 10, 26, 12, 0, 5);
const PASSWORD = 'long-enough-1';
const ids: Record<string, number> = {};

beforeAll(async () => {
  setTotpClock(() => now);
  t = await startTestApp({
    env: { LOGIN_FAILURES_PER_USERNAME: '5', LOGIN_FAILURES_PER_ADDRESS: '100', LOGIN_LOCK_SECONDS: '900' },
  });
  api = client(t.baseUrl);
  for (const username of ['alice', 'bob', 'carol', 'dave']) {
    const created = await api.post(
      '/api/managers',
      { username, password: PASSWORD, role: 'user', permissions: ['subscribers.view'] },
      { token: adminToken() },
    );
    expect(created.status).toBe(201);
    ids[username] = created.body.data.id;
  }
});
afterAll(() => t?.close());

const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
const codeAt = (secret: string, at: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: at,
  });
const login = (username: string) => api.post('/api/auth/login', { username, password: PASSWORD });
const verify = (challenge: string, code: string) => api.post('/api/auth/login/verify', { challenge, code });
const nextStep = () => (now += 30_000);

/** Signs in with the password alone (two-factor off) and returns the token. */
async function passwordToken(username: string): Promise<string> {
  const res = await login(username);
  expect(res.status).toBe(200);
  return res.body.data.token;
}

/** Enrols and confirms for the bearer; returns the secret, the recovery codes and the new token. */
async function enable(token: string): Promise<{ secret: string; recovery: string[]; token: string }> {
  const started = await api.post('/api/auth/two-factor/enrol', {}, { token });
  expect(started.status).toBe(200);
  const confirmed = await api.post(
    '/api/auth/two-factor/confirm',
    { code: codeAt(started.body.data.secret, now) },
    { token },
  );
  expect(confirmed.status).toBe(200);
  return {
    secret: started.body.data.secret,
    recovery: confirmed.body.data.recovery_codes,
    token: confirmed.body.data.token,
  };
}

const secrets: Record<string, string> = {};
let aliceRecovery: string[] = [];

describe('two-factor sign-in', () => {
  it('without it, login answers exactly as before (token and expires_at), the token recording amr pwd', async () => {
    const res = await login('alice');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data).sort()).toEqual(['expires_at', 'token']);
    expect(claims(res.body.data.token).amr).toEqual(['pwd']);
    expect(claims(res.body.data.token).enrol_only).toBeUndefined();
  });

  it('enrols with an otpauth URI and a QR image, keeps the secret encrypted, and enables on a right code only', async () => {
    const token = await passwordToken('alice');
    expect((await api.get('/api/auth/two-factor', { token })).body.data).toMatchObject({
      enabled: false,
      pending: false,
      recovery_codes_left: 0,
      required: false,
    });

    const started = await api.post('/api/auth/two-factor/enrol', {}, { token });
    expect(started.status).toBe(200);
    const { otpauth_url: uri, secret, qr } = started.body.data;
    expect(uri).toMatch(/^otpauth:\/\/totp\/[^?]*alice\?/);
    expect(new URL(uri).searchParams.get('secret')).toBe(secret);
    expect(qr).toMatch(/^data:image\/png;base64,/);
    expect(Buffer.from(qr.split(',')[1], 'base64').subarray(1, 4).toString()).toBe('PNG');
    const [pending] = await t.db.select().from(managers).where(eq(managers.id, ids.alice));
    expect(pending.totpSecret).toMatch(/^v1:/);
    expect(pending.totpSecret).not.toContain(secret);
    expect(pending.totpEnabledAt).toBeNull();
    expect((await api.get('/api/auth/two-factor', { token })).body.data.pending).toBe(true);

    const wrong = await api.post('/api/auth/two-factor/confirm', { code: codeAt(secret, now + 600_000) }, { token });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe('code is not a valid two-factor code');
    expect((await t.db.select().from(managers).where(eq(managers.id, ids.alice)))[0].totpEnabledAt).toBeNull();

    const confirmed = await api.post('/api/auth/two-factor/confirm', { code: codeAt(secret, now) }, { token });
    expect(confirmed.status).toBe(200);
    const codes: string[] = confirmed.body.data.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    codes.forEach((c) => expect(c).toMatch(/^[0-9a-z]{5}-[0-9a-z]{5}$/));
    expect(claims(confirmed.body.data.token).amr).toEqual(['pwd', 'otp']);
    const stored = await t.db.select().from(managerRecoveryCodes).where(eq(managerRecoveryCodes.managerId, ids.alice));
    expect(stored).toHaveLength(10);
    for (const row of stored) expect(codes.some((c) => row.codeHash.includes(c.replace('-', '')))).toBe(false);
    // The password-only token ended with the confirmation; the caller continues with the new one.
    expect((await api.get('/api/auth/two-factor', { token })).status).toBe(401);
    const full = confirmed.body.data.token;
    expect((await api.get('/api/auth/two-factor', { token: full })).body.data).toMatchObject({
      enabled: true,
      recovery_codes_left: 10,
    });
    expect((await api.post('/api/auth/two-factor/enrol', {}, { token: full })).status).toBe(409);
    const listed = await api.get('/api/managers', { token: adminToken() });
    expect(listed.body.data.find((m: { id: number }) => m.id === ids.alice).two_factor).toBe(true);
    expect(listed.body.data.find((m: { id: number }) => m.id === ids.bob).two_factor).toBe(false);

    const audited = await t.db.select().from(auditLog).where(eq(auditLog.entityId, ids.alice));
    expect(audited.map((r) => r.action)).toEqual(
      expect.arrayContaining(['two_factor.enrol', 'auth.two_factor_failed', 'two_factor.enable']),
    );
    secrets.alice = secret;
    aliceRecovery = codes;
  });

  it('login then answers a challenge; a wrong code is 401, a right one a token with amr [pwd, otp]; a code is refused once used', async () => {
    const first = await login('alice');
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ two_factor_required: true });
    expect(first.body.data.token).toBeUndefined();
    const { challenge } = first.body.data;

    const wrong = await verify(challenge, codeAt(secrets.alice, now + 600_000));
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe('invalid two-factor code');

    // The step confirmed at enrolment is used up: the same code is a replay.
    expect((await verify(challenge, codeAt(secrets.alice, now))).status).toBe(401);
    nextStep();
    const code = codeAt(secrets.alice, now);
    const ok = await verify(challenge, code);
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.body.data).sort()).toEqual(['expires_at', 'token']);
    expect(claims(ok.body.data.token).amr).toEqual(['pwd', 'otp']);
    expect((await api.get('/api/invoices', { token: ok.body.data.token })).status).toBe(200);

    const again = await login('alice');
    expect((await verify(again.body.data.challenge, code)).status).toBe(401);
    // The previous step's code is within the drift window but older than the one used.
    expect((await verify(again.body.data.challenge, codeAt(secrets.alice, now - 30_000))).status).toBe(401);
    nextStep();
    expect((await verify(again.body.data.challenge, codeAt(secrets.alice, now))).status).toBe(200);

    const bad = await verify('not-a-challenge', codeAt(secrets.alice, now));
    expect(bad.status).toBe(401);
    expect(bad.body.message).toBe('two-factor challenge expired or invalid; sign in again');
    // A challenge is no access token, and an access token is no challenge.
    expect((await api.get('/api/invoices', { token: challenge })).status).toBe(401);
    expect((await verify(ok.body.data.token, codeAt(secrets.alice, now))).status).toBe(401);
  });

  it('a recovery code signs in once, typed in any case', async () => {
    const { challenge } = (await login('alice')).body.data;
    const ok = await verify(challenge, aliceRecovery[0].toUpperCase());
    expect(ok.status).toBe(200);
    expect(claims(ok.body.data.token).amr).toEqual(['pwd', 'otp']);
    expect((await verify(challenge, aliceRecovery[0])).status).toBe(401);
    const used = await t.db
      .select()
      .from(managerRecoveryCodes)
      .where(and(eq(managerRecoveryCodes.managerId, ids.alice), isNotNull(managerRecoveryCodes.usedAt)));
    expect(used).toHaveLength(1);
    const status = await api.get('/api/auth/two-factor', { token: ok.body.data.token });
    expect(status.body.data.recovery_codes_left).toBe(9);
    const rows = await t.db.select().from(auditLog).where(eq(auditLog.action, 'auth.recovery_code_used'));
    expect(rows.map((r) => r.managerId)).toEqual([ids.alice]);
  });

  it('wrong codes count toward the sign-in limit: 429 with Retry-After even for the right code, each audited', async () => {
    const dave = await enable(await passwordToken('dave'));
    secrets.dave = dave.secret;
    nextStep();
    // One challenge serves every try: the code, not the password step, is what is being guessed.
    const { challenge } = (await login('dave')).body.data;
    for (let i = 0; i < 5; i++) expect((await verify(challenge, '000000')).status).toBe(401);
    const locked = await verify(challenge, codeAt(dave.secret, now));
    expect(locked.status).toBe(429);
    expect(locked.body.message).toBe('too many failed sign-ins; try again later');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The password step of that username is locked too.
    expect((await login('dave')).status).toBe(429);
    const failed = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'auth.two_factor_failed'), eq(auditLog.entityId, ids.dave)));
    expect(failed).toHaveLength(5);
    expect(failed.every((r) => r.actorType === 'anonymous' && /127\.0\.0\.1/.test(r.ip ?? ''))).toBe(true);
  });

  it('new recovery codes replace the old; disabling one own needs a code, an admin disables another without one', async () => {
    nextStep();
    const carol = await enable(await passwordToken('carol'));
    nextStep();
    expect((await api.post('/api/auth/two-factor/recovery-codes', {}, { token: carol.token })).status).toBe(400);
    const renewed = await api.post(
      '/api/auth/two-factor/recovery-codes',
      { code: codeAt(carol.secret, now) },
      { token: carol.token },
    );
    expect(renewed.status).toBe(200);
    expect(renewed.body.data.recovery_codes).toHaveLength(10);
    const { challenge } = (await login('carol')).body.data;
    expect((await verify(challenge, carol.recovery[0])).status).toBe(401);
    expect((await verify(challenge, renewed.body.data.recovery_codes[0])).status).toBe(200);

    const noCode = await api.post('/api/auth/two-factor/disable', {}, { token: carol.token });
    expect(noCode.status).toBe(400);
    expect(noCode.body.message).toBe('code is required to change your own two-factor sign-in');
    // Not an admin: another manager's is out of reach.
    expect(
      (await api.post('/api/auth/two-factor/disable', { manager_id: ids.alice }, { token: carol.token })).status,
    ).toBe(403);
    const off = await api.post(
      '/api/auth/two-factor/disable',
      { code: renewed.body.data.recovery_codes[1] },
      { token: carol.token },
    );
    expect(off.status).toBe(200);
    const [row] = await t.db.select().from(managers).where(eq(managers.id, ids.carol));
    expect([row.totpSecret, row.totpEnabledAt]).toEqual([null, null]);
    expect(await t.db.select().from(managerRecoveryCodes).where(eq(managerRecoveryCodes.managerId, ids.carol))).toEqual(
      [],
    );
    expect(Object.keys((await login('carol')).body.data).sort()).toEqual(['expires_at', 'token']);

    expect(
      (await api.post('/api/auth/two-factor/disable', { manager_id: ids.alice }, { token: adminToken() })).status,
    ).toBe(200);
    expect(Object.keys((await login('alice')).body.data).sort()).toEqual(['expires_at', 'token']);
  });

  it('require_two_factor: a manager without it gets a token that may only enrol, then a full one; api keys are not affected', async () => {
    const bobToken = await passwordToken('bob');
    const key = await api.post('/api/api-keys', { name: 'script', full: true }, { token: bobToken });
    expect(key.status).toBe(201);
    expect((await api.put('/api/settings', { require_two_factor: true }, { token: bobToken })).status).toBe(403);
    expect((await api.put('/api/settings', { require_two_factor: true }, { token: adminToken() })).status).toBe(200);

    const res = await login('bob');
    expect(res.status).toBe(200);
    expect(res.body.data.two_factor_setup_required).toBe(true);
    expect(claims(res.body.data.token)).toMatchObject({ enrol_only: true, amr: ['pwd'] });
    const limited = res.body.data.token;
    const refused = await api.get('/api/invoices', { token: limited });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('two-factor sign-in must be set up first (POST /api/auth/two-factor/enrol)');
    expect((await api.get('/api/auth/two-factor', { token: limited })).body.data.required).toBe(true);
    // An admin's enrol-only token proved a password alone: its own second step only, never another's secret.
    const erin = await api.post(
      '/api/managers',
      { username: 'erin', password: PASSWORD, role: 'admin' },
      { token: adminToken() },
    );
    expect(erin.status).toBe(201);
    const erinLimited = (await login('erin')).body.data.token;
    expect(claims(erinLimited).enrol_only).toBe(true);
    const foreign = await api.post('/api/auth/two-factor/enrol', { manager_id: ids.dave }, { token: erinLimited });
    expect(foreign.status).toBe(403);
    expect(foreign.body.message).toBe('two-factor sign-in must be set up first (POST /api/auth/two-factor/enrol)');
    expect((await api.get(`/api/auth/two-factor?manager_id=${ids.dave}`, { token: erinLimited })).status).toBe(403);
    // An API key is no sign-in: it works as before, and cannot change two-factor sign-in.
    expect((await api.get('/api/invoices', { token: key.body.data.key })).status).toBe(200);
    expect((await api.post('/api/auth/two-factor/enrol', {}, { token: key.body.data.key })).status).toBe(403);

    nextStep();
    const bob = await enable(limited);
    expect(claims(bob.token).enrol_only).toBeUndefined();
    expect((await api.get('/api/invoices', { token: bob.token })).status).toBe(200);
    expect((await login('bob')).body.data.two_factor_required).toBe(true);
    expect((await api.get('/api/invoices', { token: key.body.data.key })).status).toBe(200);
    expect((await api.put('/api/settings', { require_two_factor: false }, { token: adminToken() })).status).toBe(200);
  });
});
