/**
 * The distributed mode as `npm run start:cluster` runs it: the six units as separate
 * `dist/server.js` processes (pdf-renderer twice) on the machine's NATS (TRANSPORTER, as CI sets
 * it; Moleculer's loopback TCP transporter without it, named in each suite) and PostgreSQL. A
 * business flow crosses them (ending in a deactivation whose CoA, relayed from the outbox by
 * network-access, reaches a NAS simulator), then a pdf-renderer process is killed in the middle
 * of renders. Each render below asks for a paper not rendered before: the PDF cache would answer
 * a repeated one without a renderer.
 */
import { Client } from 'pg';
import { pdfText } from './documents-fixtures';
import { createTestDatabase, client, TEST_METRICS_TOKEN } from '../helpers/app';
import { isCleanFailure, login, seed, startTestCluster, type Seeded } from './cluster-harness';
import type { Cluster } from '../../runtime/cluster';
import { suiteTransporter } from '../helpers/transporter';
import { waitFor } from '../helpers/wait';
import { NasSimulator } from '../sim/nas-simulator';

jest.setTimeout(240_000);

const SERVICES = 'gateway,billing,subscribers,network-access,pdf-renderer,pdf-renderer,notifier';
let cluster: Cluster & { log: string[] };
let token: string;
let seeded: Seeded;
let databaseUrl: string;
// '' lets runtime/cluster.ts join the processes over Moleculer's loopback TCP transporter.
const { transporter, label } = suiteTransporter({ transporter: '', name: "Moleculer's loopback TCP transporter" });

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  cluster = await startTestCluster(databaseUrl, { SERVICES, TRANSPORTER: transporter });
  token = await login(cluster.baseUrl);
}, 180_000);

afterAll(async () => {
  await cluster?.stop(10_000);
  await nasSim?.stop();
});

let nasSim: NasSimulator | undefined;
const NAS_SECRET = 'cluster-nas-secret';

