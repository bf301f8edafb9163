/**
 * Faults of the shared dependencies under a running cluster (gateway, billing and subscribers as
 * separate processes). Both dependencies are this test's own, on free ports, so stopping them
 * touches nothing else on the machine: a private nats-server, and a private PostgreSQL (the app's
 * embedded one in a helper process).
 *
 * - NATS restarts: the cluster serves again by itself, and every renewal it acknowledged has its
 *   outbox event (the relay that publishes them joins with network-access, issue 12). How long it
 *   takes to serve again is a figure of `npm run bench:cluster`, not an assertion here.
 * - PostgreSQL stops for 5 s: requests fail with the API's 5xx envelope, never hang, the cluster
 *   recovers by itself, and no payment is half-written (ledger and payment rows match, paid_amount
 *   is their sum).
 */
import { Client } from 'pg';
import type { Cluster } from '../../runtime/cluster';
import { client, TEST_METRICS_TOKEN } from '../helpers/app';
import { waitFor } from '../helpers/wait';
import {
  isCleanFailure,
  login,
  privateNats,
  privatePostgres,
  seed,
  startTestCluster,
  type Restartable,
  type Seeded,
} from './cluster-harness';

jest.setTimeout(240_000);

let nats: Restartable;
let pg: Restartable;
let cluster: Cluster & { log: string[] };
let token: string;
let seeded: Seeded;

beforeAll(async () => {
  [nats, pg] = await Promise.all([privateNats(), privatePostgres()]);
  cluster = await startTestCluster(pg.url, { SERVICES: 'gateway,billing,subscribers', TRANSPORTER: nats.url });
  token = await login(cluster.baseUrl);
  seeded = await seed(cluster.baseUrl, token, 'faults');
}, 180_000);

afterAll(async () => {
  await cluster?.stop(10_000);
  await Promise.all([nats?.close(), pg?.close()]);
});

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const db = new Client({ connectionString: pg.url });
  await db.connect();
  try {
    return (await db.query(sql, params)).rows as T[];
  } finally {
    await db.end();
  }
}

type Outcome = { status: number; body: unknown };
const call = (method: string, path: string, body?: unknown, timeoutMs = 40_000): Promise<Outcome> =>
  fetch(`${cluster.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    // The broker's request timeout is 30 s: a request still open at 40 s is a hang.
    signal: AbortSignal.timeout(timeoutMs),
  }).then(async (res) => ({ status: res.status, body: await res.json().catch(() => undefined) }));

/**
 * Renewal requests the gateway has received, answered or in flight (its own /metrics scrape
 * excluded). With the bus down the scrape reaches only the gateway's own registry, which is where
 * these gauges live.
 */
async function gatewayRequests(): Promise<number> {
  const text = await (
    await fetch(`${cluster.baseUrl}/metrics`, {
      signal: AbortSignal.timeout(10_000),
      headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` },
    })
  ).text();
  const answered = [
    ...text.matchAll(
      /^http_requests_total\{route="\/api\/subscribers\/:id\/renew",method="POST",status="\d+"\} (\d+)/gm,
    ),
  ];
  const inFlight = Number(/^http_requests_in_flight (\d+)/m.exec(text)?.[1] ?? 0);
  return answered.reduce((sum, m) => sum + Number(m[1]), 0) + inFlight - 1;
}

