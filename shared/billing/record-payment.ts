/**
 * The one way a payment is written: exactly one ledger row (`transactions`) and one
 * `invoice_payments` row, and the invoice moved through the state machine, inside the caller's
 * transaction with the invoice row already locked.
 */
import { eq } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { invoicePayments, invoices } from '../db/schema';
import { paymentRefusal, statusAfterPayment, type InvoiceStatus } from '../domain/invoice-state';
import { badRequest, conflict } from '../errors';
import { recordTransaction } from '../ledger';
import type { InvoiceRow, PaymentMethod, PaymentResult } from './types';

export interface PaymentDetails {
  /** Minor units of the invoice's currency, > 0 and <= balance. */
  amount: number;
  /** Default `cash`. `wallet` draws the amount from the subscriber's wallet. */
  method?: PaymentMethod;
  reference?: string | null;
  notes?: string | null;
  /** Default now. */
  paidAt?: Date;
  createdBy?: number | null;
}

/** Applies a payment to an invoice row the caller has already locked. */
export async function recordPayment(
  tx: Tx,
  invoice: InvoiceRow & { username?: string | null },
  p: PaymentDetails,
): Promise<PaymentResult> {
  const refusal = paymentRefusal(invoice.status, invoice.total, invoice.paidAmount, p.amount);
  if (refusal === 'void') throw conflict('invoice is void');
  if (refusal === 'not_positive') throw badRequest('amount must be greater than 0');
  if (refusal === 'exceeds_balance') throw badRequest('amount exceeds balance');
  const method = p.method ?? 'cash';
  const paidAt = p.paidAt ?? new Date();
  const transactionId = await recordTransaction(tx, {
    type: 'invoice_payment',
    amount: p.amount,
    currency: invoice.currency,
    subscriberId: invoice.subscriberId,
    username: invoice.username ?? null,
    resellerId: invoice.resellerId,
    invoiceId: invoice.id,
    method,
    reference: p.reference ?? null,
    notes: p.notes ?? null,
    createdBy: p.createdBy ?? null,
  });
  const [payment] = await tx
    .insert(invoicePayments)
    .values({
      invoiceId: invoice.id,
      transactionId,
      amount: p.amount,
      method,
      reference: p.reference ?? null,
      paidAt,
      notes: p.notes ?? null,
      createdBy: p.createdBy ?? null,
    })
    .returning();
  const paidAfter = invoice.paidAmount + p.amount;
  const status = statusAfterPayment(invoice.status as InvoiceStatus, invoice.total, paidAfter);
  const [updated] = await tx
    .update(invoices)
    .set({ paidAmount: paidAfter, status, paidAt: status === 'paid' ? paidAt : invoice.paidAt, updatedAt: new Date() })
    .where(eq(invoices.id, invoice.id))
    .returning();
  return { invoice: updated, payment, transactionId };
}
