/**
 * Outgoing webhooks through HTTP (docs/webhooks.md): the address policy on the URL, CRUD with its
 * validation and audit rows, events written by the triggers in the transaction of the change and
 * delivered signed to a local receiver (verified with the doc's own snippet), retries with growing
 * delays, disabling after a run of failures, the delivery log and redelivery by hand.
 */
import fs from 'node:fs';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { auditLog, webhookAttempts, webhookDeliveries, webhooks } from '../../shared/db/schema';
import { repoRoot } from '../../shared/paths';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';
import { waitFor } from '../helpers/wait';

// Short delays so the schedule runs within the test; read when the services are created.
process.env.WEBHOOK_RETRY_BASE_MS = '150';
process.env.WEBHOOK_RETRY_MAX_MS = '5000';
process.env.WEBHOOK_POLL_MS = '50';
// The app's first deliveries run cold code: under a loaded CI run 3 s was not always enough, and a
// late first attempt is retried (attempts 2), which the lifecycle test below counts.
const ATTEMPT_TIMEOUT_MS = 10_000;
process.env.WEBHOOK_TIMEOUT_MS = String(ATTEMPT_TIMEOUT_MS);
process.env.WEBHOOK_DISABLE_AFTER = '4';

let t: TestApp;
let api: ReturnType<typeof client>;
let rx: Receiver;
const admin = adminToken();
const SECRET = 'test-signing-secret-0123456789';