describe('NATS restarts', () => {
  it('serves again after the restart and loses no acknowledged outbox event', async () => {
    // One renewal per subscriber (a second one of the same subscriber is refused as a duplicate).
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await client(cluster.baseUrl).post(
        '/api/subscribers',
        { username: `nats${i}@isp`, password: 'pppoe-pw', service_id: seeded.planId, reseller_id: seeded.resellerId },
        { token },
      );
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    const renew = (id: number) => call('POST', `/api/subscribers/${id}/renew`, {});
    const before = await renew(ids[0]);
    expect(before.status).toBe(200);

    await nats.stop();
    // Requests sent while the bus is down: answered (buffered and delivered on reconnect) or a clean 5xx.
    // The bus comes back once the gateway holds both (or has already answered them).
    const received = await gatewayRequests();
    const during = Promise.all([renew(ids[1]), renew(ids[2])]);
    await waitFor(
      'the two renewals at the gateway while the bus is down',
      async () => (await gatewayRequests()) - received >= 2,
    );
    await nats.start();
    // Each probe gives up after 2 s: one sent before every process has reconnected is lost (NATS
    // keeps nothing for an absent subscriber) and would otherwise wait the whole request timeout.
    await waitFor(
      'a request served across processes after the restart',
      async () => (await call('GET', '/api/services', undefined, 2_000)).status === 200,
      60_000,
      200,
    );

    const duringResults = await during;
    for (const r of duringResults) if (r.status !== 200) expect(isCleanFailure(r)).toBe(true);
    const after = await renew(ids[3]);
    expect(after.status).toBe(200);

    const acknowledged = [
      ids[0],
      ...(duringResults[0].status === 200 ? [ids[1]] : []),
      ...(duringResults[1].status === 200 ? [ids[2]] : []),
      ids[3],
    ];
    const rows = await query<{ subscriber_id: string; invoices: number }>(
      `select o.payload->>'subscriber_id' as subscriber_id,
              (select count(*)::int from invoices i where i.subscriber_id = (o.payload->>'subscriber_id')::int) as invoices
         from outbox o
        where o.event = 'subscriber.disconnect' and o.payload->>'reason' = 'renew' and (o.payload->>'subscriber_id')::int = any($1)`,
      [ids],
    );
    const withEvent = rows.map((r) => Number(r.subscriber_id));
    // Every acknowledged renewal wrote its event exactly once, in the same commit as its invoice.
    for (const id of acknowledged) expect(withEvent.filter((x) => x === id)).toHaveLength(1);
    expect(new Set(withEvent).size).toBe(withEvent.length);
    for (const r of rows) expect(r.invoices).toBe(1);
  });
});

describe('PostgreSQL stops for 5 s', () => {
  it('fails requests with the 5xx envelope, recovers by itself and leaves no partial payment', async () => {
    const pay = () => call('POST', `/api/invoices/${seeded.invoiceId}/payment`, { amount: 1, method: 'cash' });
    expect((await pay()).status).toBe(200);

    await pg.stop();
    const stoppedAt = Date.now();
    const attempts: Promise<Outcome>[] = [];
    while (Date.now() - stoppedAt < 5_000) {
      attempts.push(pay());
      await new Promise((r) => setTimeout(r, 400));
    }
    const health = await fetch(`${cluster.baseUrl}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ success: false, message: 'database unreachable' });
    await pg.start();

    const during = await Promise.all(attempts);
    expect(during.length).toBeGreaterThan(5);
    for (const r of during) if (r.status !== 200) expect(isCleanFailure(r)).toBe(true);
    expect(during.some((r) => r.status !== 200)).toBe(true);

    await waitFor(
      'a payment accepted after the database came back',
      async () => (await pay()).status === 200,
      30_000,
      200,
    );
    expect((await fetch(`${cluster.baseUrl}/health`)).status).toBe(200);

    const acknowledged = 2 + during.filter((r) => r.status === 200).length;
    const [row] = await query<{ paid: number; payments: number; paid_sum: number; ledger: number }>(
      `select i.paid_amount::int as paid,
              (select count(*)::int from invoice_payments p where p.invoice_id = i.id) as payments,
              (select coalesce(sum(p.amount), 0)::int from invoice_payments p where p.invoice_id = i.id) as paid_sum,
              (select count(*)::int from transactions t where t.invoice_id = i.id) as ledger
         from invoices i where i.id = $1`,
      [seeded.invoiceId],
    );
    expect(row.payments).toBeGreaterThanOrEqual(acknowledged);
    expect(row.payments).toBeLessThanOrEqual(2 + during.length);
    expect(row.paid).toBe(row.paid_sum);
    expect(row.ledger).toBe(row.payments);
  });
});
