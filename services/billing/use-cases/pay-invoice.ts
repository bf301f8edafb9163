/**
 * POST /api/invoices/:id/payment: one payment (ledger row and payment row) on one invoice.
 * shared/billing's applyPayment chooses between drawing on the wallet and paying under the
 * invoice's lock; this use case adds the caller's scope and the lock-free fast path.
 */
import { actorOf, auditWriting, recordAudit } from '../../../shared/audit';
import type { Auth } from '../../../shared/auth/claims';
import { recordInScope, requireInvoicePermission } from '../../../shared/auth/policy';
import {
  applyPayment,
  readInvoiceForPayment,
  recordPaymentUnlocked,
  todayUtc,
  type PaymentResult,
} from '../../../shared/billing';
import { db, pgPool } from '../../../shared/db/client';
import type { ActionResult } from '../../../shared/http/route';
import type { IdPath } from '../../../shared/http/schemas';
import { fromMinor, moneyField } from '../../../shared/money';
import { invoiceHead } from '../queries';
import type { RequestWrite } from '../idempotency';
import type { PayInput } from '../invoice-schemas';

/** The answer of spec 4.1, kept whole as the Idempotency-Key's stored response. */
function paymentResponse(r: PaymentResult): ActionResult {
  const c = r.invoice.currency;
  return {
    data: {
      invoice: {
        id: r.invoice.id,
        status: r.invoice.status,
        paid_amount: fromMinor(r.invoice.paidAmount, c),
        balance: fromMinor(r.invoice.total - r.invoice.paidAmount, c),
        paid_at: r.invoice.paidAt ? r.invoice.paidAt.toISOString() : null,
      },
      payment: { id: r.payment.id, amount: fromMinor(r.payment.amount, c), method: r.payment.method },
      transaction_id: r.transactionId,
    },
  };
}

export async function payInvoice(
  caller: Auth | undefined,
  p: IdPath & PayInput,
  write: RequestWrite,
): Promise<ActionResult> {
  const auth = requireInvoicePermission(caller, 'invoices.pay');
  const details = {
    method: p.method,
    reference: p.reference,
    notes: p.notes,
    paidAt: p.paid_at ? new Date(p.paid_at) : undefined,
    createdBy: auth.managerId,
  };
  // The common case, no wallet and no Idempotency-Key: read, check, then one compare-and-set
  // statement without a transaction; if another payment changed the invoice in between,
  // fall through to the locked path below, which always settles.
  if (p.method !== 'wallet' && !write.keyed) {
    const invoice = await readInvoiceForPayment(pgPool(), p.id);
    await recordInScope(db(), auth, 'write', invoice, 'invoiceNotFound');
    // An invoice past due may be what suspends its subscriber: the locked path restores in the
    // payment's transaction (shared/billing/restore.ts).
    const r =
      invoice.dueDate < todayUtc()
        ? undefined
        : await recordPaymentUnlocked(
            pgPool(),
            invoice,
            { ...details, amount: moneyField(p.amount, invoice.currency, 'amount') },
            auditWriting()
              ? { ...actorOf(auth), details: { amount: p.amount, method: p.method ?? 'cash' } }
              : undefined,
          );
    if (r) return paymentResponse(r);
  }
  // Scope before the transaction: applyPayment takes its locks in the order its method needs
  // (a wallet payment locks the subscriber before the invoice).
  const head = await recordInScope(db(), auth, 'write', await invoiceHead(p.id), 'invoiceNotFound');
  const amount = moneyField(p.amount, head.currency, 'amount');
  return write.transaction(async (tx) => {
    const r = await applyPayment(tx, { ...details, invoiceId: p.id, amount });
    await recordAudit(tx, auth, {
      action: 'payment.create',
      entity: 'invoice',
      entityId: p.id,
      resellerId: head.resellerId,
      details: {
        payment_id: r.payment.id,
        amount: fromMinor(r.payment.amount, head.currency),
        method: r.payment.method,
      },
    });
    return paymentResponse(r);
  });
}
