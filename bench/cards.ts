/**
 * `npm run bench:cards` (issue 27): prepaid cards against the app in a child process (gateway,
 * billing, subscribers, pdf-renderer) on a scratch database (scratchStore: beside DATABASE_URL's, or
 * an embedded PostgreSQL).
 *
 * 1. A BENCH_CARDS_BATCH-card batch (default 100,000) made through POST /api/cards/batches: seconds,
 *    end to end (request to CSV received). Target < 10 s on 2 cores.
 * 2. That batch printed part by part, as an operator prints it: parts of BENCH_CARDS_PART cards
 *    (default 500, the most a sheet holds; 10 a page), BENCH_CARDS_PRINTERS at a time (default 1),
 *    through the pdf-renderer with its default timeout: pages/s and the slowest part, beside invoice
 *    PDFs (bench:pdf's document, the PDF cache off) rendered 10 before and 10 after, pages/s. A part
 *    whose render fails is printed again, up to 3 tries (its PINs are kept until its PDF exists), and
 *    counted.
 * 3. Redemptions/s of BENCH_CARDS_REDEEM money cards (default 2,000) at BENCH_CARDS_CONCURRENCY
 *    concurrent callers (default 50) over 200 subscribers, beside quick-pay payments/s of the same
 *    count and concurrency, same subscribers, same run. Target: redemptions >= 0.8x payments.
 */
import { Pool } from 'pg';
import { intVar } from '../shared/config';
import { benchAdminToken, benchEnv, forkApp, median, runBench, serveApp, scratchStore } from './load';

const BATCH = intVar(process.env, 'BENCH_CARDS_BATCH', 100_000, 1);
const PART = intVar(process.env, 'BENCH_CARDS_PART', 500, 1);
const PRINTERS = intVar(process.env, 'BENCH_CARDS_PRINTERS', 1, 1);
const PER_PAGE = 10;
const REDEEM = intVar(process.env, 'BENCH_CARDS_REDEEM', 2_000, 1);
const CONCURRENCY = intVar(process.env, 'BENCH_CARDS_CONCURRENCY', 50, 1);
const SUBSCRIBERS = 200;
const ROUNDS = intVar(process.env, 'BENCH_CARDS_ROUNDS', 4, 1);

