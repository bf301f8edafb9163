/**
 * `npm run bench:pdf`: invoice PDFs through the pdf-renderer service (broker call, warm browser,
 * page pool) at 1, 4 and 8 concurrent callers, BENCH_PDF_SECONDS each (default 20). Prints p50/p95
 * latency, PDFs per second, CPU per PDF (Node and the browser together), Node's RSS and the browser's
 * memory (PSS).
 * Targets on a 2-core machine: p50 < 80 ms at concurrency 1, >= 25 PDFs/s at concurrency 4.
 *
 * Then the same through HTTP with the app (gateway, billing, pdf-renderer in a child process) on
 * BENCH_PDF_INVOICES seeded invoices (default 200): each invoice's first download (a render,
 * stored in the PDF cache), then BENCH_PDF_SECONDS of downloads of random ones at
 * BENCH_PDF_HTTP_CONNECTIONS (default 8), all served from the cache. Target: >= 1,000 PDFs/s.
 * DATABASE_URL names the database (unset: the embedded one); BENCH_PDF_HTTP=0 skips this part.
 * Environment: BENCH_PDF_SECONDS, BENCH_PDF_CONCURRENCY (e.g. "1,4,8"), PDF_CONCURRENCY, CHROMIUM_PATH.
 */
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { ServiceBroker } from 'moleculer';
import { Pool } from 'pg';
import { intVar, loadConfig } from '../shared/config';
import { qrSvg } from '../services/billing/documents-model';
import { renderInvoiceHtml } from '../services/billing/templates/invoice';
import { createPdfRendererService } from '../services/pdf-renderer/pdf-renderer.service';
import { autocannon, benchAdminToken, benchEnv, forkApp, runBench, serveApp, serverCpu, type AppServer } from './load';

const seconds = Number(process.env.BENCH_PDF_SECONDS || 20);
const levels = (process.env.BENCH_PDF_CONCURRENCY || '1,4,8').split(',').map(Number);
const HTTP_INVOICES = intVar(process.env, 'BENCH_PDF_INVOICES', 200, 1);
const HTTP_CONNECTIONS = intVar(process.env, 'BENCH_PDF_HTTP_CONNECTIONS', 8, 1);

