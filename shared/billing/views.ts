/** The API shape of invoices and payments (spec 2.2, 2.3): decimals from minor units, ISO dates. */
import { isoTimestamp } from '../http/schemas';
import { fromMinor } from '../money';
import { publicUrl } from '../public-links';
import type { InvoiceItemRow, InvoicePaymentRow, InvoiceRow } from './types';

export function itemView(it: Pick<InvoiceItemRow, 'description' | 'qty' | 'unitPrice' | 'amount'>, currency: string) {
  return { description: it.description, qty: Number(it.qty), unit_price: fromMinor(it.unitPrice, currency), amount: fromMinor(it.amount, currency) };
}

export function paymentView(p: InvoicePaymentRow, currency: string) {
  return {
    id: p.id,
    invoice_id: p.invoiceId,
    transaction_id: p.transactionId,
    amount: fromMinor(p.amount, currency),
    method: p.method,
    reference: p.reference,
    paid_at: isoTimestamp(p.paidAt),
    notes: p.notes,
    created_by: p.createdBy,
    created_at: isoTimestamp(p.createdAt),
  };
}

export function invoiceView(
  i: InvoiceRow,
  extra: { items?: Pick<InvoiceItemRow, 'description' | 'qty' | 'unitPrice' | 'amount'>[]; payments?: InvoicePaymentRow[] } = {},
) {
  const c = i.currency;
  return {
    id: i.id,
    invoice_number: i.invoiceNumber,
    subscriber_id: i.subscriberId,
    reseller_id: i.resellerId,
    kind: i.kind,
    amount: fromMinor(i.amount, c),
    tax_rate: Number(i.taxRate),
    tax_amount: fromMinor(i.taxAmount, c),
    total: fromMinor(i.total, c),
    paid_amount: fromMinor(i.paidAmount, c),
    balance: fromMinor(i.total - i.paidAmount, c),
    status: i.status,
    currency: c,
    issue_date: i.issueDate,
    due_date: i.dueDate,
    paid_at: isoTimestamp(i.paidAt),
    notes: i.notes,
    commission_rate: Number(i.commissionRate),
    commission_amount: fromMinor(i.commissionAmount, c),
    consolidated_into: i.consolidatedInto,
    created_by: i.createdBy,
    created_at: isoTimestamp(i.createdAt),
    ...(extra.items ? { items: extra.items.map((it) => itemView(it, c)) } : {}),
    ...(extra.payments ? { payments: extra.payments.map((p) => paymentView(p, c)) } : {}),
    ...(extra.items ? { public_url: i.publicTokenNonce ? publicUrl(i.id, i.publicTokenNonce) : null } : {}),
  };
}
