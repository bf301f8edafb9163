import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { fail } from '../failures';
import { todayUtc } from './dates';
import { createInvoice, lockPendingInvoices, voidInvoices } from './invoices';
import { lockSubscriber } from './subscribers';
import type { InvoiceRecord } from './types';

export interface ConsolidateInput {
  subscriberId: number;
  notes?: string | null;
  createdBy?: number | null;
}

export interface ConsolidateResult extends InvoiceRecord {
  voidedIds: number[];
  /** The reseller the originals were billed to, and the merged invoice is: the caller checks its scope. */
  resellerId: number;
}

/**
 * Merges every pending invoice of a subscriber into one new `pending` invoice whose lines are the
 * originals' lines (in invoice then line order), and voids the originals with `consolidated_into`
 * pointing at it. The subscriber row lock makes a second concurrent consolidation wait, then find
 * fewer than two pending invoices and get 409. The merged invoice keeps the earliest original due
 * date (consolidating never extends a deadline; today if that has passed) and needs one currency,
 * one tax rate and one reseller, which it is billed to: a subscriber moved to another reseller keeps
 * its earlier invoices with the one that billed them, and a merge billed to the new one moved them
 * (and their commission) out of the old one's books.
 */
export async function consolidateInvoices(tx: Tx, input: ConsolidateInput): Promise<ConsolidateResult> {
  const subscriber = await lockSubscriber(tx, input.subscriberId);
  const originals = await lockPendingInvoices(tx, subscriber.id);
  if (originals.length < 2) throw fail('consolidationNeedsTwo');
  if (new Set(originals.map((o) => o.currency)).size > 1) throw fail('consolidationCurrencies');
  if (new Set(originals.map((o) => Number(o.taxRate))).size > 1) throw fail('consolidationTaxRates');
  if (new Set(originals.map((o) => o.resellerId)).size > 1) throw fail('consolidationResellers');
  const resellerId = originals[0].resellerId;
  const ids = originals.map((o) => o.id);
  const lines = await tx.execute<{ description: string; qty: string; unit_price: number }>(sql`
    select description, qty, unit_price from invoice_items
    where invoice_id in (${sql.join(
      ids.map((id) => sql`${id}`),
      sql`, `,
    )}) order by invoice_id, position`);
  const record = await createInvoice(tx, {
    subscriberId: subscriber.id,
    resellerId,
    items: lines.rows.map((l) => ({ description: l.description, qty: l.qty, unitPrice: Number(l.unit_price) })),
    taxRate: originals[0].taxRate,
    currency: originals[0].currency,
    // Never later than the earliest original, never before today (a pending invoice can be past due
    // until the daily overdue job sees it).
    dueDate: [originals.map((o) => o.dueDate).sort()[0], todayUtc()].sort()[1],
    notes: input.notes ?? null,
    kind: 'consolidated',
    createdBy: input.createdBy,
  });
  await voidInvoices(tx, ids, record.invoice.id);
  return { ...record, voidedIds: ids, resellerId };
}
