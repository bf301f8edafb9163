/**
 * `npm run bench:cluster`: what the distributed mode costs per request, in one run on one machine.
 * HTTP throughput and p95 of an invoice read and of a payment with every unit in one process
 * ("embedded": calls stay in the process) and with gateway, billing, subscribers and pdf-renderer
 * as separate processes over NATS, with their ratio; then PDFs/s with one and with two
 * pdf-renderer replicas. Both clusters start through runtime/cluster.ts.
 *
 * Environment (all optional):
 *   DATABASE_URL       a scratch database (unset: an embedded PostgreSQL under BENCH_DATA_DIR)
 *   TRANSPORTER        nats://127.0.0.1:4222 (the distributed phase needs NATS)
 *   BENCH_CONNECTIONS  20    BENCH_DURATION 10 (seconds per phase)    BENCH_PDF_CONNECTIONS 8
 */
import os from 'node:os';
import { intVar } from '../shared/config';
import { startCluster, type Cluster } from '../runtime/cluster';
import { autocannon, benchEnv, type AutocannonRequest } from './load';
import { scratchDataDir } from './scratch';

const env = (name: string, fallback: number) => intVar(process.env, name, fallback, 1);
const CONNECTIONS = env('BENCH_CONNECTIONS', 20);
const DURATION = env('BENCH_DURATION', 10);
const PDF_CONNECTIONS = env('BENCH_PDF_CONNECTIONS', 8);
const ADMIN = { username: 'bench-admin', password: 'bench-admin-pw' };

interface Figure {
  perSecond: number;
  p95Ms: number;
  failed: number;
}

function p95(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? NaN;
}

async function load(baseUrl: string, request: AutocannonRequest, connections = CONNECTIONS): Promise<Figure> {
  const latencies: number[] = [];
  const instance = autocannon({
    url: baseUrl,
    connections,
    duration: DURATION,
    headers: request.headers,
    requests: [{ setupRequest: () => request }],
  });
  instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await instance;
  return { perSecond: result.requests.average, p95Ms: p95(latencies), failed: result.non2xx + result.errors };
}

