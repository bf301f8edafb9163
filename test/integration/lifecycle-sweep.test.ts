/**
 * The lifecycle sweep (docs/lifecycle.md) against the real app: auto-renew from a funded wallet
 * (through the renew operation: reseller charge, invoice paid from the wallet, RADIUS rows,
 * disconnect), no charge without funds, the blocked state at expiry and for an overdue invoice,
 * reminders through stubs of the Telegram and WhatsApp APIs (once-only per rule and expiry date,
 * failures recorded, at most once after a crash), GET /api/notifications, and two replicas
 * sweeping the same database at once.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { and, eq, sql } from 'drizzle-orm';
import {
  invoices,
  notifications,
  outbox,
  radcheck,
  radusergroup,
  resellers,
  subscribers,
  transactions,
  walletEntries,
} from '../../shared/db/schema';
import { db } from '../../shared/db/client';
import { saveSettings } from '../../shared/settings';
import type { SweepResult } from '../../services/subscribers/lifecycle/lifecycle.service';
import type { SweepCounts } from '../../services/subscribers/lifecycle/sweep';
import { formatDate } from '../../shared/format';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';

// No sweep of its own: each test runs the sweep it asserts on (settings.changed still triggers one).
process.env.LIFECYCLE_INTERVAL_SECONDS = '0';
process.env.NOTIFIER_RETRY_BASE_MS = '5';

let t: TestApp;
let api: ReturnType<typeof client>;
const admin = adminToken();

const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);
const today = () => day(0);

let root: number;
let other: number;
let basic: number; // 30 days, 10.00 USD

/** One sweep that ran (a sweep triggered by settings.changed may hold the lock for a moment). */
async function sweep(app: TestApp = t): Promise<SweepCounts> {
  return waitFor('a sweep that holds the lock', async () => {
    const r = await app.app.broker.call<SweepResult, Record<string, never>>('lifecycle.sweep', {});
    return r.skipped ? undefined : r;
  });
}

