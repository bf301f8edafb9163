/**
 * Crash safety of outgoing webhooks (docs/webhooks.md): the delivery row commits with the change,
 * so a process killed (SIGKILL) while the receiver holds its request loses nothing; the process
 * started next sends the same event again once the dead worker's lease ends, and records exactly
 * one delivery. Runs `dist/server.js` (build first).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { eq } from 'drizzle-orm';
import { Pool } from 'pg';
import { webhookAttempts, webhookDeliveries } from '../../shared/db/schema';
import { adminToken, createTestDatabase, http, startTestApp, testEnv, type TestApp } from '../helpers/app';
import { freePort, serverEntry } from '../helpers/server-process';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';
import { waitFor } from '../helpers/wait';

// The lease of a taken delivery is the timeout plus 5 s: short, so the restart retries soon.
process.env.WEBHOOK_TIMEOUT_MS = '1000';
process.env.WEBHOOK_POLL_MS = '100';

let rx: Receiver;
let child: ChildProcess | undefined;
let restarted: TestApp | undefined;
let pool: Pool;

afterAll(async () => {
  child?.kill('SIGKILL');
  await restarted?.close();
  await pool?.end();
  await rx?.close();
});

it('a delivery in flight when its process is killed arrives after the restart, once', async () => {
  rx = await startReceiver();
  rx.modes.set('/crash', 'hang');
  const databaseUrl = await createTestDatabase();
  pool = new Pool({ connectionString: databaseUrl, max: 2 });
  const port = await freePort();
  const { TRANSPORTER: _t, SERVICES: _s, ...inherited } = process.env;
  child = spawn(process.execPath, [serverEntry], {
    env: { ...inherited, ...testEnv(databaseUrl, { PORT: String(port) }) },
    stdio: 'ignore',
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor('the server up', async () => (await fetch(`${base}/health`)).status === 200, 60_000);
  // The manager behind adminToken(): the gateway trusts the row, not the token.
  await pool.query(
    `insert into managers (id, username, password_hash, role, permissions) values (1, 'crash-admin', '!', 'admin', '[]'::jsonb)
     on conflict (id) do nothing`,
  );
  const admin = adminToken();
  const call = (method: string, path: string, body?: unknown) => http(base, method, path, { token: admin, body });
  expect((await call('PUT', '/api/settings', { allow_private_targets: true })).status).toBe(200);
  const hook = await call('POST', '/api/webhooks', { url: `${rx.base}/crash`, events: ['subscriber.created'] });
  expect(hook.status).toBe(201);
  const reseller = await call('POST', '/api/resellers', { name: 'Crash', balance: 100, currency: 'USD' });
  const plan = await call('POST', '/api/services', { name: 'crash', price: 5, duration_days: 30, currency: 'USD' });
  await call('POST', `/api/resellers/${reseller.body.data.id}/service-limits`, { service_id: plan.body.data.id });
  const sub = await call('POST', '/api/subscribers', {
    username: 'crash@isp',
    password: 'secret1',
    service_id: plan.body.data.id,
    reseller_id: reseller.body.data.id,
  });
  expect(sub.status).toBe(201);

  await waitFor('the receiver holding the request', () => rx.on('/crash').length === 1);
  const exited = new Promise((resolve) => child!.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  child = undefined;
  const [inFlight] = await pool.query(`select * from webhook_deliveries`).then((r) => r.rows);
  expect(inFlight).toMatchObject({ event: 'subscriber.created', status: 'pending', attempts: 1 });
  expect((await pool.query(`select count(*)::int as n from webhook_attempts`)).rows[0].n).toBe(0);

  rx.modes.set('/crash', 'ok');
  // The lease above is the killed process's (1 s + 5 s). The restart's own attempt gets the usual
  // timeout: on a loaded machine its first request (a cold fetch) can outlast 1 s, and a timed-out
  // attempt would wait out the retry delay instead of proving the resend.
  process.env.WEBHOOK_TIMEOUT_MS = '10000';
  restarted = await startTestApp({ databaseUrl });
  const delivered = await waitFor(
    'the delivery after the restart',
    async () => {
      const [d] = await restarted!.db.select().from(webhookDeliveries);
      if (d.status !== 'succeeded') {
        const { status, attempts, lastError, nextAttemptAt } = d;
        throw new Error(`delivery ${JSON.stringify({ status, attempts, lastError, nextAttemptAt })}`);
      }
      return d;
    },
    30_000,
  );
  const sent = rx.on('/crash');
  expect(sent).toHaveLength(2);
  expect(sent[1].body).toBe(sent[0].body);
  expect(JSON.parse(sent[1].body)).toMatchObject({
    id: delivered.eventId,
    type: 'subscriber.created',
    data: { id: sub.body.data.id, username: 'crash@isp' },
  });
  expect(await restarted.db.select().from(webhookDeliveries)).toHaveLength(1);
  const attempts = await restarted.db
    .select()
    .from(webhookAttempts)
    .where(eq(webhookAttempts.deliveryId, delivered.id));
  expect(attempts.map((a) => [a.trigger, a.statusCode])).toEqual([['auto', 200]]);
}, 120_000);
