import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { conflict } from '../errors';
import { createInvoice, voidInvoices } from './invoices';
import { lockSubscriber } from './subscribers';
import type { InvoiceRecord } from './types';

export interface ConsolidateInput {
  subscriberId: number;
  notes?: string | null;
  createdBy?: number | null;
}

export interface ConsolidateResult extends InvoiceRecord {
  voidedIds: number[];
}

/**
 * Merges every pending invoice of a subscriber into one new `pending` invoice whose lines are the
 * originals' lines (in invoice then line order), and voids the originals with `consolidated_into`
 * pointing at it. The subscriber row lock makes a second concurrent consolidation wait, then find
 * fewer than two pending invoices and get 409. The merged invoice keeps the earliest original due
 * date (consolidating never extends a deadline) and needs one currency and one tax rate.
 */
export async function consolidateInvoices(tx: Tx, input: ConsolidateInput): Promise<ConsolidateResult> {
  const subscriber = await lockSubscriber(tx, input.subscriberId);
  const pending = await tx.execute<{ id: number; currency: string; tax_rate: string; due_date: string }>(sql`
    select id, currency, tax_rate, due_date from invoices
    where subscriber_id = ${subscriber.id} and status = 'pending' order by id for update`);
  const originals = pending.rows;
  if (originals.length < 2) throw conflict('at least two pending invoices are needed to consolidate');
  if (new Set(originals.map((o) => o.currency)).size > 1) throw conflict('pending invoices are in different currencies');
  if (new Set(originals.map((o) => Number(o.tax_rate))).size > 1) throw conflict('pending invoices have different tax rates');
  const ids = originals.map((o) => Number(o.id));
  const lines = await tx.execute<{ description: string; qty: string; unit_price: number }>(sql`
    select description, qty, unit_price from invoice_items
    where invoice_id in (${sql.join(ids.map((id) => sql`${id}`), sql`, `)}) order by invoice_id, position`);
  const record = await createInvoice(tx, {
    subscriberId: subscriber.id,
    resellerId: subscriber.resellerId,
    items: lines.rows.map((l) => ({ description: l.description, qty: l.qty, unitPrice: Number(l.unit_price) })),
    taxRate: originals[0].tax_rate,
    currency: originals[0].currency,
    dueDate: originals.map((o) => o.due_date).sort()[0],
    notes: input.notes ?? null,
    kind: 'consolidated',
    createdBy: input.createdBy,
  });
  await voidInvoices(tx, ids, record.invoice.id);
  return { ...record, voidedIds: ids };
}
