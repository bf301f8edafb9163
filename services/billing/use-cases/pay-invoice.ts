/**
 * POST /api/invoices/:id/payment: one payment (ledger row and payment row) on one invoice.
 * shared/billing's applyPayment chooses between drawing on the wallet and paying under the
 * invoice's lock; this use case adds the caller's scope and the lock-free fast path.
 */
import type { Auth } from '../../../shared/auth/claims';
import { assertRecordInScope, requireAdminOrReseller } from '../../../shared/auth/policy';
import { applyPayment, readInvoiceForPayment, recordPaymentUnlocked, type PaymentMethod, type PaymentResult } from '../../../shared/billing';
import { db, pgPool } from '../../../shared/db/client';
import type { ActionResult } from '../../../shared/http/route';
import { fromMinor } from '../../../shared/money';
import { minor } from '../amounts';
import type { RequestWrite } from '../idempotency';
import { invoiceInScope } from '../records-in-scope';

export interface PayInvoiceInput {
  id: number;
  amount: number;
  method?: PaymentMethod;
  reference?: string;
  paid_at?: string;
  notes?: string;
}

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

export async function payInvoice(caller: Auth | undefined, p: PayInvoiceInput, write: RequestWrite): Promise<ActionResult> {
  const auth = requireAdminOrReseller(caller);
  const details = {
    method: p.method, reference: p.reference, notes: p.notes,
    paidAt: p.paid_at ? new Date(p.paid_at) : undefined, createdBy: auth.managerId,
  };
  // The common case, no wallet and no Idempotency-Key: read, check, then one compare-and-set
  // statement without a transaction; if another payment changed the invoice in between,
  // fall through to the locked path below, which always settles.
  if (p.method !== 'wallet' && !write.keyed) {
    const invoice = await readInvoiceForPayment(pgPool(), p.id);
    await assertRecordInScope(db(), auth, 'write', invoice.resellerId, 'invoiceNotFound');
    const r = await recordPaymentUnlocked(pgPool(), invoice, { ...details, amount: minor(p.amount, invoice.currency, 'amount') });
    if (r) return paymentResponse(r);
  }
  // Scope before the transaction: applyPayment takes its locks in the order its method needs
  // (a wallet payment locks the subscriber before the invoice).
  const head = await invoiceInScope(auth, p.id, 'write');
  const amount = minor(p.amount, head.currency, 'amount');
  return write.transaction(async (tx) => paymentResponse(await applyPayment(tx, { ...details, invoiceId: p.id, amount })));
}
