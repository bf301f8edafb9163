/**
 * The one way a payment is written: exactly one ledger row (`transactions`) and one
 * `invoice_payments` row, and the invoice moved through the state machine, in one statement: inside
 * the caller's transaction with the invoice row already locked, or on its own as a compare-and-set.
 */
import type { PoolClient } from 'pg';
import type { Tx } from '../db/client';
import { paymentRefusal, statusAfterPayment, type InvoiceStatus } from '../domain/invoice-state';
import { fail } from '../failures';
import { clientOf } from './pg';
import type { InvoicePaymentRow, InvoiceRow, PaymentMethod, PaymentResult } from './types';

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

/**
 * The invoice update is guarded by the paid amount, status and total the payment was computed from, and
 * the ledger and payment rows are inserted only from the updated row: if the invoice changed since
 * it was read, nothing at all is written and no row comes back. Under a row lock the guard always
 * holds; without one it makes the statement a compare-and-set.
 */
const RECORD_PAYMENT_WRITES = `
  with upd as (
    update invoices set paid_amount = $12, status = $13, paid_at = $14, updated_at = now()
    where id = $6 and paid_amount = $15 and status = $16 and total = $17
    returning updated_at
  ), t as (
    insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, invoice_id, method, reference, notes, created_by)
    select 'invoice_payment', $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 from upd
    returning id
  ), pay as (
    insert into invoice_payments (invoice_id, transaction_id, amount, method, reference, paid_at, notes, created_by)
    select $6, t.id, $1, $7, $8, $11, $9, $10 from t
    returning id, transaction_id, created_at
  )`;
const RECORD_PAYMENT_ANSWER = `
  select pay.transaction_id, pay.id as payment_id, pay.created_at, upd.updated_at from pay, upd`;
const RECORD_PAYMENT = RECORD_PAYMENT_WRITES + RECORD_PAYMENT_ANSWER;

/**
 * The same statement with the payment's audit row (shared/audit.ts) as one more CTE: still one
 * round trip, and the row commits with the payment or not at all.
 */
const RECORD_PAYMENT_AUDITED =
  RECORD_PAYMENT_WRITES +
  `, aud as (
    insert into audit_log (manager_id, actor_type, api_key_id, ip, action, entity, entity_id, reseller_id, details)
    select $18, $19, $20, $21, 'payment.create', 'invoice', $6, $5, jsonb_build_object('payment_id', pay.id) || $22::jsonb
    from pay
  )` +
  RECORD_PAYMENT_ANSWER;

/** Who made a payment, for its audit row when the unlocked statement writes it. */
export interface PaymentAudit {
  managerId: number | null;
  actorType: string;
  apiKeyId: number | null;
  ip: string | null;
  details: Record<string, unknown>;
}

type Queryable = Pick<PoolClient, 'query'>;

/**
 * A payment computed from `invoice`, written only if the invoice is still as read. Under the
 * caller's row lock (recordPayment) that always holds; on its own, autocommitted, it is one round
 * trip instead of four (no BEGIN, lock or COMMIT) and undefined comes back when a concurrent payment
 * won, so the caller retries under a lock. Refusals (void, exceeds balance) are decided on the row
 * as read and thrown.
 */
export async function recordPaymentUnlocked(
  client: Queryable,
  invoice: InvoiceRow & { username?: string | null },
  p: PaymentDetails,
  audit?: PaymentAudit,
): Promise<PaymentResult | undefined> {
  const refusal = paymentRefusal(invoice.status, invoice.total, invoice.paidAmount, p.amount);
  if (refusal === 'void') throw fail('invoiceVoid');
  if (refusal === 'not_positive') throw fail('amountNotPositive');
  if (refusal === 'exceeds_balance') throw fail('amountExceedsBalance');
  const method = p.method ?? 'cash';
  const paidAt = p.paidAt ?? new Date();
  const reference = p.reference ?? null;
  const notes = p.notes ?? null;
  const createdBy = p.createdBy ?? null;
  const paidAfter = invoice.paidAmount + p.amount;
  const status = statusAfterPayment(invoice.status as InvoiceStatus, invoice.total, paidAfter);
  const invoicePaidAt = status === 'paid' ? paidAt : invoice.paidAt;
  // One prepared statement: this is the hottest write (every payment, every quick-pay allocation).
  const {
    rows: [row],
  } = await client.query<{ transaction_id: number; payment_id: number; created_at: Date; updated_at: Date }>({
    name: audit ? 'billing_record_payment_audited' : 'billing_record_payment',
    text: audit ? RECORD_PAYMENT_AUDITED : RECORD_PAYMENT,
    values: [
      p.amount,
      invoice.currency,
      invoice.subscriberId,
      invoice.username ?? null,
      invoice.resellerId,
      invoice.id,
      method,
      reference,
      notes,
      createdBy,
      paidAt,
      paidAfter,
      status,
      invoicePaidAt,
      invoice.paidAmount,
      invoice.status,
      invoice.total,
      ...(audit ? [audit.managerId, audit.actorType, audit.apiKeyId, audit.ip, JSON.stringify(audit.details)] : []),
    ],
  });
  if (!row) return undefined;
  const transactionId = Number(row.transaction_id);
  const payment: InvoicePaymentRow = {
    id: Number(row.payment_id),
    invoiceId: invoice.id,
    transactionId,
    amount: p.amount,
    method,
    reference,
    paidAt,
    notes,
    createdBy,
    createdAt: new Date(row.created_at),
  };
  const { username: _username, ...invoiceRow } = invoice;
  const updated: InvoiceRow = {
    ...invoiceRow,
    paidAmount: paidAfter,
    status,
    paidAt: invoicePaidAt,
    updatedAt: new Date(row.updated_at),
  };
  return { invoice: updated, payment, transactionId };
}

/** Applies a payment to an invoice row the caller has already locked. */
export async function recordPayment(
  tx: Tx,
  invoice: InvoiceRow & { username?: string | null },
  p: PaymentDetails,
): Promise<PaymentResult> {
  const result = await recordPaymentUnlocked(clientOf(tx), invoice, p);
  if (!result) throw new Error(`invoice ${invoice.id} changed under its row lock`);
  return result;
}
