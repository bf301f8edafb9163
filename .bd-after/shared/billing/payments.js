"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.applyPayment = applyPayment;
exports.payFifo = payFifo;
/** Payment entry points: one invoice (POST /payment) and FIFO over a subscriber's open invoices. */
const drizzle_orm_1 = require("drizzle-orm");
const schema_1 = require("../db/schema");
const allocation_1 = require("../domain/allocation");
const invoice_state_1 = require("../domain/invoice-state");
const errors_1 = require("../errors");
const settings_1 = require("../settings");
const invoices_1 = require("./invoices");
const record_payment_1 = require("./record-payment");
const subscribers_1 = require("./subscribers");
const wallet_1 = require("./wallet");
/**
 * POST /api/invoices/:id/payment. Errors: 404 invoice not found, 409 invoice is void,
 * 400 amount exceeds balance. Method `wallet` also debits the wallet (400 when it holds too little).
 */
async function applyPayment(tx, input) {
    if (input.method === 'wallet') {
        const result = await (0, wallet_1.payFromWallet)(tx, { ...input, exact: true });
        // exact: true either applies the whole amount or throws.
        return result;
    }
    const invoice = await (0, invoices_1.lockInvoice)(tx, input.invoiceId);
    return (0, record_payment_1.recordPayment)(tx, invoice, input);
}
/**
 * Quick-pay: the amount goes over the subscriber's open invoices (pending, partial, overdue) in
 * the system currency, oldest issue date first then lowest id; the excess is credited to the wallet.
 * The subscriber row lock serialises concurrent quick-pays, so no invoice is ever overpaid.
 */
async function payFifo(tx, input) {
    if (!Number.isSafeInteger(input.amount) || input.amount <= 0)
        throw (0, errors_1.badRequest)('amount must be greater than 0');
    const subscriber = await (0, subscribers_1.lockSubscriber)(tx, input.subscriberId);
    const { currency } = await (0, settings_1.loadSettings)(tx, ['currency']);
    const open = await tx
        .select()
        .from(schema_1.invoices)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.invoices.subscriberId, subscriber.id), (0, drizzle_orm_1.inArray)(schema_1.invoices.status, [...invoice_state_1.OPEN_STATUSES]), (0, drizzle_orm_1.eq)(schema_1.invoices.currency, currency)))
        .orderBy((0, drizzle_orm_1.asc)(schema_1.invoices.id))
        .for('update');
    const { allocations, remaining } = (0, allocation_1.allocateFifo)(open, input.amount);
    const byId = new Map(open.map((i) => [i.id, i]));
    const applied = [];
    for (const a of allocations) {
        const r = await (0, record_payment_1.recordPayment)(tx, { ...byId.get(a.invoiceId), username: subscriber.username }, { ...input, amount: a.amount });
        applied.push({ invoiceId: a.invoiceId, amount: a.amount, paymentId: r.payment.id, transactionId: r.transactionId });
    }
    let walletTransactionId = null;
    if (remaining > 0) {
        const credit = await (0, wallet_1.creditWallet)(tx, {
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
    return { applied, remaining, walletTransactionId };
}
//# sourceMappingURL=payments.js.map