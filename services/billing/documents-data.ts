/**
 * Reads what an invoice document shows: the invoice, its items and payments, its subscriber.
 * Read-only by design: rendering never writes (send-combined must change no row).
 */
import { and, asc, eq, inArray } from 'drizzle-orm';
import { loadItems } from '../../shared/billing';
import type { InvoiceItemRow, InvoicePaymentRow, InvoiceRow } from '../../shared/billing';
import type { DbOrTx } from '../../shared/db/client';
import { invoicePayments, invoices, subscribers } from '../../shared/db/schema';

export interface DocumentSubscriber {
  id: number;
  username: string;
  fullName: string | null;
  phone: string | null;
  address: string | null;
}

export interface InvoiceDocument {
  invoice: InvoiceRow;
  items: InvoiceItemRow[];
  payments: InvoicePaymentRow[];
}

/** Statuses whose balance is still owed: what send-combined merges. */
export const OPEN_STATUSES = ['pending', 'partial', 'overdue'];

async function paymentsOf(db: DbOrTx, invoiceIds: number[]): Promise<InvoicePaymentRow[]> {
  if (invoiceIds.length === 0) return [];
  return db
    .select()
    .from(invoicePayments)
    .where(inArray(invoicePayments.invoiceId, invoiceIds))
    .orderBy(asc(invoicePayments.paidAt), asc(invoicePayments.id));
}

export async function loadInvoiceRow(db: DbOrTx, id: number): Promise<InvoiceRow | undefined> {
  const [row] = await db.select().from(invoices).where(eq(invoices.id, id));
  return row;
}

/** One query after the other: `db` may be a transaction, whose one connection runs one query at a time. */
export async function loadDocument(db: DbOrTx, invoice: InvoiceRow): Promise<InvoiceDocument> {
  const items = await loadItems(db, invoice.id);
  return { invoice, items, payments: await paymentsOf(db, [invoice.id]) };
}

export async function loadSubscriber(db: DbOrTx, id: number): Promise<DocumentSubscriber | null> {
  const [row] = await db
    .select({
      id: subscribers.id,
      username: subscribers.username,
      fullName: subscribers.fullName,
      phone: subscribers.phone,
      address: subscribers.address,
    })
    .from(subscribers)
    .where(eq(subscribers.id, id));
  return row ?? null;
}

/** The subscriber's open invoices in one currency, oldest first, each with items and payments. */
export async function loadOpenDocuments(
  db: DbOrTx,
  subscriberId: number,
  currency: string,
): Promise<InvoiceDocument[]> {
  const rows = await db
    .select()
    .from(invoices)
    .where(
      and(
        eq(invoices.subscriberId, subscriberId),
        eq(invoices.currency, currency),
        inArray(invoices.status, OPEN_STATUSES),
      ),
    )
    .orderBy(asc(invoices.issueDate), asc(invoices.id));
  return Promise.all(rows.map((r) => loadDocument(db, r)));
}