let seq = 0;
async function mkSub(extra: Record<string, unknown> = {}) {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `life${seq}@isp`, password: 'secret1', service_id: basic, reseller_id: root, ...extra },
    { token: admin },
  );
  if (res.status !== 201) throw new Error(`create failed ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: number; username: string; expiry_date: string };
}

async function fund(id: number, amount: number) {
  const res = await api.post(`/api/subscribers/${id}/add-balance`, { amount }, { token: admin });
  expect(res.status).toBe(200);
}

/** Midnight passes: the paid time of `ids` ended yesterday, and no writer has touched their rows since. */
async function expireYesterday(ids: number[]) {
  await t.pool.query(`update subscribers set expiry_date = current_date - 1 where id = any($1::int[])`, [ids]);
}

const sub = async (id: number) => (await t.db.select().from(subscribers).where(eq(subscribers.id, id)))[0];
const groups = async (username: string) =>
  (await t.db.select().from(radusergroup).where(eq(radusergroup.username, username))).map((g) => g.groupname);
const checks = async (username: string) =>
  Object.fromEntries(
    (await t.db.select().from(radcheck).where(eq(radcheck.username, username))).map((r) => [r.attribute, r.value]),
  );
const outboxOf = async (id: number) =>
  (await t.db.select().from(outbox))
    .map((o) => o.payload as { subscriber_id: number; reason: string })
    .filter((p) => p.subscriber_id === id);
const invoicesOf = (id: number) => t.db.select().from(invoices).where(eq(invoices.subscriberId, id));
const ledgerOf = (id: number) => t.db.select().from(transactions).where(eq(transactions.subscriberId, id));
const resellerBalance = async (id: number) =>
  (await t.db.select().from(resellers).where(eq(resellers.id, id)))[0].balance;

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  const mk = async (name: string) => {
    const res = await api.post(
      '/api/resellers',
      { name, parent_id: null, balance: 100000, currency: 'USD' },
      { token: admin },
    );
    expect(res.status).toBe(201);
    return res.body.data.id as number;
  };
  root = await mk('root');
  other = await mk('other');
  const plan = await api.post(
    '/api/services',
    { name: 'basic', price: 10, duration_days: 30, currency: 'USD', rate_limit: '5M/10M' },
    { token: admin },
  );
  basic = plan.body.data.id;
  for (const r of [root, other]) {
    const res = await api.post(
      `/api/resellers/${r}/service-limits`,
      { service_id: basic, max_subscribers: null },
      { token: admin },
    );
    expect(res.status).toBe(200);
  }
});
afterAll(() => t.close());

describe('auto-renew and the blocked state at expiry', () => {
  let funded: { id: number; username: string };
  let poor: { id: number; username: string };
  let manual: { id: number; username: string };
  let before: number;
  let first: SweepCounts;

  beforeAll(async () => {
    funded = await mkSub({ auto_renew: true });
    poor = await mkSub({ auto_renew: true });
    manual = await mkSub({ auto_renew: false });
    await fund(funded.id, 10);
    await fund(poor.id, 5);
    await fund(manual.id, 10);
    await expireYesterday([funded.id, poor.id, manual.id]);
    // The one without funds is online: becoming blocked must end its session.
    await t.pool.query(`update subscribers set is_online = true where id = $1`, [poor.id]);
    before = await resellerBalance(root);
    first = await sweep();
  });

  it('renews a funded auto_renew subscriber exactly like /renew, paid from its wallet', async () => {
    expect(first.renewed).toBe(1);
    const s = await sub(funded.id);
    expect(s.expiryDate).toBe(day(30));
    expect(s.lastRenewedOn).toBe(today());
    expect(s.walletBalance).toBe(0);
    expect(s.blockedReason).toBeNull();

    const invs = await invoicesOf(funded.id);
    expect(invs).toHaveLength(1);
    expect(invs[0]).toMatchObject({ kind: 'renewal', status: 'paid', total: 1000, paidAmount: 1000 });
    expect(invs[0].createdBy).toBeNull();

    const ledger = await ledgerOf(funded.id);
    const renewal = ledger.filter((l) => l.type === 'renewal');
    expect(renewal).toHaveLength(1);
    expect(renewal[0]).toMatchObject({ amount: -1000, resellerId: root, createdBy: null });
    const wallet = await t.db.select().from(walletEntries).where(eq(walletEntries.subscriberId, funded.id));
    expect(wallet.map((w) => w.amount).sort((a, b) => a - b)).toEqual([-1000, 1000]);

    // The reseller paid for this one renewal only.
    expect(before - (await resellerBalance(root))).toBe(1000);

    expect(await groups(funded.username)).toEqual([`plan_${basic}`]);
    expect((await checks(funded.username)).Expiration).toBeDefined();
    expect((await outboxOf(funded.id)).map((o) => o.reason)).toContain('renew');
  });

  it('charges nothing without the funds: the subscriber stays expired and is blocked', async () => {
    const s = await sub(poor.id);
    expect(s.expiryDate).toBe(day(-1));
    expect(s.walletBalance).toBe(500);
    expect(s.blockedReason).toBe('expired');
    expect(await invoicesOf(poor.id)).toHaveLength(0);
    expect((await ledgerOf(poor.id)).filter((l) => l.type === 'renewal')).toHaveLength(0);
    expect(await groups(poor.username)).toEqual(['billing_blocked']);
    expect((await checks(poor.username)).Expiration).toBeUndefined();
    // Online when it became blocked: disconnected so its next session lands where the setting says.
    expect((await outboxOf(poor.id)).map((o) => o.reason)).toEqual(['blocked']);
  });

  it('leaves a subscriber without auto_renew expired and blocked, its wallet untouched', async () => {
    const s = await sub(manual.id);
    expect(s).toMatchObject({ expiryDate: day(-1), walletBalance: 1000, blockedReason: 'expired' });
    expect(await invoicesOf(manual.id)).toHaveLength(0);
    expect(await groups(manual.username)).toEqual(['billing_blocked']);
    // Offline: nothing to disconnect.
    expect(await outboxOf(manual.id)).toEqual([]);
    expect(first.blocked).toBeGreaterThanOrEqual(2);
  });

  it('a second sweep changes nothing', async () => {
    const again = await sweep();
    expect(again).toMatchObject({ renewed: 0, blocked: 0, restored: 0 });
    expect(await invoicesOf(funded.id)).toHaveLength(1);
    expect(await resellerBalance(root)).toBe(before - 1000);
    expect((await outboxOf(poor.id)).length).toBe(1);
  });

  it('a blocked subscriber renewed by hand is restored by the renew itself; the sweep keeps it so', async () => {
    const res = await api.post(`/api/subscribers/${manual.id}/renew`, {}, { token: admin });
    expect(res.status).toBe(200);
    expect((await sub(manual.id)).blockedReason).toBeNull();
    const again = await sweep();
    expect(again.blocked).toBe(0);
    expect(await groups(manual.username)).toEqual([`plan_${basic}`]);
  });
});

describe('overdue suspension', () => {
  it('blocks the holder of an invoice unpaid past suspend_overdue_after_days, on the settings change', async () => {
    const s = await mkSub({ expiry_date: day(40) });
    const inv = await api.post(
      '/api/invoices',
      { subscriber_id: s.id, items: [{ description: 'install', qty: 1, unit_price: 25 }] },
      { token: admin },
    );
    expect(inv.status).toBe(201);
    const invoiceId = inv.body.data.id as number;
    await t.pool.query(
      `update invoices set due_date = current_date - 20, issue_date = current_date - 30 where id = $1`,
      [invoiceId],
    );
    await t.pool.query(`update subscribers set is_online = true where id = $1`, [s.id]);

    // Not set: an old unpaid invoice blocks nobody (but the sweep marks it overdue).
    await sweep();
    expect((await sub(s.id)).blockedReason).toBeNull();
    expect((await t.db.select().from(invoices).where(eq(invoices.id, invoiceId)))[0].status).toBe('overdue');

    // PUT /api/settings broadcasts settings.changed: the sweep it starts suspends the subscriber.
    const put = await api.put('/api/settings', { suspend_overdue_after_days: 10 }, { token: admin });
    expect(put.status).toBe(200);
    await waitFor('the suspension', async () => (await sub(s.id)).blockedReason === 'overdue');
    expect(await groups(s.username)).toEqual(['billing_blocked']);
    expect((await outboxOf(s.id)).map((o) => o.reason)).toEqual(['blocked']);

    // A threshold the invoice has not passed yet lifts it again.
    const later = await api.put('/api/settings', { suspend_overdue_after_days: 30 }, { token: admin });
    expect(later.status).toBe(200);
    await waitFor('the restore', async () => (await sub(s.id)).blockedReason === null);
    expect(await groups(s.username)).toEqual([`plan_${basic}`]);
    expect((await outboxOf(s.id)).map((o) => o.reason)).toEqual(['blocked', 'restored']);

    await api.put('/api/settings', { suspend_overdue_after_days: null }, { token: admin });
    await sweep();
  });
});

// ------------------------------------------------------------------ reminders

interface Received {
  path: string;
  json: Record<string, unknown>;
}
type Reply = { status: number; body: unknown };

class Stub {
  received: Received[] = [];
  reply: (r: Received) => Reply = () => ({ status: 500, body: {} });
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rec = { path: req.url ?? '', json: JSON.parse(Buffer.concat(chunks).toString() || '{}') };
      this.received.push(rec);
      const reply = this.reply(rec);
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

/** Telegram: chat 777 has blocked the bot; every other chat receives. */
let nextMessage = 100;
const telegram = (r: Received): Reply =>
  r.json.chat_id === '777'
    ? { status: 403, body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' } }
    : { status: 200, body: { ok: true, result: { message_id: nextMessage++, chat: { id: Number(r.json.chat_id) } } } };

describe('reminders', () => {
  let tg: Stub;
  let wa: Stub;
  let r3: { id: number; username: string; expiry_date: string };
  let r1: { id: number; username: string };
  let r0: { id: number; username: string };
  let bad: { id: number; username: string };
  let renewing: { id: number; username: string };
  let resellerShort: { id: number; username: string };
  const sentTo = (chat: string) => tg.received.filter((m) => m.json.chat_id === chat);

  beforeAll(async () => {
    tg = new Stub();
    tg.reply = telegram;
    wa = new Stub();
    wa.reply = () => ({ status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: 'wamid.1' }] } });
    const tgBase = await tg.start();
    const waBase = await wa.start();
    r3 = await mkSub({ expiry_date: day(3), phone: '1003' });
    r1 = await mkSub({ expiry_date: day(1), phone: '1001' });
    r0 = await mkSub({ expiry_date: day(0), phone: '777' });
    bad = await mkSub({ expiry_date: day(1), phone: '+1 555 0100' });
    await mkSub({ expiry_date: day(2), phone: '1002' }); // no rule for 2 days
    await mkSub({ expiry_date: day(1) }); // no phone
    const inactive = await mkSub({ expiry_date: day(1), phone: '1004' });
    await t.pool.query(`update subscribers set status = 'inactive' where id = $1`, [inactive.id]);
    // auto_renew with a wallet that covers the price: renewed at expiry, nothing to remind.
    renewing = await mkSub({ expiry_date: day(1), phone: '1005', auto_renew: true });
    await fund(renewing.id, 10);
    // The same under a reseller that cannot pay the renewal's charge: it will not renew, so it is
    // reminded (before, left out by its wallet alone).
    const broke = await api.post('/api/resellers', { name: 'broke', balance: 5, currency: 'USD' }, { token: admin });
    const limit = { service_id: basic, max_subscribers: null };
    expect(
      (await api.post(`/api/resellers/${broke.body.data.id}/service-limits`, limit, { token: admin })).status,
    ).toBe(200);
    resellerShort = await mkSub({
      expiry_date: day(1),
      phone: '1006',
      auto_renew: true,
      reseller_id: broke.body.data.id,
    });
    await fund(resellerShort.id, 10);
    await saveSettings(db(), {
      messaging_provider: 'telegram',
      telegram_bot_token: '123:abc',
      telegram_base_url: tgBase,
      whatsapp_access_token: 'wa-token',
      whatsapp_phone_number_id: '555',
      whatsapp_base_url: waBase,
      // The stubs listen on loopback, which the notifier's address policy refuses by default.
      allow_private_targets: true,
    });
    // reminders_enabled is still false: nothing is claimed yet.
    const off = await sweep();
    expect(off.reminded).toBe(0);
    expect(await t.db.select().from(notifications)).toHaveLength(0);
    await saveSettings(db(), { reminders_enabled: true, reminder_days: [3, 1, 0] });
  });
  afterAll(async () => {
    await saveSettings(db(), { reminders_enabled: false, messaging_provider: 'none' });
    await tg.stop();
    await wa.stop();
  });

  it('sends one message per rule and expiry date, records failures, and sends nothing the second time', async () => {
    const first = await sweep();
    expect(first).toMatchObject({ reminded: 3, reminders_failed: 2 });
    const second = await sweep();
    expect(second).toMatchObject({ reminded: 0, reminders_failed: 0 });

    expect(sentTo('1003')).toHaveLength(1);
    expect(sentTo('1001')).toHaveLength(1);
    expect(sentTo('777')).toHaveLength(1);
    expect(sentTo('1002')).toHaveLength(0);
    expect(sentTo('1004')).toHaveLength(0);
    expect(sentTo('1005')).toHaveLength(0);
    expect(sentTo('1006')).toHaveLength(1);
    expect(tg.received).toHaveLength(4);
    expect(tg.received[0].path).toBe('/bot123:abc/sendMessage');

    const text = sentTo('1003')[0].json.text as string;
    expect(text).toContain(r3.username);
    expect(text).toContain(formatDate(day(3), 'en'));
    expect(text).toContain('10.00 USD');
    expect(text).toContain('http://billing.test/portal');

    const rows = await t.db.select().from(notifications);
    expect(rows).toHaveLength(5);
    const of = (id: number) => rows.find((n) => n.subscriberId === id)!;
    expect(of(r3.id)).toMatchObject({
      kind: 'expiry_reminder',
      ruleDays: 3,
      expiryDate: day(3),
      status: 'sent',
      provider: 'telegram',
      recipient: '1003',
      message: text,
      error: null,
    });
    expect(of(r3.id).sentAt).not.toBeNull();
    expect(of(r1.id)).toMatchObject({ ruleDays: 1, status: 'sent' });
    expect(of(r0.id)).toMatchObject({ ruleDays: 0, status: 'failed', sentAt: null });
    expect(of(r0.id).error).toContain('bot was blocked by the user');
    expect(of(bad.id)).toMatchObject({ ruleDays: 1, status: 'failed' });
    expect(of(bad.id).error).toContain('Telegram chat id');
  });

  it('two sweeps at once still send one message per rule', async () => {
    const s = await mkSub({ expiry_date: day(1), phone: '2001' });
    const race = await Promise.all(
      [1, 2, 3].map(() => t.app.broker.call<SweepResult, Record<string, never>>('lifecycle.sweep', {})),
    );
    expect(race.filter((r) => !r.skipped).length).toBeGreaterThanOrEqual(1);
    await sweep();
    expect(sentTo('2001')).toHaveLength(1);
    const rows = await t.db.select().from(notifications).where(eq(notifications.subscriberId, s.id));
    expect(rows.map((r) => r.status)).toEqual(['sent']);
  });

  it('a row another replica already claimed is not sent again; a new expiry date is a new reminder', async () => {
    const s = await mkSub({ expiry_date: day(3), phone: '3001' });
    await t.db.insert(notifications).values({
      subscriberId: s.id,
      kind: 'expiry_reminder',
      ruleDays: 3,
      expiryDate: day(3),
      status: 'sent',
      provider: 'telegram',
    });
    await sweep();
    expect(sentTo('3001')).toHaveLength(0);

    await t.pool.query(`update subscribers set expiry_date = $2 where id = $1`, [s.id, day(1)]);
    await sweep();
    expect(sentTo('3001')).toHaveLength(1);
  });

  it('at most once: a row a crash left sending is failed, never resent; one left pending goes out', async () => {
    const crashed = await mkSub({ expiry_date: day(3), phone: '4001' });
    const waiting = await mkSub({ expiry_date: day(3), phone: '4002' });
    const row = (subscriberId: number, status: string) => ({
      subscriberId,
      kind: 'expiry_reminder',
      ruleDays: 3,
      expiryDate: day(3),
      status,
    });
    await t.db.insert(notifications).values([row(crashed.id, 'sending'), row(waiting.id, 'pending')]);
    const counts = await sweep();
    expect(counts.reminders_abandoned).toBe(1);
    expect(sentTo('4001')).toHaveLength(0);
    expect(sentTo('4002')).toHaveLength(1);
    const [c] = await t.db.select().from(notifications).where(eq(notifications.subscriberId, crashed.id));
    expect(c).toMatchObject({ status: 'failed', error: 'outcome unknown after a restart' });
    const [w] = await t.db.select().from(notifications).where(eq(notifications.subscriberId, waiting.id));
    expect(w.status).toBe('sent');
  });

  it('WhatsApp: a text message to the international number, in Arabic when that is the language', async () => {
    await saveSettings(db(), { messaging_provider: 'whatsapp', language: 'ar' });
    try {
      const s = await mkSub({ expiry_date: day(1), phone: '+964 770 123 4567' });
      await sweep();
      expect(wa.received).toHaveLength(1);
      expect(wa.received[0].path).toBe('/555/messages');
      const body = wa.received[0].json as { to: string; type: string; text: { body: string } };
      expect(body).toMatchObject({ messaging_product: 'whatsapp', to: '9647701234567', type: 'text' });
      expect(body.text.body).toContain('سعر التجديد');
      expect(body.text.body).toContain(s.username);
      const [n] = await t.db.select().from(notifications).where(eq(notifications.subscriberId, s.id));
      expect(n).toMatchObject({ status: 'sent', provider: 'whatsapp', recipient: '9647701234567' });
    } finally {
      await saveSettings(db(), { messaging_provider: 'telegram', language: 'en' });
    }
  });

  it('GET /api/notifications: newest first, paginated, in scope; 400, 403 and 404', async () => {
    const extra = await mkSub({ expiry_date: day(0), phone: '5001' });
    await sweep();
    await t.pool.query(`update subscribers set expiry_date = $2 where id = $1`, [extra.id, day(3)]);
    await sweep();
    const all = await api.get(`/api/notifications?subscriber_id=${extra.id}`, { token: admin });
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    expect(all.body.data.map((n: { rule_days: number }) => n.rule_days)).toEqual([3, 0]);
    expect(all.body.data[0]).toEqual({
      id: expect.any(Number),
      subscriber_id: extra.id,
      kind: 'expiry_reminder',
      rule_days: 3,
      expiry_date: day(3),
      provider: 'telegram',
      recipient: '5001',
      message: expect.stringContaining(extra.username),
      status: 'sent',
      error: null,
      created_at: expect.any(String),
      sent_at: expect.any(String),
    });
    const page2 = await api.get(`/api/notifications?subscriber_id=${extra.id}&page=2&limit=1`, { token: admin });
    expect(page2.status).toBe(200);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body.data[0].rule_days).toBe(0);
    expect(page2.body.pagination).toEqual({ page: 2, limit: 1, total: 2 });

    const viewer = token('reseller', { resellerId: root, permissions: ['subscribers.view'] });
    expect((await api.get(`/api/notifications?subscriber_id=${extra.id}`, { token: viewer })).status).toBe(200);

    const missing = await api.get('/api/notifications', { token: admin });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('subscriber_id');
    expect((await api.get('/api/notifications?subscriber_id=abc', { token: admin })).status).toBe(400);
    expect((await api.get('/api/notifications?subscriber_id=999999', { token: admin })).status).toBe(404);
    const stranger = token('reseller', { resellerId: other, permissions: ['subscribers.view'] });
    expect((await api.get(`/api/notifications?subscriber_id=${extra.id}`, { token: stranger })).status).toBe(403);
    const blind = token('reseller', { resellerId: root, permissions: ['subscribers.edit'] });
    expect((await api.get(`/api/notifications?subscriber_id=${extra.id}`, { token: blind })).status).toBe(403);
  });
});

describe('two replicas', () => {
  it('sweeping the same database at once renew every subscriber exactly once', async () => {
    const second = await startTestApp({ databaseUrl: t.databaseUrl });
    try {
      const ids: number[] = [];
      for (let i = 0; i < 12; i++) {
        const s = await mkSub({ auto_renew: true });
        await fund(s.id, 10);
        ids.push(s.id);
      }
      await expireYesterday(ids);
      const call = (app: TestApp) =>
        app.app.broker
          .call<SweepResult, Record<string, never>>('lifecycle.sweep', {})
          .then((r) => (r.skipped ? 0 : r.renewed));
      const renewed = await Promise.all([call(t), call(second), call(t), call(second)]);
      const last = await sweep(second);
      expect(renewed.reduce((a, b) => a + b, 0) + last.renewed).toBe(ids.length);

      const inv = await t.pool.query<{ subscriber_id: number; n: number }>(
        `select subscriber_id, count(*)::int as n from invoices where subscriber_id = any($1::int[]) group by subscriber_id`,
        [ids],
      );
      expect(inv.rows).toHaveLength(ids.length);
      expect(inv.rows.every((r) => r.n === 1)).toBe(true);
      const ledger = await t.db
        .select({ n: sql<number>`count(*)::int` })
        .from(transactions)
        .where(
          and(eq(transactions.type, 'renewal'), sql`${transactions.subscriberId} = any(${sql.param(ids)}::int[])`),
        );
      expect(ledger[0].n).toBe(ids.length);
      for (const id of ids) expect((await sub(id)).expiryDate).toBe(day(30));
    } finally {
      await second.close();
    }
  });
});
