import type { invoiceItems, invoicePayments, invoices } from '../db/schema';

export type InvoiceRow = typeof invoices.$inferSelect;
export type InvoiceItemRow = typeof invoiceItems.$inferSelect;
export type InvoicePaymentRow = typeof invoicePayments.$inferSelect;

export const PAYMENT_METHODS = ['cash', 'card', 'bank', 'wallet', 'prepaid_card', 'other'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** Why an invoice exists; stored in `invoices.kind`. */
export const INVOICE_KINDS = ['manual', 'renewal', 'service_change', 'consolidated'] as const;
export type InvoiceKind = (typeof INVOICE_KINDS)[number];

/** An invoice with its lines, as every write returns it. */
export interface InvoiceRecord {
  invoice: InvoiceRow;
  items: InvoiceItemRow[];
}

export interface PaymentResult {
  invoice: InvoiceRow;
  payment: InvoicePaymentRow;
  transactionId: number;
}