async function api<T>(
  baseUrl: string,
  method: string,
  url: string,
  token: string | undefined,
  body?: unknown,
): Promise<T> {
  const res = await fetch(baseUrl + url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

/**
 * One invoice to read and pay (a total large enough for every payment of the run), and one to
 * render: the paid one ends with thousands of payment rows, which would make a long PDF.
 */
async function seed(baseUrl: string, tag: string): Promise<{ token: string; invoiceId: number; pdfInvoiceId: number }> {
  const { token } = await api<{ token: string }>(baseUrl, 'POST', '/api/auth/login', undefined, ADMIN);
  const plan = await api<{ id: number }>(baseUrl, 'POST', '/api/services', token, {
    name: `Bench ${tag}`,
    price: 20,
    duration_days: 30,
  });
  const reseller = await api<{ id: number }>(baseUrl, 'POST', '/api/resellers', token, {
    name: `Bench ${tag}`,
    balance: 1000,
  });
  await api(baseUrl, 'POST', `/api/resellers/${reseller.id}/service-limits`, token, {
    service_id: plan.id,
    max_subscribers: 10,
  });
  const sub = await api<{ id: number }>(baseUrl, 'POST', '/api/subscribers', token, {
    username: `bench-${tag}@isp`,
    password: 'pw',
    service_id: plan.id,
    reseller_id: reseller.id,
  });
  const invoice = await api<{ id: number }>(baseUrl, 'POST', '/api/invoices', token, {
    subscriber_id: sub.id,
    items: [{ description: 'Bench', qty: 1, unit_price: 10_000_000 }],
  });
  const printed = await api<{ id: number }>(baseUrl, 'POST', '/api/invoices', token, {
    subscriber_id: sub.id,
    items: [{ description: 'Router', qty: 1, unit_price: 35 }],
  });
  return { token, invoiceId: invoice.id, pdfInvoiceId: printed.id };
}

async function requestFigures(
  cluster: Cluster,
  tag: string,
): Promise<{ read: Figure; pay: Figure; pdf: Figure; token: string; pdfInvoiceId: number }> {
  const { token, invoiceId, pdfInvoiceId } = await seed(cluster.baseUrl, tag);
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const read = await load(cluster.baseUrl, { method: 'GET', path: `/api/invoices/${invoiceId}`, headers });
  const pay = await load(cluster.baseUrl, {
    method: 'POST',
    path: `/api/invoices/${invoiceId}/payment`,
    headers,
    body: JSON.stringify({ amount: 0.01, method: 'cash' }),
  });
  // One render first: the browser starts on the first render, which is not what is measured.
  const first = await fetch(`${cluster.baseUrl}/api/invoices/${pdfInvoiceId}/pdf?paper=A4`, {
    headers: { authorization: headers.authorization },
    signal: AbortSignal.timeout(60_000),
  });
  if (first.status !== 200) throw new Error(`first PDF: ${first.status} ${await first.text()}`);
  await first.arrayBuffer();
  const pdf = await load(
    cluster.baseUrl,
    {
      method: 'GET',
      path: `/api/invoices/${pdfInvoiceId}/pdf?paper=A4`,
      headers: { authorization: headers.authorization },
    },
    PDF_CONNECTIONS,
  );
  return { read, pay, pdf, token, pdfInvoiceId };
}

function clusterEnv(
  services: string,
  transporter: string | undefined,
  databaseUrl: string | undefined,
  dataDir: string,
): NodeJS.ProcessEnv {
  return {
    ...benchEnv(),
    SERVICES: services,
    TRANSPORTER: transporter ?? '',
    DATABASE_URL: databaseUrl ?? '',
    DATA_DIR: dataDir,
    PORT: '0',
    PUBLIC_RATE_LIMIT_PER_MIN: '1000000000',
    ADMIN_USERNAME: ADMIN.username,
    ADMIN_PASSWORD: ADMIN.password,
  };
}

const quiet = () => undefined;
const fmt = (f: Figure) =>
  `${f.perSecond.toFixed(0).padStart(7)}/s  p95 ${f.p95Ms.toFixed(1).padStart(6)} ms${f.failed ? `  (${f.failed} failed)` : ''}`;

async function main(): Promise<void> {
  const transporter = process.env.TRANSPORTER || 'nats://127.0.0.1:4222';
  const scratch = process.env.BENCH_DATA_DIR ? undefined : scratchDataDir('cluster');
  const dataDir = process.env.BENCH_DATA_DIR || scratch!.dir;
  const databaseUrl = process.env.DATABASE_URL || undefined;
  console.log(
    `bench:cluster  ${CONNECTIONS} connections, ${DURATION} s per phase, ${os.cpus().length} cores, NATS ${transporter}`,
  );

  const embedded = await startCluster({
    env: clusterEnv('gateway+billing+subscribers+pdf-renderer', transporter, databaseUrl, dataDir),
    output: quiet,
  });
  let one: Awaited<ReturnType<typeof requestFigures>>;
  try {
    one = await requestFigures(embedded, 'embedded');
  } finally {
    await embedded.stop();
  }
  const distributed = await startCluster({
    env: clusterEnv('gateway,billing,subscribers,pdf-renderer', transporter, databaseUrl, dataDir),
    output: quiet,
    migrate: false,
  });
  try {
    const many = await requestFigures(distributed, 'distributed');
    const second = await distributed.add('pdf-renderer');
    await distributed.waitForNode(second.nodeID);
    const headers = { authorization: `Bearer ${many.token}` };
    const twoRenderers = await load(
      distributed.baseUrl,
      { method: 'GET', path: `/api/invoices/${many.pdfInvoiceId}/pdf?paper=A4`, headers },
      PDF_CONNECTIONS,
    );

    const ratio = (a: Figure, b: Figure) =>
      `${(a.perSecond / b.perSecond).toFixed(2)}x time per request, p95 ${(b.p95Ms / a.p95Ms).toFixed(2)}x`;
    console.log('');
    console.log(`invoice read   embedded    ${fmt(one.read)}`);
    console.log(`invoice read   distributed ${fmt(many.read)}   -> distributed costs ${ratio(one.read, many.read)}`);
    console.log(`payment        embedded    ${fmt(one.pay)}`);
    console.log(`payment        distributed ${fmt(many.pay)}   -> distributed costs ${ratio(one.pay, many.pay)}`);
    console.log(`PDF (A4)       embedded    ${fmt(one.pdf)}`);
    console.log(`PDF (A4)       1 renderer  ${fmt(many.pdf)}`);
    console.log(
      `PDF (A4)       2 renderers ${fmt(twoRenderers)}   -> ${(twoRenderers.perSecond / many.pdf.perSecond).toFixed(2)}x the PDFs/s of one`,
    );
    console.log('target: distributed < 2x embedded per request (same machine, same run)');
  } finally {
    await distributed.stop();
    scratch?.dispose();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
