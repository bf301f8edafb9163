/**
 * Totals of the status and date-range lists (docs/billing.md, "Lists at a million invoices"):
 * status totals are exact at any size, from deltas every write appends to invoice_status_counts
 * (migration 0012) and the billing service folds; a date range keeps its capped count with the
 * generation it was read at (for every page of the range, beside the kept pages themselves) and
 * counts again once a write changes which invoices the range holds.
 */
import { TransactionRollbackError } from 'drizzle-orm';
import { createInvoices } from '../../shared/billing';
import type { Tx } from '../../shared/db/client';
import { EXACT_TOTAL_CAP } from '../../shared/pagination/total';
import { foldStatusCounts } from '../../services/billing/invoice-status-counts';
import { adminToken, client, startTestApp, token, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller, seedSubscriber } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;
const tree = { root: 0, child: 0, other: 0 };
const subs = { root: 0, child: 0, other: 0 };

type Page = { data: { id: number; status: string }[]; pagination: { total: number } };

async function list(query: string, tok = adminToken()): Promise<Page> {
  const res = await api.get<Page>(`/api/invoices${query}`, { token: tok });
  expect(res.status).toBe(200);
  return res.body;
}

/** invoice_status_counts' sums against a real count of every (reseller, status). */
async function statusDrift(): Promise<unknown[]> {
  const { rows } = await t.pool.query(`
    select coalesce(c.reseller_id, r.reseller_id) as reseller_id, coalesce(c.status, r.status) as status, c.n as kept, r.n as real
    from (select reseller_id, status, sum(n) as n from invoice_status_counts group by 1, 2) c
    full join (select reseller_id, status, count(*) as n from invoices group by 1, 2) r on r.reseller_id = c.reseller_id and r.status = c.status
    where coalesce(c.n, 0) <> coalesce(r.n, 0)`);
  return rows;
}

async function count(where: string, values: unknown[] = []): Promise<number> {
  return Number((await t.pool.query(`select count(*) from invoices where ${where}`, values)).rows[0].count);
}

async function invoicesFor(subscriberId: number, resellerId: number, n: number, issueDate?: string): Promise<number[]> {
  return t.db.transaction(async (tx) => {
    const made = await createInvoices(
      tx as unknown as Tx,
      Array.from({ length: n }, () => ({
        subscriberId,
        resellerId,
        items: [{ description: 'Monthly plan', qty: 1, unitPrice: 1000 }],
        taxRate: 0,
        issueDate,
      })),
    );
    return made.map((m) => m.invoice.id);
  });
}

const post = async (path: string, body: unknown) => (await api.post(path, body, { token: adminToken() })).status;

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  const plan = await seedPlan(t.db, { price: 1000 });
  tree.root = (await seedReseller(t.db, { name: 'Root' })).id;
  tree.child = (await seedReseller(t.db, { name: 'Child', parentId: tree.root })).id;
  tree.other = (await seedReseller(t.db, { name: 'Other' })).id;
  for (const which of ['root', 'child', 'other'] as const) {
    subs[which] = (
      await seedSubscriber(t.db, { resellerId: tree[which], serviceId: plan.id, fullName: `Totals ${which}` })
    ).id;
    await invoicesFor(subs[which], tree[which], 4, '2025-03-10');
  }
});
afterAll(() => t.close());