async function sampleHtml(): Promise<string> {
  return renderInvoiceHtml({
    mode: 'pdf',
    narrow: false,
    language: 'en',
    operator: {
      name: 'Skyline Networks',
      address: '1 Tower Road\nErbil',
      phone: '+964 750 000 0000',
      email: 'billing@skyline.example',
      logoUrl: '',
    },
    howToPay:
      'Pay at any Skyline agent, or by bank transfer to IBAN IQ00 0000 0000 0000 0000 000 quoting the invoice number.',
    invoiceNumber: 'INV-2025-000123',
    issueDate: '2025-03-01',
    dueDate: '2025-03-15',
    status: 'partial',
    currency: 'USD',
    subscriber: {
      name: 'Layla Haddad',
      username: 'layla@skyline',
      phone: '+964 770 123 4567',
      address: '12 Fibre Street',
    },
    items: [
      { description: 'Fibre 100 Mbps, March', qty: '1', unitPriceMinor: 25000, amountMinor: 25000 },
      { description: 'Router rental', qty: '2', unitPriceMinor: 1250, amountMinor: 2500 },
      { description: 'Static IP address', qty: '1', unitPriceMinor: 500, amountMinor: 500 },
    ],
    subtotalMinor: 28000,
    taxRate: '10',
    taxMinor: 2800,
    totalMinor: 30800,
    paidMinor: 10000,
    balanceMinor: 20800,
    payments: [{ date: '2025-03-03', method: 'cash', reference: 'R-77', amountMinor: 10000 }],
    notes: 'Thank you for choosing Skyline.',
    qrSvg: await qrSvg(
      'https://billing.skyline.example/api/invoices/public/123?token=3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ),
    pdfUrl: null,
  });
}

/**
 * Memory (MB) of this process's descendants, the browser and its renderer processes, as PSS:
 * Chromium's processes share most pages, so summing their RSS would count those pages many times.
 */
function browserPssMb(): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const name of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
      const kb = /Pss:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${name}/smaps_rollup`, 'utf8'));
      rss.set(Number(name), kb ? Number(kb[1]) : 0);
    } catch {
      // Exited while we looked.
    }
  }
  let total = 0;
  const stack = [...(children.get(process.pid) ?? [])];
  while (stack.length) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return Math.round(total / 1024);
}

/**
 * CPU time (ms) used so far by this process and all its descendants, including descendants that
 * have exited and been reaped: Chromium starts a short-lived print compositor process per PDF, whose
 * time only shows up in its parent's cutime/cstime. On a shared, busy machine wall-clock figures
 * swing with the neighbours' load; CPU per PDF is the figure that compares changes fairly.
 */
function treeCpuMs(): number {
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const name of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command: state ppid ... utime(12) stime(13) cutime(14) cstime(15), 1-based from state.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      children.set(Number(f[1]), [...(children.get(Number(f[1])) ?? []), Number(name)]);
      ticks.set(Number(name), Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]));
    } catch {
      // Exited while we looked.
    }
  }
  let total = 0;
  const stack = [process.pid];
  while (stack.length) {
    const pid = stack.pop()!;
    total += ticks.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  // Linux reports these in clock ticks of 10 ms (USER_HZ = 100).
  return total * 10;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

async function render(broker: ServiceBroker, html: string): Promise<void> {
  const stream = await broker.call<Readable, object>('pdf-renderer.render', { html, paper: 'A4' });
  for await (const chunk of stream) void chunk;
}

async function level(broker: ServiceBroker, html: string, concurrency: number) {
  const latencies: number[] = [];
  let failures = 0;
  const end = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  const cpuBefore = treeCpuMs();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const t0 = process.hrtime.bigint();
        try {
          await render(broker, html);
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        } catch {
          failures++;
        }
      }
    }),
  );
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuMs = treeCpuMs() - cpuBefore;
  latencies.sort((a, b) => a - b);
  return {
    concurrency,
    pdfs: latencies.length,
    failures,
    p50_ms: Math.round(percentile(latencies, 50)),
    p95_ms: Math.round(percentile(latencies, 95)),
    pdfs_per_s: Number((latencies.length / elapsed).toFixed(1)),
    cpu_ms_per_pdf: Math.round(cpuMs / Math.max(1, latencies.length)),
    node_rss_mb: Math.round(process.memoryUsage().rss / 1024 / 1024),
    browser_pss_mb: browserPssMb(),
  };
}

/** Invoices with three lines, one payment and a public link, for the HTTP phases. */
async function seedInvoices(databaseUrl: string): Promise<number[]> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const tag = Date.now().toString(36);
    const {
      rows: [r],
    } = await pool.query<{ id: number }>(
      `insert into resellers (name, path, currency, commission_rate) values ('pdf-bench-' || $1, '', 'USD', 10) returning id`,
      [tag],
    );
    await pool.query(`update resellers set path = '/' || id || '/' where id = $1`, [r.id]);
    const {
      rows: [plan],
    } = await pool.query<{ id: number }>(
      `insert into services (name, price, currency, duration_days) values ('pdf-bench-' || $1, 3000, 'USD', 30) returning id`,
      [tag],
    );
    const {
      rows: [sub],
    } = await pool.query<{ id: number }>(
      `insert into subscribers (username, password_enc, full_name, phone, address, service_id, reseller_id, expiry_date)
       values ('pdf-bench-' || $1, 'x', 'Layla Haddad', '+964 770 123 4567', '12 Fibre Street', $2, $3, current_date + 30) returning id`,
      [tag, plan.id, r.id],
    );
    const { rows } = await pool.query<{ id: number }>(
      `insert into invoices (invoice_number, subscriber_id, reseller_id, amount, tax_rate, tax_amount, total, paid_amount, status,
         currency, issue_date, due_date, commission_rate, commission_amount, public_token_nonce)
       select 'PDF-' || $1 || '-' || g, $2, $3, 28000, 10, 2800, 30800, 10000, 'partial', 'USD', current_date, current_date + 14, 10, 2800, md5(g::text)
       from generate_series(1, $4) g returning id`,
      [tag, sub.id, r.id, HTTP_INVOICES],
    );
    const ids = rows.map((x) => x.id);
    await pool.query(
      `insert into invoice_items (invoice_id, position, description, qty, unit_price, amount)
       select id, p, (array['Fibre 100 Mbps', 'Router rental', 'Static IP address'])[p + 1], 1, (array[25000, 2500, 500])[p + 1], (array[25000, 2500, 500])[p + 1]
       from unnest($1::int[]) id cross join generate_series(0, 2) p`,
      [ids],
    );
    await pool.query(
      `with t as (insert into transactions (type, amount, currency, subscriber_id, reseller_id, invoice_id, method, reference)
         select 'invoice_payment', 10000, 'USD', $2, $3, id, 'cash', 'R-77' from unnest($1::int[]) id returning id, invoice_id)
       insert into invoice_payments (invoice_id, transaction_id, amount, method, reference, paid_at) select invoice_id, id, 10000, 'cash', 'R-77', now() from t`,
      [ids, sub.id, r.id],
    );
    return ids;
  } finally {
    await pool.end();
  }
}

/** One HTTP phase of PDF downloads: `amount` requests (each id once), or `duration` seconds of random ids. */
async function httpPdfPhase(
  name: string,
  server: AppServer,
  token: string,
  ids: number[],
  run: { amount?: number; duration?: number },
) {
  const latencies: number[] = [];
  let bad = 0;
  let next = 0;
  const cpu0 = await serverCpu(server);
  const started = Date.now();
  const instance = autocannon({
    url: server.baseUrl,
    connections: HTTP_CONNECTIONS,
    duration: run.duration ?? 3600,
    amount: run.amount,
    headers: { authorization: `Bearer ${token}` },
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          method: 'GET',
          path: `/api/invoices/${run.amount ? ids[next++ % ids.length] : ids[Math.floor(Math.random() * ids.length)]}/pdf`,
        }),
      },
    ],
  });
  instance.on('response', (_c, status, _b, ms) => (status === 200 ? latencies.push(ms) : bad++));
  const result = await instance;
  const elapsed = (Date.now() - started) / 1000;
  const cpu = (await serverCpu(server)) - cpu0;
  latencies.sort((a, b) => a - b);
  const perSecond = latencies.length / elapsed;
  console.log(
    `${name.padEnd(36)} ${perSecond.toFixed(0).padStart(6)} PDFs/s   p50 ${percentile(latencies, 50).toFixed(1)} ms   ` +
      `p95 ${percentile(latencies, 95).toFixed(1)} ms   app CPU ${(cpu / 1000 / Math.max(1, result.requests.total)).toFixed(2)} ms/PDF   ` +
      `(${HTTP_CONNECTIONS} connections, ${latencies.length} PDFs, ${bad} not 200)`,
  );
  return perSecond;
}

async function httpPhases(): Promise<void> {
  const env = { ...benchEnv(), SERVICES: process.env.BENCH_SERVICES || 'gateway,billing,pdf-renderer' };
  const server = await forkApp(__filename, env);
  try {
    const ids = await seedInvoices(server.databaseUrl);
    const pool = new Pool({ connectionString: server.databaseUrl, max: 1 });
    const token = await benchAdminToken(pool, loadConfig(env).jwtSecret).finally(() => pool.end());
    console.log(`HTTP GET /api/invoices/:id/pdf, ${ids.length} invoices`);
    const rendered = await httpPdfPhase('first download (render + store)', server, token, ids, { amount: ids.length });
    const cached = await httpPdfPhase('cached (no browser)', server, token, ids, { duration: seconds });
    console.log(
      `cached / rendered: ${(cached / Math.max(1e-9, rendered)).toFixed(0)}x; target >= 1,000 PDFs/s cached at ${HTTP_CONNECTIONS} connections: ${cached >= 1000 ? 'met' : 'NOT met'}`,
    );
  } finally {
    server.child.send('stop');
  }
}

async function main(): Promise<void> {
  const broker = new ServiceBroker({ logger: false, validator: false });
  broker.createService(createPdfRendererService());
  await broker.start();
  try {
    const html = await sampleHtml();
    // Warm every page of the pool before measuring.
    await Promise.all(Array.from({ length: 8 }, () => render(broker, html)));
    console.log(`pdf bench: A4 invoice, ${seconds} s per level, PDF_CONCURRENCY=${process.env.PDF_CONCURRENCY || 4}`);
    const rows = [];
    for (const c of levels) rows.push(await level(broker, html, c));
    console.table(rows);
    const one = rows.find((r) => r.concurrency === 1);
    const four = rows.find((r) => r.concurrency === 4);
    if (one)
      console.log(`target p50 < 80 ms at concurrency 1: ${one.p50_ms} ms ${one.p50_ms < 80 ? 'met' : 'NOT met'}`);
    if (four)
      console.log(
        `target >= 25 PDFs/s at concurrency 4: ${four.pdfs_per_s} ${four.pdfs_per_s >= 25 ? 'met' : 'NOT met'}`,
      );
  } finally {
    await broker.stop();
  }
  if (process.env.BENCH_PDF_HTTP !== '0') await httpPhases();
}

runBench(main, serveApp);