async function main(): Promise<void> {
  const store = await scratchStore('bench_cards');
  const env: NodeJS.ProcessEnv = {
    ...benchEnv(),
    ...store.env,
    SERVICES: 'gateway,billing,subscribers,pdf-renderer',
    PDF_CACHE_MAX_MB: '0',
    // All redemptions come from this one address: the per-address guessing limit counts failures only.
    PUBLIC_RATE_LIMIT_PER_MIN: '1000000000',
  };
  const server = await forkApp(__filename, env);
  const pool = new Pool({ connectionString: server.databaseUrl, max: 2 });
  try {
    const token = await benchAdminToken(pool, env.JWT_SECRET!);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(server.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const type = res.headers.get('content-type') ?? '';
      const out = type.includes('json') ? await res.json() : Buffer.from(await res.arrayBuffer());
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(out)}`);
      return out as { data: { id: number }; csv?: string } & Buffer;
    };
    const reseller = (await call('POST', '/api/resellers', { name: 'bench', balance: 1_000_000, currency: 'USD' })).data
      .id;
    const plan = (await call('POST', '/api/services', { name: 'bench', price: 10, duration_days: 30, currency: 'USD' }))
      .data.id;
    await call('POST', `/api/resellers/${reseller}/service-limits`, { service_id: plan, max_subscribers: null });
    const subs: number[] = [];
    for (let i = 0; i < SUBSCRIBERS; i++) {
      const s = await call('POST', '/api/subscribers', {
        username: `bench${i}@cards`,
        password: 'secret1',
        service_id: plan,
        reseller_id: reseller,
      });
      subs.push(s.data.id);
    }

    // 1. The batch.
    let t0 = process.hrtime.bigint();
    const big = await call('POST', '/api/cards/batches', { count: BATCH, value: 1, prefix: 'B' });
    const batchSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const pins = big
      .csv!.trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[1]);
    console.log(
      `batch: ${BATCH} cards in ${batchSeconds.toFixed(2)} s (${Math.round(BATCH / batchSeconds)} cards/s; target < 10 s)`,
    );

    // 2. The batch printed part by part, beside invoice PDFs before and after.
    const invoiceIds: number[] = [];
    for (let i = 0; i < 20; i++) {
      const inv = await call('POST', '/api/invoices', {
        subscriber_id: subs[i],
        items: [{ description: 'Fibre 100 Mbps', qty: 1, unit_price: 25 }],
      });
      invoiceIds.push(inv.data.id);
    }
    const renderInvoices = async (ids: number[]) => {
      const start = process.hrtime.bigint();
      for (const id of ids) await call('GET', `/api/invoices/${id}/pdf`);
      return Number(process.hrtime.bigint() - start) / 1e9;
    };
    let invoiceSeconds = await renderInvoices(invoiceIds.slice(0, 10));
    const parts: [number, number][] = [];
    for (let from = 1; from <= BATCH; from += PART) parts.push([from, Math.min(BATCH, from + PART - 1)]);
    let next = 0;
    let slowest = 0;
    let retried = 0;
    t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: PRINTERS }, async () => {
        while (next < parts.length) {
          const [from, to] = parts[next++];
          const path = `/api/cards/batches/${big.data.id}/pdf?paper=A4&per_page=${PER_PAGE}&from=${from}&to=${to}`;
          for (let attempt = 1; ; attempt++) {
            const start = process.hrtime.bigint();
            try {
              await call('GET', path);
              slowest = Math.max(slowest, Number(process.hrtime.bigint() - start) / 1e9);
              break;
            } catch (err) {
              if (attempt === 3) throw err;
              console.log(`part ${from}-${to} printed again: ${(err as Error).message}`);
              retried++;
            }
          }
        }
      }),
    );
    const printSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    invoiceSeconds += await renderInvoices(invoiceIds.slice(10));
    const pages = parts.reduce((n, [from, to]) => n + Math.ceil((to - from + 1) / PER_PAGE), 0);
    const detail = (await call('GET', `/api/cards/batches/${big.data.id}`)) as unknown as {
      data: { printed: unknown[]; unprinted: unknown[]; printed_at: string | null };
    };
    const sheetRate = pages / printSeconds;
    const invoiceRate = invoiceIds.length / invoiceSeconds;
    console.log(
      `sheets: ${BATCH} cards in ${parts.length} parts of ${PART} (${PRINTERS} at a time, ${PER_PAGE} a page): ` +
        `${pages} pages in ${printSeconds.toFixed(1)} s = ${sheetRate.toFixed(1)} pages/s; slowest part ` +
        `${slowest.toFixed(2)} s printed (timeout ${(Number(process.env.PDF_RENDER_TIMEOUT_MS || 15_000) / 1000).toFixed(0)} s); ` +
        `${retried} printed again; batch: ${detail.data.printed.length} printed ranges, ` +
        `${detail.data.unprinted.length} unprinted, printed_at ${detail.data.printed_at ? 'set' : 'null'}`,
    );
    console.log(
      `invoice PDFs (one page each, sequential, 10 before and 10 after the sheets): ${invoiceRate.toFixed(1)} pages/s; ` +
        `sheet pages/s over invoice pages/s: ${(sheetRate / invoiceRate).toFixed(2)}`,
    );

    // 3. Redemptions beside payments, same size, same concurrency.
    const run = async (n: number, one: (i: number) => Promise<unknown>) => {
      let next = 0;
      const start = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < n) await one(next++);
        }),
      );
      return n / (Number(process.hrtime.bigint() - start) / 1e9);
    };
    // Alternating rounds, each side first in turn, compared by medians: one pass each, redemptions always first,
    // gave the first side the cold paths and the machine's passing load.
    const rounds = Math.min(ROUNDS, REDEEM);
    const perRound = Math.floor(REDEEM / rounds);
    let used = 0;
    const redeemRates: number[] = [];
    const payRates: number[] = [];
    const redeemRound = () => {
      const base = used;
      used += perRound;
      return run(perRound, (i) =>
        call('POST', `/api/subscribers/${subs[(base + i) % SUBSCRIBERS]}/redeem-card`, { pin: pins[base + i] }),
      );
    };
    const payRound = () =>
      run(perRound, (i) => call('POST', `/api/invoices/quick-pay/${subs[i % SUBSCRIBERS]}`, { amount: 1 }));
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        redeemRates.push(await redeemRound());
        payRates.push(await payRound());
      } else {
        payRates.push(await payRound());
        redeemRates.push(await redeemRound());
      }
    }
    const redeemRate = median(redeemRates);
    const payRate = median(payRates);
    console.log(
      `redemptions: ${redeemRate.toFixed(0)}/s, quick-pay payments: ${payRate.toFixed(0)}/s at ${CONCURRENCY} concurrent ` +
        `(${rounds} alternating rounds of ${perRound}, medians): ratio ${(redeemRate / payRate).toFixed(2)} (target >= 0.8)`,
    );
  } finally {
    await pool.end();
    server.child.send('stop');
    await new Promise((r) => server.child.once('exit', r));
    await store.dispose();
  }
}

runBench(main, () => serveApp());
