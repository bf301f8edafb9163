/**
 * The invoice state machine of spec 3.1, plus the overdue rule this project chose (docs/billing.md):
 * an invoice whose due date has passed with a balance left is `overdue`; payments on it behave as on
 * pending/partial, and a partial payment leaves it `overdue` because it is still past due.
 */
export const INVOICE_STATUSES = ['pending', 'partial', 'paid', 'overdue', 'void'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/**
 * A new invoice owes its total; one whose total is 0 (a free plan, a fully discounted line) owes
 * nothing and could never be paid, since payments are positive, so it is settled at once
 * (docs/billing.md).
 */
export const initialStatus = (total: number): InvoiceStatus => (total === 0 ? 'paid' : 'pending');

/** Statuses that can still take money (quick-pay's "open invoices"). */
export const OPEN_STATUSES: readonly InvoiceStatus[] = ['pending', 'partial', 'overdue'];

export const isOpen = (status: string): boolean => (OPEN_STATUSES as readonly string[]).includes(status);

export type PaymentRefusal = 'void' | 'exceeds_balance' | 'not_positive';

/** Why a payment of `amount` cannot be applied, or null when it can. */
export function paymentRefusal(status: string, total: number, paid: number, amount: number): PaymentRefusal | null {
  if (status === 'void') return 'void';
  if (amount <= 0) return 'not_positive';
  if (amount > total - paid) return 'exceeds_balance';
  return null;
}

/** Status after a payment that brought paid_amount to `paidAfter` (already checked <= total). */
export function statusAfterPayment(status: InvoiceStatus, total: number, paidAfter: number): InvoiceStatus {
  if (paidAfter >= total) return 'paid';
  return status === 'overdue' ? 'overdue' : 'partial';
}

/** The overdue rule: due date strictly before today and money still owed, on an open invoice. */
export function isOverdue(status: string, dueDate: string, today: string, total: number, paid: number): boolean {
  return (status === 'pending' || status === 'partial') && dueDate < today && total - paid > 0;
}

export const canEdit = (status: string): boolean => status === 'pending';
export const canDelete = (status: string): boolean => status !== 'paid';