describe(`a flow across six processes, over ${label}`, () => {
  it('runs every unit in its own process', () => {
    expect(cluster.processes.map((p) => p.units)).toEqual(SERVICES.split(','));
    expect(new Set(cluster.processes.map((p) => p.child.pid)).size).toBe(7);
  });

  it('creates a subscriber, renews, invoices, takes a payment, renders the PDF and serves the public page', async () => {
    const api = client(cluster.baseUrl);
    seeded = await seed(cluster.baseUrl, token, 'flow');

    const renewed = await api.post(`/api/subscribers/${seeded.subscriberId}/renew`, {}, { token });
    expect(renewed.status).toBe(200);
    const invoices = await api.get(`/api/invoices?subscriber_id=${seeded.subscriberId}`, { token });
    expect(invoices.status).toBe(200);
    // The manual invoice and the renewal's.
    expect(invoices.body.pagination.total).toBe(2);

    const paid = await api.post(`/api/invoices/${seeded.invoiceId}/payment`, { amount: 40, method: 'cash' }, { token });
    expect(paid.status).toBe(200);
    const invoice = await api.get(`/api/invoices/${seeded.invoiceId}`, { token });
    expect(invoice.body.data).toMatchObject({ paid_amount: 40, balance: 60, status: 'partial' });

    // Billing learns the renderer nodes by discovery: on a loaded machine a cluster that has just
    // come up may still answer 503 (never anything else) for a moment.
    const pdf = await waitFor(
      'a PDF answer other than 503',
      async () => {
        const res = await fetch(`${cluster.baseUrl}/api/invoices/${seeded.invoiceId}/pdf`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return res.status !== 503 && res;
      },
      10_000,
    );
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const text = await pdfText(Buffer.from(await pdf.arrayBuffer()));
    expect(text).toContain(invoice.body.data.invoice_number);

    const publicUrl = new URL(invoice.body.data.public_url as string);
    const page = await fetch(`${cluster.baseUrl}${publicUrl.pathname}${publicUrl.search}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(invoice.body.data.invoice_number);
    // Without the token the public page does not exist.
    expect((await fetch(`${cluster.baseUrl}${publicUrl.pathname}`)).status).toBe(404);
  });

  it('deactivates the subscriber, and the CoA crosses outbox, relay and network-access to the NAS', async () => {
    const api = client(cluster.baseUrl);
    nasSim = await new NasSimulator({ secret: NAS_SECRET, latencyMs: 2 }).start();
    const nas = await api.post(
      '/api/nas',
      { name: 'cluster-edge', ip_address: '127.0.0.1', secret: NAS_SECRET, coa_port: nasSim.port },
      { token },
    );
    expect(nas.status).toBe(201);
    // The subscriber is online: FreeRADIUS accounting wrote its session.
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      await db.query(
        `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, framedipaddress, acctstarttime, acctupdatetime)
         values ('cluster-sess', 'u-cluster-sess', 'flow@isp', '127.0.0.1', '100.64.7.7', now() - interval '1 hour', now())`,
      );
      expect((await api.post(`/api/subscribers/${seeded.subscriberId}/deactivate`, {}, { token })).status).toBe(200);
      await waitFor('the Disconnect-Request at the NAS', async () =>
        nasSim!.requests.some((r) => r.userName === 'flow@isp'),
      );
      expect(nasSim.requests.filter((r) => r.userName === 'flow@isp')).toEqual([
        expect.objectContaining({ code: 'Disconnect-Request', acctSessionId: 'cluster-sess', framedIp: '100.64.7.7' }),
      ]);
      await waitFor('the recorded outcome', async () => {
        // The renewal before it sent its own event (reason 'renew', while the subscriber was offline).
        const { rows } = await db.query(
          `select outcome from coa_outcomes where subscriber_id = $1 and source = 'event' and reason = 'disable'`,
          [seeded.subscriberId],
        );
        return rows.length === 1 && rows[0].outcome === 'disconnected';
      });
      const { rows: events } = await db.query(
        `select published_at from outbox where event = 'subscriber.disconnect' and payload->>'subscriber_id' = $1 and payload->>'reason' = 'disable'`,
        [String(seeded.subscriberId)],
      );
      expect(events).toHaveLength(1);
      expect(events[0].published_at).not.toBeNull();
    } finally {
      await db.end();
    }
  });

  it('sums every process into one /metrics', async () => {
    const text = await (
      await fetch(`${cluster.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } })
    ).text();
    expect(text).toMatch(/^pdf_render_duration_seconds_count\{outcome="ok"\} [1-9]/m);
    expect(text).toMatch(/^http_requests_total\{/m);
    expect(text).toMatch(/^outbox_pending_events \d+/m);
  });
});

