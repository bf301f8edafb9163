/**
 * The embedded mode survives a crash: `kill -9` of the server in the middle of a burst of
 * payments leaves its PostgreSQL running (it is detached on purpose); the next start on the same
 * DATA_DIR stops that server cleanly and goes on. Nothing acknowledged is lost, nothing is applied
 * twice, and the ledger invariants hold.
 */
import fs from 'node:fs';
import path from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import * as schema from '../../shared/db/schema';
import { seedBillingSubscriber } from './billing-fixtures';
import {
  freePort,
  login,
  openInvoices,
  portOpen,
  startServer,
  stopServer,
  tempDirs,
  type Running,
} from '../helpers/server-process';

jest.setTimeout(240_000);

const CLIENTS = 10;
const KILL_AFTER_ACKS = 60;
const SERVICES = 'gateway,billing,subscribers';
const temp = tempDirs();
afterAll(() => temp.cleanup());

interface Attempt {
  key: string;
  invoiceId: number;
  /** The payment id of a 2xx answer; undefined when the answer never came. */
  paymentId?: number;
}

function dbUrl(dataDir: string, pgPort: number): string {
  const password = fs.readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim();
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/billing`;
}

async function pay(base: string, token: string, attempt: Attempt): Promise<Response> {
  return fetch(`${base}/api/invoices/${attempt.invoiceId}/payment`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': attempt.key },
    body: JSON.stringify({ amount: 1, method: 'cash', reference: attempt.key }),
  });
}

/** CLIENTS loops paying until the server is gone; the one that sees the KILL_AFTER_ACKS-th 2xx kills it. */
async function burstThenKill(server: Running, token: string, invoiceIds: number[]): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  let acks = 0;
  const client = async (c: number) => {
    for (let i = 0; ; i++) {
      const attempt: Attempt = { key: `crash-${c}-${i}`, invoiceId: invoiceIds[(c + i) % invoiceIds.length] };
      attempts.push(attempt);
      let res: Response;
      try {
        res = await pay(server.base, token, attempt);
      } catch {
        return; // the server is gone: this request's fate is unknown
      }
      if (res.status !== 200) throw new Error(`payment answered ${res.status}: ${await res.text()}`);
      attempt.paymentId = ((await res.json()) as { data: { payment: { id: number } } }).data.payment.id;
      if (++acks === KILL_AFTER_ACKS) server.child.kill('SIGKILL');
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  return attempts;
}

it('restarts on the same DATA_DIR after SIGKILL mid-write, with every acknowledged payment kept', async () => {
  const dataDir = temp.make();
  const pgPort = await freePort();
  const first = await startServer({ dataDir, pgPort, env: { SERVICES } });
  const seedPool = new pg.Pool({ connectionString: dbUrl(dataDir, pgPort) });
  const subscriberId = await seedBillingSubscriber(drizzle(seedPool, { schema }), 'Crash reseller');
  await seedPool.end();
  const token = await login(first.base);
  const invoiceIds = await openInvoices(first.base, token, subscriberId, 4);

  const attempts = await burstThenKill(first, token, invoiceIds);
  await new Promise((resolve) =>
    first.child.exitCode !== null || first.child.signalCode ? resolve(null) : first.child.once('exit', resolve),
  );
  expect(first.child.signalCode).toBe('SIGKILL');
  const acknowledged = attempts.filter((a) => a.paymentId !== undefined);
  expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
  // Requests in flight at the kill (and after it) have no answer: their keys are replayed below.
  expect(attempts.length).toBeGreaterThan(acknowledged.length);
  // The situation of the issue: the killed server's PostgreSQL outlived it.
  expect(await portOpen(pgPort)).toBe(true);

  const second = await startServer({ dataDir, pgPort, env: { SERVICES } });
  const pool = new pg.Pool({ connectionString: dbUrl(dataDir, pgPort) });
  try {
    expect(second.output()).toMatch(/stopping the PostgreSQL \(pid \d+\) that an earlier process left running/);

    const stored = await pool.query<{ id: number; invoice_id: number }>(
      'select id, invoice_id from invoice_payments where id = any($1)',
      [acknowledged.map((a) => a.paymentId)],
    );
    expect(stored.rows.map((r) => [r.id, r.invoice_id]).sort((a, b) => a[0] - b[0])).toEqual(
      acknowledged.map((a) => [a.paymentId, a.invoiceId]).sort((a, b) => a[0]! - b[0]!),
    );
    await expectInvariants(pool);

    // Every key sent again: an acknowledged one answers its first payment, an unknown one is
    // applied now or was already; either way each key ends with exactly one payment.
    const again = await login(second.base);
    for (const attempt of attempts) {
      const res = await pay(second.base, again, attempt);
      expect(res.status).toBe(200);
      const id = ((await res.json()) as { data: { payment: { id: number } } }).data.payment.id;
      if (attempt.paymentId !== undefined) expect(id).toBe(attempt.paymentId);
    }
    const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from invoice_payments');
    expect(rows[0].n).toBe(attempts.length);
    await expectInvariants(pool);
  } finally {
    await pool.end();
    expect(await stopServer(second)).toBe(0);
  }
  expect(await portOpen(pgPort)).toBe(false);
});

/** paid_amount is the sum of the invoice's payments, no balance is negative, one ledger row per payment. */
async function expectInvariants(pool: pg.Pool): Promise<void> {
  const broken = await pool.query(`
    select i.id, i.total, i.paid_amount, coalesce(p.sum, 0) as payments
      from invoices i
      left join (select invoice_id, sum(amount) as sum from invoice_payments group by invoice_id) p on p.invoice_id = i.id
     where i.paid_amount <> coalesce(p.sum, 0) or i.total - i.paid_amount < 0`);
  expect(broken.rows).toEqual([]);
  const ledger = await pool.query<{ payments: number; ledger: number }>(`
    select (select count(*)::int from invoice_payments) as payments,
           (select count(*)::int from transactions where type = 'invoice_payment') as ledger`);
  expect(ledger.rows[0].ledger).toBe(ledger.rows[0].payments);
}