describe('invoice_status_counts', () => {
  it('stay in step through payments, quick-pay, overdue, consolidation, deletion, a move and a rollback', async () => {
    expect(await statusDrift()).toEqual([]);
    const [a, b] = await invoicesFor(subs.root, tree.root, 2);
    expect(await post(`/api/invoices/${a}/payment`, { amount: 3 })).toBe(200);
    expect(await post(`/api/invoices/${b}/payment`, { amount: 10 })).toBe(200);
    expect(await statusDrift()).toEqual([]);
    expect(await post(`/api/invoices/quick-pay/${subs.child}`, { amount: 15 })).toBe(200);
    expect(await statusDrift()).toEqual([]);
    expect(await t.app.broker.call('billing.markOverdue', { today: '2099-01-01' })).toEqual({
      marked: expect.any(Number),
    });
    expect(await count(`status = 'overdue'`)).toBeGreaterThan(0);
    expect(await statusDrift()).toEqual([]);
    await invoicesFor(subs.other, tree.other, 2);
    expect(await post(`/api/invoices/consolidate/${subs.other}`, {})).toBe(200);
    expect(await count(`status = 'void'`)).toBe(2);
    expect(await statusDrift()).toEqual([]);
    const [gone] = await invoicesFor(subs.child, tree.child, 1);
    expect((await api.del(`/api/invoices/${gone}`, { token: adminToken() })).status).toBe(200);
    await t.pool.query(
      `update invoices set reseller_id = $1 where id = (select max(id) from invoices where reseller_id = $2)`,
      [tree.other, tree.child],
    );
    // The rollback is the only way out: the invoice was written, and an error before it fails here.
    await expect(
      t.db.transaction(async (tx) => {
        expect(
          await createInvoices(tx as unknown as Tx, [
            {
              subscriberId: subs.root,
              resellerId: tree.root,
              items: [{ description: 'x', qty: 1, unitPrice: 1 }],
              taxRate: 0,
            },
          ]),
        ).toHaveLength(1);
        tx.rollback();
      }),
    ).rejects.toThrow(TransactionRollbackError);
    expect(await statusDrift()).toEqual([]);
  });

  it('folds to one row per reseller and status without changing a sum, with payments and other folds running', async () => {
    const pending = (
      await t.pool.query<{ id: number }>(`select id from invoices where status = 'pending' order by id limit 6`)
    ).rows;
    // The billing service folds every second too: two deltas that cancel, on a key that exists, are
    // counted in the transaction that writes them, so there is something to fold whatever it did.
    const c = await t.pool.connect();
    let before: number;
    try {
      await c.query('begin');
      await c.query(`insert into invoice_status_counts (reseller_id, status, n)
        select k.reseller_id, k.status, v.d from (select reseller_id, status from invoice_status_counts limit 1) k,
          (values (1), (-1)) v(d)`);
      before = (await c.query<{ n: number }>('select count(*)::int as n from invoice_status_counts')).rows[0].n;
      await c.query('commit');
    } finally {
      c.release();
    }
    await Promise.all([
      ...pending.map((p) => post(`/api/invoices/${p.id}/payment`, { amount: 1 })),
      foldStatusCounts(),
      foldStatusCounts(),
      foldStatusCounts(),
    ]);
    expect(await statusDrift()).toEqual([]);
    await foldStatusCounts();
    const {
      rows: [{ rows, keys }],
    } = await t.pool.query<{ rows: number; keys: number }>(
      'select count(*)::int as rows, count(distinct (reseller_id, status))::int as keys from invoice_status_counts',
    );
    expect(before).toBeGreaterThan(keys);
    expect(rows).toBe(keys);
    expect(await statusDrift()).toEqual([]);
  });

  it("give status lists exact totals past the cap: admin, a reseller's tree and reseller_id", async () => {
    await t.pool.query(
      `
      insert into invoices (invoice_number, subscriber_id, reseller_id, amount, tax_rate, tax_amount, total, status, currency, issue_date, due_date)
      select 'TOTALS-' || g, $1, $2, 100, 0, 0, 100, 'pending', 'USD', date '2024-06-01', date '2024-07-01' from generate_series(1, $3) g`,
      [subs.child, tree.child, EXACT_TOTAL_CAP + 20],
    );
    const exact = await count(`status = 'pending'`);
    expect(exact).toBeGreaterThan(EXACT_TOTAL_CAP);
    expect((await list('?status=pending&limit=5&page=3')).pagination.total).toBe(exact);
    const inTree = await count(`status = 'pending' and reseller_id = any($1)`, [[tree.root, tree.child]]);
    expect((await list('?status=pending&limit=5', token('reseller', { resellerId: tree.root }))).pagination.total).toBe(
      inTree,
    );
    expect((await list(`?status=pending&reseller_id=${tree.other}&limit=1`)).pagination.total).toBe(
      await count(`status = 'pending' and reseller_id = $1`, [tree.other]),
    );
    expect((await list('?status=paid&limit=1')).pagination.total).toBe(await count(`status = 'paid'`));
    await t.pool.query(`delete from invoices where invoice_number like 'TOTALS-%'`);
    expect((await list('?status=pending&limit=5')).pagination.total).toBe(await count(`status = 'pending'`));
    expect(await statusDrift()).toEqual([]);
  });
});

describe("a date range's kept count", () => {
  const range = '?from=2025-03-01&to=2025-03-31&limit=1';
  const inRange = () => count(`issue_date between '2025-03-01' and '2025-03-31'`);
  /** A write with triggers off (superuser): no count and no generation learns of it. */
  const quietly = async (text: string, values: unknown[]) => {
    const c = await t.pool.connect();
    try {
      await c.query(`set session_replication_role = replica`);
      return (await c.query<{ id: number }>(text, values)).rows;
    } finally {
      await c.query(`reset session_replication_role`);
      c.release();
    }
  };

  it('is served while the generation stands and counted again after it moves', async () => {
    const real = await inRange();
    expect((await list(range)).pagination.total).toBe(real);
    // Another page of the range: not a kept page (list-page-cache.ts), but the kept count.
    const second = `${range}&page=2`;
    const [quiet] = await quietly(
      `
      insert into invoices (invoice_number, subscriber_id, reseller_id, amount, tax_rate, tax_amount, total, status, currency, issue_date, due_date, search_text)
      values ('QUIET-1', $1, $2, 100, 0, 0, 100, 'pending', 'USD', '2025-03-15', '2025-04-15', 'quiet-1') returning id`,
      [subs.root, tree.root],
    );
    // Nothing bumped the generation: the kept count, not a new one.
    expect((await list(second)).pagination.total).toBe(real);
    expect((await list(range)).pagination.total).toBe(real);
    await t.pool.query('update invoice_list_generation set n = n + 1');
    expect((await list(second)).pagination.total).toBe(real + 1);
    expect((await list(range)).pagination.total).toBe(real + 1);
    await quietly('delete from invoices where id = $1', [quiet.id]);
    await t.pool.query('update invoice_list_generation set n = n + 1');
    expect((await list(range)).pagination.total).toBe(real);
    expect(await statusDrift()).toEqual([]);
  });

  it('follows an invoice created in the range, one whose issue date leaves it, and a deletion', async () => {
    const real = await inRange();
    expect((await list(range)).pagination.total).toBe(real);
    const [made] = await invoicesFor(subs.other, tree.other, 1, '2025-03-20');
    expect((await list(range)).pagination.total).toBe(real + 1);
    await t.pool.query(`update invoices set issue_date = '2025-04-02' where id = $1`, [made]);
    expect((await list(range)).pagination.total).toBe(real);
    await t.pool.query(`update invoices set issue_date = '2025-03-02' where id = $1`, [made]);
    expect((await list(range)).pagination.total).toBe(real + 1);
    expect((await api.del(`/api/invoices/${made}`, { token: adminToken() })).status).toBe(200);
    expect((await list(range)).pagination.total).toBe(real);
    expect((await list(range, token('reseller', { resellerId: tree.root }))).pagination.total).toBe(
      await count(`issue_date between '2025-03-01' and '2025-03-31' and reseller_id = any($1)`, [
        [tree.root, tree.child],
      ]),
    );
  });
});