describe(`a pdf-renderer process killed during renders, over ${label}`, () => {
  it('fails over to the other replica or answers 503; nothing hangs past the request timeout', async () => {
    const renderers = cluster.processes.filter((p) => p.units === 'pdf-renderer');
    expect(renderers).toHaveLength(2);
    const [victim, survivor] = renderers;
    const render = (paper: string) =>
      fetch(`${cluster.baseUrl}/api/invoices/${seeded.invoiceId}/pdf?paper=${paper}`, {
        headers: { authorization: `Bearer ${token}` },
        // The broker's request timeout is 30 s: a hung request fails the test here.
        signal: AbortSignal.timeout(40_000),
      }).then(async (res) => ({
        status: res.status,
        body: res.headers.get('content-type')?.includes('json') ? await res.json() : await res.arrayBuffer(),
      }));

    const inFlight = Array.from({ length: 12 }, () => render('Letter'));
    await waitFor('renders running on the victim', async () => {
      const s = await rendererStatus(victim.nodeID);
      return s.idle < s.concurrency || s.queued > 0;
    });
    victim.child.kill('SIGKILL');
    const results = await Promise.all(inFlight);
    for (const r of results) {
      if (r.status === 200)
        expect(
          Buffer.from(r.body as ArrayBuffer)
            .subarray(0, 5)
            .toString(),
        ).toBe('%PDF-');
      else expect(isCleanFailure(r)).toBe(true);
    }
    expect(results.filter((r) => r.status === 200).length).toBeGreaterThan(0);

    // The survivor takes every render from now on.
    const rendered = await rendersOn(survivor.nodeID);
    const after = await Promise.all(Array.from({ length: 4 }, () => render('Legal')));
    expect(after.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await rendersOn(survivor.nodeID)).toBeGreaterThan(rendered);
  });

  it('serves renders on a replica started afterwards', async () => {
    const replacement = await cluster.add('pdf-renderer');
    await cluster.waitForNode(replacement.nodeID);
    // The last original replica leaves (a clean stop), so only the new one can render.
    const survivor = cluster.processes.find(
      (p) =>
        p.units === 'pdf-renderer' && p.child.exitCode === null && p.child.signalCode === null && p !== replacement,
    )!;
    survivor.child.kill('SIGTERM');
    expect(await survivor.exited).toBe(0);
    await waitFor(
      'the observer dropping the stopped replica',
      () => !cluster.observer.registry.nodes.get(survivor.nodeID)?.available,
    );
    expect(await rendersOn(replacement.nodeID)).toBe(0);

    const res = await waitFor(
      'a PDF answer other than 503',
      async () => {
        const r = await fetch(`${cluster.baseUrl}/api/invoices/${seeded.invoiceId}/pdf?paper=B5`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return r.status !== 503 && r;
      },
      10_000,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    const pdf = Buffer.from(await res.arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    const invoice = await client(cluster.baseUrl).get(`/api/invoices/${seeded.invoiceId}`, { token });
    expect(await pdfText(pdf)).toContain(invoice.body.data.invoice_number);
    expect(await rendersOn(replacement.nodeID)).toBe(1);
  });
});

interface RendererStatus {
  concurrency: number;
  idle: number;
  queued: number;
}
const rendererStatus = (nodeID: string) =>
  cluster.observer.call<RendererStatus, Record<string, never>>('pdf-renderer.status', {}, { nodeID });

/** Renders a process has finished with a PDF, from its own metrics (not the gateway's sum). */
async function rendersOn(nodeID: string): Promise<number> {
  const metrics = await cluster.observer.call<
    { name: string; values: { metricName?: string; labels: Record<string, string>; value: number }[] }[],
    Record<string, never>
  >('node-metrics.snapshot', {}, { nodeID });
  const histogram = metrics.find((m) => m.name === 'pdf_render_duration_seconds');
  return (
    histogram?.values.find((v) => v.metricName === 'pdf_render_duration_seconds_count' && v.labels.outcome === 'ok')
      ?.value ?? 0
  );
}

/** PDF requests the gateway has received so far: answered (any status) or in flight (its own scrape excluded). */
async function pdfRequestsReceived(): Promise<number> {
  const text = await (
    await fetch(`${cluster.baseUrl}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } })
  ).text();
  const answered = [
    ...text.matchAll(/^http_requests_total\{route="\/api\/invoices\/:id\/pdf",method="GET",status="\d+"\} (\d+)/gm),
  ];
  const inFlight = Number(/^http_requests_in_flight (\d+)/m.exec(text)?.[1] ?? 0);
  return answered.reduce((sum, m) => sum + Number(m[1]), 0) + inFlight - 1;
}

describe(`SIGTERM, over ${label}`, () => {
  it('lets the gateway and billing finish the requests in flight, then exit 0', async () => {
    const gateway = cluster.processes.find((p) => p.units === 'gateway')!;
    const billing = cluster.processes.find((p) => p.units === 'billing')!;
    const before = await pdfRequestsReceived();
    const renders = Array.from({ length: 8 }, () =>
      fetch(`${cluster.baseUrl}/api/invoices/${seeded.invoiceId}/pdf?paper=A5`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(40_000),
      }).then(async (res) => ({
        status: res.status,
        head: Buffer.from(await res.arrayBuffer())
          .subarray(0, 5)
          .toString(),
      })),
    );
    // Every request must have reached the gateway first: one whose bytes it has not read yet sits
    // on a connection it counts as idle, which closing the listener resets (a fixed 300 ms wait
    // was not always enough on a loaded machine).
    await waitFor(
      'the gateway receiving the eight requests',
      async () => (await pdfRequestsReceived()) - before >= 8,
      20_000,
      10,
    );
    gateway.child.kill('SIGTERM');
    billing.child.kill('SIGTERM');
    expect(await Promise.all(renders)).toEqual(Array(8).fill({ status: 200, head: '%PDF-' }));
    expect(await Promise.all([gateway.exited, billing.exited])).toEqual([0, 0]);
    // The listener is gone: a new request cannot connect.
    await expect(fetch(`${cluster.baseUrl}/health`)).rejects.toThrow();
  });
});
