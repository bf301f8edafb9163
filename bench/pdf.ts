/**
 * `npm run bench:pdf`: invoice PDFs through the pdf-renderer service (broker call, warm browser,
 * page pool) at 1, 4 and 8 concurrent callers, BENCH_PDF_SECONDS each (default 20). Prints p50/p95
 * latency, PDFs per second, CPU per PDF (Node and the browser together), Node's RSS and the browser's
 * memory (PSS).
 * Targets on a 2-core machine: p50 < 80 ms at concurrency 1, >= 25 PDFs/s at concurrency 4.
 * Environment: BENCH_PDF_SECONDS, BENCH_PDF_CONCURRENCY (e.g. "1,4,8"), PDF_CONCURRENCY, CHROMIUM_PATH.
 */
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { ServiceBroker } from 'moleculer';
import { qrSvg } from '../services/billing/documents-model';
import { renderInvoiceHtml } from '../services/billing/templates/invoice';
import { createPdfRendererService } from '../services/pdf-renderer/pdf-renderer.service';

const seconds = Number(process.env.BENCH_PDF_SECONDS || 20);
const levels = (process.env.BENCH_PDF_CONCURRENCY || '1,4,8').split(',').map(Number);

async function sampleHtml(): Promise<string> {
  return renderInvoiceHtml({
    mode: 'pdf', narrow: false, language: 'en',
    operator: { name: 'Skyline Networks', address: '1 Tower Road\nErbil', phone: '+964 750 000 0000', email: 'billing@skyline.example', logoUrl: '' },
    howToPay: 'Pay at any Skyline agent, or by bank transfer to IBAN IQ00 0000 0000 0000 0000 000 quoting the invoice number.',
    invoiceNumber: 'INV-2025-000123', issueDate: '2025-03-01', dueDate: '2025-03-15', status: 'partial', currency: 'USD',
    subscriber: { name: 'Layla Haddad', username: 'layla@skyline', phone: '+964 770 123 4567', address: '12 Fibre Street' },
    items: [
      { description: 'Fibre 100 Mbps, March', qty: '1', unitPriceMinor: 25000, amountMinor: 25000 },
      { description: 'Router rental', qty: '2', unitPriceMinor: 1250, amountMinor: 2500 },
      { description: 'Static IP address', qty: '1', unitPriceMinor: 500, amountMinor: 500 },
    ],
    subtotalMinor: 28000, taxRate: '10', taxMinor: 2800, totalMinor: 30800, paidMinor: 10000, balanceMinor: 20800,
    payments: [{ date: '2025-03-03', method: 'cash', reference: 'R-77', amountMinor: 10000 }],
    notes: 'Thank you for choosing Skyline.',
    qrSvg: await qrSvg('https://billing.skyline.example/api/invoices/public/123?token=3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'),
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

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

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
    if (one) console.log(`target p50 < 80 ms at concurrency 1: ${one.p50_ms} ms ${one.p50_ms < 80 ? 'met' : 'NOT met'}`);
    if (four) console.log(`target >= 25 PDFs/s at concurrency 4: ${four.pdfs_per_s} ${four.pdfs_per_s >= 25 ? 'met' : 'NOT met'}`);
  } finally {
    await broker.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
