/**
 * Self-care sign-in (issue 40, docs/self-care.md): the PPPoE password or a one-time code over the
 * chat channel, limited per username and per address, a token of its own kind that a password
 * change, a sign-out or a deletion ends.
 */
import { and, eq } from 'drizzle-orm';
import { auditLog, selfCareCodes } from '../../shared/db/schema';
import { token } from '../helpers/app';
import { admin, ChatDouble, selfCareWorld, type SelfCareWorld } from './self-care-fixtures';

let w: SelfCareWorld;
let chat: ChatDouble;

beforeAll(async () => {
  w = await selfCareWorld({
    LOGIN_FAILURES_PER_USERNAME: '3',
    LOGIN_FAILURES_PER_ADDRESS: '1000',
    LOGIN_LOCK_SECONDS: '60',
  });
  chat = new ChatDouble();
  await w.setSettings({
    messaging_provider: 'telegram',
    telegram_bot_token: '123:abc',
    telegram_base_url: await chat.start(),
    allow_private_targets: true,
  });
});
afterAll(async () => {
  await chat?.stop();
  await w?.t.close();
});

const login = (username: string, password: string) => w.api.post('/api/my/login', { username, password });
const logout = (tok: string) => w.api.post('/api/my/logout', {}, { token: tok });
const failures = async (action: string) =>
  (await w.t.db.select().from(auditLog).where(eq(auditLog.action, action))).length;

