/** Payment entry points: one invoice (POST /payment) and FIFO over a subscriber's open invoices. */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { invoices } from '../db/schema';
import { allocateFifo } from '../domain/allocation';
import { OPEN_STATUSES } from '../domain/invoice-state';
import { fail } from '../failures';
import { lockInvoice } from './invoices';
import { recordPayment, type PaymentDetails } from './record-payment';
import { lockSubscriber } from './subscribers';
import type { PaymentMethod, PaymentResult } from './types';
import { restoreIfSuspended } from './restore';
import { creditWallet, payFromWallet } from './wallet';

export interface PaymentInput extends PaymentDetails {
  invoiceId: number;
}

/**
 * POST /api/invoices/:id/payment. Errors: 404 invoice not found, 409 invoice is void,
 * 400 amount exceeds balance. Method `wallet` also debits the wallet (400 when it holds too little).
 */
export async function applyPayment(tx: Tx, input: PaymentInput): Promise<PaymentResult> {
  if (input.method === 'wallet') {
    const result = await payFromWallet(tx, { ...input, exact: true });
    // exact: true either applies the whole amount or throws.
    return result as PaymentResult;
  }
  // A payment on an invoice past due may restore its subscriber (an update of the subscriber's
  // row): that row is locked before the invoice, in the order every other payment path takes, so a
  // quick-pay or a card redemption of the same subscriber cannot deadlock with this payment. Always,
  // not only when the due date read here has passed: a PUT may move it before the invoice's lock.
  const head = await tx.execute<{ subscriber_id: number | null }>(
    sql`select subscriber_id from invoices where id = ${input.invoiceId}`,
  );
  const subscriberId = head.rows[0]?.subscriber_id ?? null;
  if (subscriberId !== null) await tx.execute(sql`select 1 from subscribers where id = ${subscriberId} for update`);
  const invoice = await lockInvoice(tx, input.invoiceId);
  const result = await recordPayment(tx, invoice, input);
  await restoreIfSuspended(tx, invoice.subscriberId, [invoice.dueDate]);
  return result;
}

export interface FifoInput {
  subscriberId: number;
  /** Minor units of `currency`, > 0. */
  amount: number;
  /**
   * The system currency the caller converted `amount` with: the invoices paid and the wallet credit
   * are in it, so a change of the setting committed meanwhile cannot pay them in another.
   */
  currency: string;
  method?: Exclude<PaymentMethod, 'wallet'>;
  reference?: string | null;
  notes?: string | null;
  createdBy?: number | null;
}

export interface FifoResult {
  applied: { invoiceId: number; amount: number; paymentId: number; transactionId: number }[];
  /** Minor units credited to the wallet (0 when everything went to invoices). */
  remaining: number;
  walletTransactionId: number | null;
}

/**
 * Quick-pay: the amount goes over the subscriber's open invoices (pending, partial, overdue) in
 * the system currency, oldest issue date first then lowest id; the excess is credited to the wallet.
 * The subscriber row lock serialises concurrent quick-pays, so no invoice is ever overpaid.
 */
export async function payFifo(tx: Tx, input: FifoInput): Promise<FifoResult> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw fail('amountNotPositive');
  const subscriber = await lockSubscriber(tx, input.subscriberId);
  const { currency } = input;
  const open = await tx
    .select()
    .from(invoices)
    .where(
      and(
        eq(invoices.subscriberId, subscriber.id),
        inArray(invoices.status, [...OPEN_STATUSES]),
        eq(invoices.currency, currency),
      ),
    )
    .orderBy(asc(invoices.id))
    .for('update');
  const { allocations, remaining } = allocateFifo(open, input.amount);
  const byId = new Map(open.map((i) => [i.id, i]));
  const applied: FifoResult['applied'] = [];
  for (const a of allocations) {
    const r = await recordPayment(
      tx,
      { ...byId.get(a.invoiceId)!, username: subscriber.username },
      { ...input, amount: a.amount },
    );
    applied.push({ invoiceId: a.invoiceId, amount: a.amount, paymentId: r.payment.id, transactionId: r.transactionId });
  }
  let walletTransactionId: number | null = null;
  if (remaining > 0) {
    const credit = await creditWallet(tx, {
      subscriberId: subscriber.id,
      amount: remaining,
      currency,
      reason: 'quick-pay excess',
      method: input.method ?? 'cash',
      reference: input.reference,
      notes: input.notes,
      createdBy: input.createdBy,
    });
    walletTransactionId = credit.transactionId;
  }
  await restoreIfSuspended(
    tx,
    subscriber.id,
    allocations.map((a) => byId.get(a.invoiceId)!.dueDate),
  );
  return { applied, remaining, walletTransactionId };
}