/** The receiver's verification exactly as docs/webhooks.md shows it (the block after its marker). */
function docVerify(): (header: string, rawBody: string, secret: string) => boolean {
  const doc = fs.readFileSync(path.join(repoRoot(), 'docs', 'webhooks.md'), 'utf8');
  const code = /<!-- verify-snippet -->\s*```js\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!code) throw new Error('docs/webhooks.md has no verify snippet');
  return new Function('require', `${code}\nreturn verify;`)(require);
}

interface Body {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}
const bodies = (p: string) => rx.on(p).map((r) => JSON.parse(r.body) as Body);

let reseller: number;
let plan: number;
let seq = 0;
async function mkSub(): Promise<{ id: number; username: string }> {
  seq += 1;
  const res = await api.post(
    '/api/subscribers',
    { username: `hook${seq}@isp`, password: 'secret1', service_id: plan, reseller_id: reseller },
    { token: admin },
  );
  expect(res.status).toBe(201);
  return res.body.data;
}

async function mkHook(p: string, events: string[], extra: Record<string, unknown> = {}) {
  const res = await api.post('/api/webhooks', { url: rx.base + p, events, ...extra }, { token: admin });
  expect(res.status).toBe(201);
  return res.body.data as { id: number; secret: string };
}

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestApp();
  api = client(t.baseUrl);
  const r = await api.post('/api/resellers', { name: 'Hooks', balance: 1000, currency: 'USD' }, { token: admin });
  reseller = r.body.data.id;
  const p = await api.post(
    '/api/services',
    { name: 'hooks-basic', price: 10, duration_days: 30, currency: 'USD' },
    { token: admin },
  );
  plan = p.body.data.id;
  await api.post(
    `/api/resellers/${reseller}/service-limits`,
    { service_id: plan, max_subscribers: null },
    { token: admin },
  );
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

describe('the address policy and validation', () => {
  it('refuses a loopback URL by default with 400 naming url, and writes nothing', async () => {
    const res = await api.post('/api/webhooks', { url: `${rx.base}/ok`, events: ['invoice.paid'] }, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('url refused: a loopback, private or reserved address');
    const meta = await api.post(
      '/api/webhooks',
      { url: 'http://169.254.169.254/latest', events: ['invoice.paid'] },
      { token: admin },
    );
    expect(meta.status).toBe(400);
    expect(await t.db.select().from(webhooks)).toEqual([]);
  });

  it('400 for each bad field, 403 for a non-admin, 404 for an unknown id; nothing written', async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ events: ['invoice.paid'] }, 'url'],
      [{ url: 'ftp://example.com/x', events: ['invoice.paid'] }, 'url'],
      [{ url: 'https://example.com/x', events: [] }, 'events'],
      [{ url: 'https://example.com/x', events: ['invoice.deleted'] }, 'events'],
      [{ url: 'https://example.com/x', events: ['invoice.paid'], secret: 'short' }, 'secret'],
      [{ url: 'https://example.com/x', events: ['invoice.paid'], colour: 'red' }, 'colour'],
    ];
    for (const [body, field] of bad) {
      const res = await api.post('/api/webhooks', body, { token: admin });
      expect([res.status, res.body.message]).toEqual([400, expect.stringContaining(field)]);
    }
    const reseller = token('reseller', { resellerId: 1, permissions: ['subscribers.view'] });
    const denied = await api.post(
      '/api/webhooks',
      { url: 'https://example.com/x', events: ['invoice.paid'] },
      { token: reseller },
    );
    expect(denied.status).toBe(403);
    expect((await api.get('/api/webhooks', { token: reseller })).status).toBe(403);
    expect((await api.get('/api/webhooks/9999', { token: admin })).status).toBe(404);
    expect((await api.put('/api/webhooks/9999', { enabled: false }, { token: admin })).status).toBe(404);
    expect((await api.del('/api/webhooks/9999', { token: admin })).status).toBe(404);
    expect((await api.put('/api/webhooks/9999', {}, { token: admin })).status).toBe(400);
    expect(await t.db.select().from(webhooks)).toEqual([]);
  });
});

describe('with allow_private_targets', () => {
  beforeAll(async () => {
    const res = await api.put('/api/settings', { allow_private_targets: true }, { token: admin });
    expect(res.status).toBe(200);
  });

  it('create shows the secret once, stores it encrypted, audits without it; list/get/update/delete', async () => {
    const created = await mkHook('/crud', ['invoice.paid'], { description: 'books' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const [row] = await t.db.select().from(webhooks).where(eq(webhooks.id, created.id));
    expect(row.secretEnc).not.toContain(created.secret);
    const list = await api.get('/api/webhooks', { token: admin });
    expect(list.body.events).toContain('subscriber.disconnected');
    expect(list.body.data.find((w: { id: number }) => w.id === created.id)).toMatchObject({
      url: `${rx.base}/crud`,
      events: ['invoice.paid'],
      enabled: true,
    });
    expect(JSON.stringify(list.body)).not.toContain(created.secret);
    expect((await api.get(`/api/webhooks/${created.id}`, { token: admin })).body.data).not.toHaveProperty('secret');
    const upd = await api.put(
      `/api/webhooks/${created.id}`,
      { events: ['invoice.paid', 'invoice.overdue'], enabled: false },
      { token: admin },
    );
    expect(upd.status).toBe(200);
    expect(upd.body.data).toMatchObject({ events: ['invoice.paid', 'invoice.overdue'], enabled: false });
    expect((await api.put(`/api/webhooks/${created.id}`, { url: 'http://10.0.0.1/' }, { token: admin })).status).toBe(
      200,
    );
    expect((await api.del(`/api/webhooks/${created.id}`, { token: admin })).status).toBe(200);
    expect(await t.db.select().from(webhooks).where(eq(webhooks.id, created.id))).toEqual([]);
    const audit = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.entity, 'webhook'), eq(auditLog.entityId, created.id)))
      .orderBy(auditLog.id);
    expect(audit.map((a) => a.action)).toEqual([
      'webhook.create',
      'webhook.update',
      'webhook.update',
      'webhook.delete',
    ]);
    expect(audit[0].details).toMatchObject({ url: [null, `${rx.base}/crud`], secret: [null, '********'] });
    expect(audit[1].details).toMatchObject({ enabled: [true, false] });
    expect(JSON.stringify(audit)).not.toContain(created.secret);
  });

  it('delivers the lifecycle and billing events, signed; the doc snippet verifies them', async () => {
    const hook = await mkHook(
      '/all',
      [
        'subscriber.created',
        'subscriber.renewed',
        'subscriber.expired',
        'subscriber.restored',
        'invoice.created',
        'invoice.paid',
        'invoice.overdue',
        'payment.created',
      ],
      { secret: SECRET },
    );
    expect(hook.secret).toBe(SECRET);
    const sub = await mkSub();
    // Expired by the lifecycle sweep, then renewed (restored, renewed, invoiced) and paid by hand.
    await t.pool.query(`update subscribers set expiry_date = current_date - 3 where id = $1`, [sub.id]);
    await t.app.broker.call('lifecycle.sweep');
    const renew = await api.post(`/api/subscribers/${sub.id}/renew`, {}, { token: admin });
    expect(renew.status).toBe(200);
    const invoiceId = renew.body.data.invoice_id as number;
    const paid = await api.post(`/api/invoices/${invoiceId}/payment`, { amount: 10 }, { token: admin });
    expect(paid.status).toBe(200);

    const want = [
      'subscriber.created',
      'subscriber.expired',
      'invoice.created',
      'subscriber.restored',
      'subscriber.renewed',
      'payment.created',
      'invoice.paid',
    ];
    await waitFor('every event at the receiver', () => want.every((e) => bodies('/all').some((b) => b.type === e)));
    const verify = docVerify();
    for (const r of rx.on('/all')) {
      expect(verify(String(r.headers['x-webhook-signature']), r.body, SECRET)).toBe(true);
      expect(verify(String(r.headers['x-webhook-signature']), r.body.replace('"data"', '"data" '), SECRET)).toBe(false);
      expect(verify(String(r.headers['x-webhook-signature']), r.body, 'another-secret-0000')).toBe(false);
      const b = JSON.parse(r.body) as Body;
      expect(r.headers['x-webhook-event']).toBe(b.type);
      expect(r.headers['x-webhook-event-id']).toBe(b.id);
    }
    const byType = Object.fromEntries(bodies('/all').map((b) => [b.type, b]));
    expect(byType['subscriber.created'].data).toMatchObject({ id: sub.id, username: sub.username });
    expect(byType['subscriber.expired'].data).toMatchObject({ id: sub.id, blocked_reason: 'expired' });
    expect(byType['subscriber.restored'].data).toMatchObject({ id: sub.id, previous_blocked_reason: 'expired' });
    expect(byType['invoice.created'].data).toMatchObject({ id: invoiceId, total: 10, currency: 'USD' });
    expect(byType['payment.created'].data).toMatchObject({ invoice_id: invoiceId, amount: 10, method: 'cash' });
    expect(byType['invoice.paid'].data).toMatchObject({ id: invoiceId, status: 'paid', paid_amount: 10 });
    // One delivery per event, each delivered at its first attempt.
    const rows = await waitFor('every delivery recorded', async () => {
      const all = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.id));
      return all.every((d) => d.status === 'succeeded') && all;
    });
    expect(rows.map((d) => d.event).sort()).toEqual([...want].sort());
    expect(rows.every((d) => d.attempts === 1)).toBe(true);
    expect(new Set(rows.map((d) => d.eventId)).size).toBe(rows.length);

    // An overdue invoice, marked by the sweep.
    await t.pool.query(
      `update invoices set status = 'pending', paid_amount = 0, due_date = current_date - 40 where id = $1`,
      [invoiceId],
    );
    await t.app.broker.call('lifecycle.sweep');
    await waitFor('invoice.overdue', () => bodies('/all').some((b) => b.type === 'invoice.overdue'));
  });

  it('a quota block and a disconnect carried out are events too; a disconnect that failed is not', async () => {
    await mkHook('/access', ['subscriber.blocked', 'subscriber.disconnected']);
    const sub = await mkSub();
    // The writers of these rows are the FUP engine and network-access; their rows are what the triggers watch.
    await t.pool.query(`update subscribers set blocked_reason = 'quota' where id = $1`, [sub.id]);
    await t.pool.query(
      `insert into coa_outcomes (source, action, subscriber_id, username, reason, outcome, sessions)
       values ('event', 'disconnect', $1, $2, 'blocked', 'disconnected', '[{}]'::jsonb),
              ('event', 'disconnect', $1, $2, 'blocked', 'failed', '[]'::jsonb),
              ('event', 'rate_limit', $1, $2, 'fup', 'applied', '[]'::jsonb)`,
      [sub.id, sub.username],
    );
    await waitFor('both events', () => rx.on('/access').length === 2);
    // Sent concurrently: no order between them (docs/webhooks.md).
    const got = bodies('/access').sort((a, b) => a.type.localeCompare(b.type));
    expect(got.map((b) => b.type)).toEqual(['subscriber.blocked', 'subscriber.disconnected']);
    expect(got[0].data).toMatchObject({ id: sub.id, blocked_reason: 'quota', previous_blocked_reason: null });
    expect(got[1].data).toMatchObject({
      subscriber_id: sub.id,
      username: sub.username,
      reason: 'blocked',
      outcome: 'disconnected',
      sessions: 1,
    });
  });

  it('bounds an attempt: a redirect is a failure and not followed, a hang times out, a huge answer is cut', async () => {
    rx.modes.set('/moved', 'redirect');
    rx.modes.set('/slow', 'hang');
    rx.modes.set('/big', 'big');
    const hooks = {
      moved: await mkHook('/moved', ['subscriber.created']),
      slow: await mkHook('/slow', ['subscriber.created']),
      big: await mkHook('/big', ['subscriber.created']),
    };
    await mkSub();
    const firstAttempt = (hookId: number) =>
      waitFor(`an attempt of webhook ${hookId}`, async () => {
        const [d] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hookId));
        const [a] = await t.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, d.id));
        return a && { d, a };
      });
    const moved = await firstAttempt(hooks.moved.id);
    expect(moved.a).toMatchObject({ statusCode: 302, error: null });
    // Its day over: the next failure is its last.
    await t.pool.query(`update webhook_deliveries set created_at = now() - interval '1 day' where id = $1`, [
      moved.d.id,
    ]);
    await waitFor('the redirected delivery failed for good', async () => {
      const [d] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, moved.d.id));
      return d.status === 'failed';
    });
    expect(rx.on('/landing')).toEqual([]);
    const slow = await firstAttempt(hooks.slow.id);
    expect(slow.a).toMatchObject({ statusCode: null, error: `no answer within ${ATTEMPT_TIMEOUT_MS} ms` });
    expect(slow.a.durationMs).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS);
    const big = await firstAttempt(hooks.big.id);
    expect(big.a.statusCode).toBe(200);
    // Read up to the bound and no further; a private target's answer is not kept (the test below).
    expect(big.a.responseBody).toBeNull();
    const [bigDelivery] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, big.d.id));
    expect(bigDelivery.status).toBe('succeeded');
  });

  it('keeps the status of a private target’s answer and nothing of its body, in the log and its API', async () => {
    // 127.0.0.1 is reached only because allow_private_targets is on: its answer must not be readable.
    const hook = await mkHook('/private-answer', ['subscriber.created']);
    await mkSub();
    const [delivery] = await waitFor('the delivery succeeded', async () => {
      const rows = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.id));
      return rows[0]?.status === 'succeeded' && rows;
    });
    const attempts = await t.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, delivery.id));
    expect(attempts.map((a) => [a.statusCode, a.error, a.responseBody])).toEqual([[200, null, null]]);
    const listed = await api.get(`/api/webhooks/${hook.id}/deliveries`, { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.data[0].attempt_log).toEqual([
      expect.objectContaining({ trigger: 'auto', status_code: 200, error: null, response_body: null }),
    ]);
    expect(listed.text).not.toContain('thanks');
  });

  it('an event nobody asked for writes no delivery', async () => {
    const before = (await t.db.select().from(webhookDeliveries)).length;
    await t.pool.query(`update webhooks set enabled = false`);
    await mkSub();
    expect((await t.db.select().from(webhookDeliveries)).length).toBe(before);
  });

  it('a write racing the deletion of its endpoint succeeds and leaves no delivery', async () => {
    const hook = await mkHook('/race', ['subscriber.created']);
    const deleting = await t.pool.connect();
    try {
      await deleting.query('begin');
      await deleting.query('delete from webhooks where id = $1', [hook.id]);
      seq += 1;
      const creating = api.post(
        '/api/subscribers',
        { username: `hook${seq}@isp`, password: 'secret1', service_id: plan, reseller_id: reseller },
        { token: admin },
      );
      // The subscriber's insert reaches the endpoint row the uncommitted delete holds, and waits.
      await waitFor('the insert waiting on the endpoint row', async () => {
        const { rowCount } = await t.pool.query(
          `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        return rowCount;
      });
      await deleting.query('commit');
      const created = await creating;
      expect(created.status).toBe(201);
      expect(await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.id))).toEqual([]);
    } finally {
      deleting.release();
    }
  });

  it('retries a failing receiver with growing delays, disables it after the run, lists and redelivers', async () => {
    rx.modes.set('/broken', 'fail');
    const hook = await mkHook('/broken', ['subscriber.created']);
    await mkSub();
    const disabled = await waitFor('the endpoint disabled', async () => {
      const [w] = await t.db.select().from(webhooks).where(eq(webhooks.id, hook.id));
      return !w.enabled && w;
    });
    expect(disabled.disabledReason).toBe('4 failed attempts in a row; the last: HTTP 500');
    const [delivery] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.id));
    expect(delivery).toMatchObject({ status: 'pending', attempts: 4, lastStatusCode: 500 });
    const attempts = await t.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, delivery.id))
      .orderBy(webhookAttempts.id);
    expect(attempts.map((a) => [a.trigger, a.statusCode, a.responseBody])).toEqual(Array(4).fill(['auto', 500, null]));
    // Each wait is at least the schedule's: 150, 300, 600 ms.
    const gaps = attempts.slice(1).map((a, i) => a.createdAt.getTime() - attempts[i].createdAt.getTime());
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(150 * 2 ** i - 5));
    // The same event each time, signed each time.
    const sent = rx.on('/broken');
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((r) => r.body)).size).toBe(1);
    const [audit] = await t.db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.action, 'webhook.disable'), eq(auditLog.entityId, hook.id)));
    expect(audit).toMatchObject({ actorType: 'system', details: { reason: disabled.disabledReason } });

    const listed = await api.get(`/api/webhooks/${hook.id}/deliveries`, { token: admin });
    expect(listed.status).toBe(200);
    expect(listed.body.pagination.total).toBe(1);
    expect(listed.body.data[0]).toMatchObject({ id: delivery.id, event: 'subscriber.created', status: 'pending' });
    expect(listed.body.data[0].attempt_log).toHaveLength(4);
    expect((await api.get(`/api/webhooks/${hook.id}/deliveries?status=succeeded`, { token: admin })).body.data).toEqual(
      [],
    );
    const shown = await api.get(`/api/webhooks/${hook.id}`, { token: admin });
    expect(shown.body.data).toMatchObject({ enabled: false, disabled_reason: disabled.disabledReason });

    rx.modes.set('/broken', 'ok');
    const again = await api.post(`/api/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`, {}, { token: admin });
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({ status: 'succeeded', last_status_code: 200 });
    expect(again.body.data.attempt_log.at(-1)).toMatchObject({ trigger: 'manual', status_code: 200 });
    expect(JSON.parse(rx.on('/broken').at(-1)!.body).id).toBe(delivery.eventId);
    expect(
      (await api.post(`/api/webhooks/${hook.id}/deliveries/99999999/redeliver`, {}, { token: admin })).status,
    ).toBe(404);
    const other = await mkHook('/other', ['invoice.paid']);
    expect(
      (await api.post(`/api/webhooks/${other.id}/deliveries/${delivery.id}/redeliver`, {}, { token: admin })).status,
    ).toBe(404);

    // Enabling again clears the run and the reason.
    const enabled = await api.put(`/api/webhooks/${hook.id}`, { enabled: true }, { token: admin });
    expect(enabled.body.data).toMatchObject({ enabled: true, disabled_reason: null, consecutive_failures: 0 });
  });
  it('prunes settled deliveries past the retention with their attempts, and keeps pending ones', async () => {
    const [old] = (
      await t.pool.query<{ id: string }>(
        `update webhook_deliveries set created_at = now() - interval '31 days'
          where id = (select min(id) from webhook_deliveries where status = 'succeeded') returning id`,
      )
    ).rows;
    const [waiting] = (
      await t.pool.query<{ id: string }>(
        `update webhook_deliveries set created_at = now() - interval '31 days', status = 'pending',
                next_attempt_at = now() + interval '1 hour'
          where id = (select max(id) from webhook_deliveries where status = 'succeeded') returning id`,
      )
    ).rows;
    const res = await t.app.broker.call<{ deleted: number }>('webhookDelivery.prune');
    expect(res.deleted).toBe(1);
    const left = await t.pool.query(`select id from webhook_deliveries where id = any($1::bigint[])`, [
      [old.id, waiting.id],
    ]);
    expect(left.rows.map((r) => String(r.id))).toEqual([String(waiting.id)]);
    const attempts = await t.pool.query(`select count(*)::int as n from webhook_attempts where delivery_id = $1`, [
      old.id,
    ]);
    expect(attempts.rows[0].n).toBe(0);
  });

  it('with the setting turned off, an update to a private URL is refused and the next attempt reaches nobody', async () => {
    const hook = await mkHook('/off', ['subscriber.created']);
    expect((await api.put('/api/settings', { allow_private_targets: false }, { token: admin })).status).toBe(200);
    try {
      const moved = await api.put(`/api/webhooks/${hook.id}`, { url: `${rx.base}/elsewhere` }, { token: admin });
      expect(moved.status).toBe(400);
      expect(moved.body.message).toBe('url refused: a loopback, private or reserved address');
      await mkSub();
      const attempt = await waitFor('an attempt of the endpoint', async () => {
        const [d] = await t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.id));
        if (!d) return undefined;
        const [a] = await t.db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, d.id));
        return a;
      });
      expect(attempt).toMatchObject({
        statusCode: null,
        error: 'url refused: a loopback, private or reserved address',
      });
      expect(rx.on('/off')).toEqual([]);
      expect(rx.on('/elsewhere')).toEqual([]);
    } finally {
      await api.put('/api/settings', { allow_private_targets: true }, { token: admin });
    }
  });
});
