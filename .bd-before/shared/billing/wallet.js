"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.creditWallet = creditWallet;
exports.payFromWallet = payFromWallet;
/**
 * Subscriber prepaid credit. `subscribers.wallet_balance` is the running sum of `wallet_entries`;
 * both change together with one ledger row. The wallet holds the system currency.
 *
 * Ledger convention: money put into the wallet is a `wallet_credit` transaction (cash received);
 * paying an invoice from the wallet is an `invoice_payment` transaction with method `wallet` whose
 * wallet side is a negative `wallet_entries` row pointing at that same transaction.
 */
const drizzle_orm_1 = require("drizzle-orm");
const schema_1 = require("../db/schema");
const errors_1 = require("../errors");
const ledger_1 = require("../ledger");
const settings_1 = require("../settings");
const invoices_1 = require("./invoices");
const record_payment_1 = require("./record-payment");
const subscribers_1 = require("./subscribers");
async function creditWallet(tx, input) {
    if (!Number.isSafeInteger(input.amount) || input.amount <= 0)
        throw (0, errors_1.badRequest)('amount must be greater than 0');
    const currency = input.currency ?? (await (0, settings_1.loadSettings)(tx, ['currency'])).currency;
    const [sub] = await tx
        .update(schema_1.subscribers)
        .set({ walletBalance: (0, drizzle_orm_1.sql) `${schema_1.subscribers.walletBalance} + ${input.amount}` })
        .where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, input.subscriberId))
        .returning({ username: schema_1.subscribers.username, resellerId: schema_1.subscribers.resellerId, walletBalance: schema_1.subscribers.walletBalance });
    if (!sub)
        throw (0, errors_1.notFound)('subscriber not found');
    const transactionId = await (0, ledger_1.recordTransaction)(tx, {
        type: 'wallet_credit',
        amount: input.amount,
        currency,
        subscriberId: input.subscriberId,
        username: sub.username,
        resellerId: sub.resellerId,
        method: input.method ?? null,
        reference: input.reference ?? null,
        notes: input.notes ?? input.reason,
        createdBy: input.createdBy ?? null,
    });
    const [entry] = await tx
        .insert(schema_1.walletEntries)
        .values({ subscriberId: input.subscriberId, amount: input.amount, transactionId, reason: input.reason })
        .returning({ id: schema_1.walletEntries.id });
    return { transactionId, walletEntryId: entry.id, walletBalance: sub.walletBalance };
}
/**
 * Pays an invoice from its subscriber's wallet (renewals: "paid from the wallet first when it holds
 * credit"). Returns applied 0 and writes nothing when the wallet is empty, the invoice has no
 * balance, or the invoice is not in the wallet's currency. A void invoice is 409 `invoice is void`.
 */
async function payFromWallet(tx, input) {
    const [head] = await tx.execute((0, drizzle_orm_1.sql) `select subscriber_id from invoices where id = ${input.invoiceId}`).then((r) => r.rows);
    if (!head)
        throw (0, errors_1.notFound)('invoice not found');
    const subscriber = await (0, subscribers_1.lockSubscriber)(tx, head.subscriber_id);
    const invoice = await (0, invoices_1.lockInvoice)(tx, input.invoiceId);
    if (invoice.status === 'void')
        throw (0, errors_1.conflict)('invoice is void');
    const { currency } = await (0, settings_1.loadSettings)(tx, ['currency']);
    const balance = invoice.total - invoice.paidAmount;
    const wanted = input.amount ?? balance;
    if (input.exact) {
        if (wanted > balance)
            throw (0, errors_1.badRequest)('amount exceeds balance');
        if (invoice.currency !== currency)
            throw (0, errors_1.badRequest)(`the wallet holds ${currency}; this invoice is in ${invoice.currency}`);
        if (subscriber.walletBalance < wanted)
            throw (0, errors_1.badRequest)('amount exceeds wallet balance');
    }
    const take = invoice.currency === currency ? Math.min(wanted, balance, subscriber.walletBalance) : 0;
    if (take <= 0) {
        if (input.exact)
            throw (0, errors_1.badRequest)('amount must be greater than 0');
        return { applied: 0, invoice: null, payment: null, transactionId: null };
    }
    const result = await (0, record_payment_1.recordPayment)(tx, { ...invoice, username: subscriber.username }, { ...input, amount: take, method: 'wallet' });
    await tx.insert(schema_1.walletEntries).values({ subscriberId: subscriber.id, amount: -take, transactionId: result.transactionId, reason: `invoice ${invoice.invoiceNumber}` });
    await tx.update(schema_1.subscribers).set({ walletBalance: (0, drizzle_orm_1.sql) `${schema_1.subscribers.walletBalance} - ${take}` }).where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, subscriber.id));
    return { applied: take, ...result };
}
//# sourceMappingURL=wallet.js.map