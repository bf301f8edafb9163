/**
 * invoice_list_generation (migration 0010): bumped once, at COMMIT, by every transaction that can
 * change what an invoice search matches, and by no payment, edit or status change.
 */
import { createInvoices } from '../../shared/billing';
import type { Tx } from '../../shared/db/client';
import { invoiceListGeneration } from '../../shared/db/schema';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { seedPlan, seedReseller } from './billing-fixtures';

let t: TestApp;
let api: ReturnType<typeof client>;

const tree = { root: 0, child: 0, other: 0 };
/** Subscribers named `Keptname <n>`, by reseller. */
const kept: Record<'root' | 'child' | 'other', number[]> = { root: [], child: [], other: [] };
let planId: number;

async function generation(): Promise<number> {
  const [row] = await t.db.select().from(invoiceListGeneration);
  return row.n;
}

/** `n` invoices of a subscriber in one transaction (createInvoices, as renewals make them). */
async function invoicesFor(subscriberId: number, resellerId: number, n: number): Promise<number[]> {
  return t.db.transaction(async (tx) => {
    const made = await createInvoices(tx as unknown as Tx, Array.from({ length: n }, () => ({
      subscriberId, resellerId, items: [{ description: 'Monthly plan', qty: 1, unitPrice: 1000 }], taxRate: 0,
    })));
    return made.map((m) => m.invoice.id);
  });
}

beforeAll(async () => {
  t = await startTestApp();
  api = client(t.baseUrl);
  planId = (await seedPlan(t.db, { price: 1000 })).id;
  tree.root = (await seedReseller(t.db, { name: 'Root' })).id;
  tree.child = (await seedReseller(t.db, { name: 'Child', parentId: tree.root })).id;
  tree.other = (await seedReseller(t.db, { name: 'Other' })).id;
  const { rows } = await t.pool.query<{ id: number; reseller_id: number }>(`
    insert into subscribers (username, password_enc, full_name, service_id, reseller_id, expiry_date)
    select 'kept' || g || '@isp', 'x', 'Keptname ' || g, $1, ($2::int[])[1 + g % 3], '2099-01-01'
    from generate_series(1, 1002) g order by g returning id, reseller_id`,
  [planId, [tree.root, tree.child, tree.other]]);
  for (const r of rows) kept[r.reseller_id === tree.root ? 'root' : r.reseller_id === tree.child ? 'child' : 'other'].push(r.id);
});
afterAll(() => t.close());

describe('invoice_list_generation', () => {
  it('moves once per transaction that creates invoices, never with payments, edits, status changes or rollbacks', async () => {
    const g = await generation();
    await t.db.transaction(async (tx) => {
      for (const which of ['root', 'other'] as const) {
        await createInvoices(tx as unknown as Tx, Array.from({ length: 20 }, (_, k) => ({
          subscriberId: kept[which][100 + k], resellerId: tree[which], items: [{ description: 'Batch', qty: 1, unitPrice: 700 }], taxRate: 0,
        })));
      }
    });
    expect(await generation()).toBe(g + 1);
    const [invoice] = await invoicesFor(kept.root[200], tree.root, 1);
    expect(await generation()).toBe(g + 2);
    expect((await api.post(`/api/invoices/${invoice}/payment`, { amount: 1 }, { token: adminToken() })).status).toBe(200);
    const [edited] = await invoicesFor(kept.root[201], tree.root, 1);
    const after = await generation();
    expect((await api.put(`/api/invoices/${edited}`, { notes: 'edited', items: [{ description: 'Fixed', qty: 2, unit_price: 3 }] }, { token: adminToken() })).status).toBe(200);
    await t.pool.query(`update invoices set status = 'overdue' where id = $1`, [edited]);
    // A rename that changes only letter case leaves search_text, so what searches match, as it was.
    const [{ name }] = (await t.pool.query<{ name: string }>('select full_name as name from subscribers where id = $1', [kept.root[200]])).rows;
    expect((await api.put(`/api/subscribers/${kept.root[200]}`, { full_name: name.toUpperCase() }, { token: adminToken() })).status).toBe(200);
    await t.db.transaction(async (tx) => {
      await createInvoices(tx as unknown as Tx, [{ subscriberId: kept.root[202], resellerId: tree.root, items: [{ description: 'x', qty: 1, unitPrice: 1 }], taxRate: 0 }]);
      tx.rollback();
    }).catch(() => undefined);
    expect(await generation()).toBe(after);
  });
});