describe('password sign-in', () => {
  it('takes the PPPoE password and refuses a wrong one or an unknown name alike', async () => {
    const sub = await w.mkSub();
    const ok = await login(sub.username, sub.password);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toMatchObject({ subscriber_id: sub.id });
    expect(Date.parse(ok.body.data.expires_at) - Date.now()).toBeLessThanOrEqual(1800 * 1000);
    expect(ok.text).not.toContain(sub.password);
    const wrong = await login(sub.username, 'not-it');
    const unknown = await login('nobody-here', 'not-it');
    expect([wrong.status, unknown.status]).toEqual([401, 401]);
    expect(wrong.body).toEqual(unknown.body);
    const rows = await w.t.db.select().from(auditLog).where(eq(auditLog.action, 'self_care.login_failed'));
    expect(rows.map((r) => [r.actorType, r.entityId])).toEqual([
      ['anonymous', sub.id],
      ['anonymous', null],
    ]);
    expect(JSON.stringify(rows)).not.toContain('not-it');
  });

  it('is limited per username with Retry-After, and a concurrent burst gets no more checks than the limit', async () => {
    const sub = await w.mkSub();
    const before = await failures('self_care.login_failed');
    const burst = await Promise.all(Array.from({ length: 20 }, () => login(sub.username, 'guess')));
    expect(burst.filter((r) => r.status === 401)).toHaveLength(3);
    const refused = burst.filter((r) => r.status === 429);
    expect(refused).toHaveLength(17);
    expect(Number(refused[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await failures('self_care.login_failed')).toBe(before + 3);
    // Locked even with the right password, until the window ends.
    expect((await login(sub.username, sub.password)).status).toBe(429);
  });

  it('a manager of the same name is not locked by a subscriber', async () => {
    const sub = await w.mkSub();
    const made = await w.api.post(
      '/api/managers',
      { username: sub.username, password: 'long-enough-1', role: 'admin' },
      { token: admin },
    );
    expect(made.status).toBe(201);
    for (let i = 0; i < 4; i++) await login(sub.username, 'guess');
    expect((await login(sub.username, 'guess')).status).toBe(429);
    const manager = await w.api.post('/api/auth/login', { username: sub.username, password: 'long-enough-1' });
    expect(manager.status).toBe(200);
  });
});

describe('the self-care token', () => {
  it('works on /api/my only, and no manager token works there', async () => {
    const sub = await w.mkSub();
    const mine = await w.signIn(sub.username, sub.password);
    expect((await w.api.get('/api/subscribers', { token: mine })).status).toBe(401);
    expect((await w.api.get(`/api/subscribers/${sub.id}`, { token: mine })).status).toBe(401);
    expect((await w.api.post('/api/auth/logout', {}, { token: mine })).status).toBe(401);
    const managerTok = token('admin', { managerId: 1 });
    expect((await w.api.get('/api/subscribers', { token: managerTok })).status).toBe(200);
    const refused = await logout(managerTok);
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe('invalid token');
    expect((await logout(mine)).status).toBe(200);
  });

  it('ends at sign-out', async () => {
    const sub = await w.mkSub();
    const mine = await w.signIn(sub.username, sub.password);
    expect((await logout(mine)).status).toBe(200);
    const again = await logout(mine);
    expect(again.status).toBe(401);
    expect(again.body.message).toBe('token revoked');
  });

  it('ends when the password changes, whoever changes it, and when the subscriber is deleted', async () => {
    const sub = await w.mkSub();
    const mine = await w.signIn(sub.username, sub.password);
    const other = await w.signIn(sub.username, sub.password);
    const put = await w.api.put(`/api/subscribers/${sub.id}`, { password: 'operator-set-1' }, { token: admin });
    expect(put.status).toBe(200);
    for (const tok of [mine, other]) expect((await logout(tok)).body.message).toBe('token revoked');
    const fresh = await w.signIn(sub.username, 'operator-set-1');
    expect((await w.api.del(`/api/subscribers/${sub.id}`, { token: admin })).status).toBe(200);
    expect((await logout(fresh)).status).toBe(401);
    expect((await login(sub.username, 'operator-set-1')).status).toBe(401);
  });

  it('is refused with a forged signature or the manager key', async () => {
    const sub = await w.mkSub();
    const mine = await w.signIn(sub.username, sub.password);
    const [h, p] = mine.split('.');
    expect((await logout(`${h}.${p}.AAAA`)).status).toBe(401);
    const unsigned = `${h}.${p}.`;
    expect((await logout(unsigned)).status).toBe(401);
  });
});

describe('switches', () => {
  it('self_care_enabled off closes sign-in', async () => {
    const sub = await w.mkSub();
    await w.setSettings({ self_care_enabled: false });
    const res = await login(sub.username, sub.password);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('self-care is turned off');
    await w.setSettings({ self_care_enabled: true });
    expect((await login(sub.username, sub.password)).status).toBe(200);
  });

  it('a switch saved by another process applies when its settings.changed arrives (the cache is forgotten)', async () => {
    const sub = await w.mkSub();
    expect((await login(sub.username, sub.password)).status).toBe(200);
    // What another replica's PUT /api/settings leaves behind: the row, then its broadcast.
    await w.t.pool.query(
      `insert into settings (key, value) values ('self_care_enabled', 'false') on conflict (key) do update set value = excluded.value`,
    );
    await w.t.app.broker.broadcast('settings.changed', { keys: ['self_care_enabled'] });
    const res = await login(sub.username, sub.password);
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('self-care is turned off');
    await w.setSettings({ self_care_enabled: true });
    expect((await login(sub.username, sub.password)).status).toBe(200);
  });
});

describe('one-time code', () => {
  const ask = (username: string) => w.api.post('/api/my/login/code', { username });
  const verify = (username: string, code: string) => w.api.post('/api/my/login/code/verify', { username, code });

  it('is off until the operator turns it on', async () => {
    const res = await ask('anyone');
    expect(res.status).toBe(403);
    expect(res.body.message).toBe('sign-in with a code is turned off in self-care');
    await w.setSettings({ self_care_code_sign_in: true });
  });

  it('sends six digits over the chat channel; the code signs in once, and only within its tries', async () => {
    const sub = await w.mkSub({ phone: '5551001' });
    const sent = await ask(sub.username);
    expect(sent.status).toBe(200);
    const code = await chat.codeFor('5551001');
    expect(code).toMatch(/^\d{6}$/);
    const [stored] = await w.t.db.select().from(selfCareCodes).where(eq(selfCareCodes.subscriberId, sub.id));
    expect(stored.codeHash).not.toContain(code);
    expect(stored.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(300_000);
    const ok = await verify(sub.username, code);
    expect(ok.status).toBe(200);
    expect(ok.text).not.toContain(code);
    expect((await logout(ok.body.data.token)).status).toBe(200);
    // Single use.
    expect((await verify(sub.username, code)).status).toBe(401);
  });

  it('five wrong tries end the code, even for the right one after', async () => {
    const sub = await w.mkSub({ phone: '5551002' });
    await ask(sub.username);
    const code = await chat.codeFor('5551002');
    const wrong = code === '000000' ? '111111' : '000000';
    // The username limit is 3: give the tries from two names' worth by clearing between (a right
    // sign-in clears the count), so the code's own limit of five is what stops it.
    for (let i = 0; i < 5; i++) {
      expect((await verify(sub.username, wrong)).status).toBe(401);
      if (i === 1 || i === 3) await w.signIn(sub.username, sub.password);
    }
    const [row] = await w.t.db.select().from(selfCareCodes).where(eq(selfCareCodes.subscriberId, sub.id));
    expect(row.tries).toBe(5);
    expect((await verify(sub.username, code)).status).toBe(401);
  });

  it('answers the same for an unknown name or one without a phone, and sends nothing', async () => {
    const noPhone = await w.mkSub();
    const before = chat.received.length;
    const a = await ask('no-such-user');
    const b = await ask(noPhone.username);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toEqual(b.body);
    await new Promise((r) => setTimeout(r, 300));
    expect(chat.received.length).toBe(before);
  });

  it('is never in the audit trail', async () => {
    const sub = await w.mkSub({ phone: '5551003' });
    await ask(sub.username);
    const code = await chat.codeFor('5551003');
    await verify(sub.username, code === '123456' ? '654321' : '123456');
    const rows = await w.t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'self_care.code_failed'), eq(auditLog.entityId, sub.id)));
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(code);
  });
});
