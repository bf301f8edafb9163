"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.quoteServiceChange = quoteServiceChange;
exports.settleServiceChange = settleServiceChange;
/**
 * A plan change priced by the shared proration function, used by POST /api/invoices/prorate and by
 * the subscribers' change-service endpoints, so the quote and the charge can never differ.
 */
const drizzle_orm_1 = require("drizzle-orm");
const schema_1 = require("../db/schema");
const proration_1 = require("../domain/proration");
const errors_1 = require("../errors");
const dates_1 = require("./dates");
const invoices_1 = require("./invoices");
const wallet_1 = require("./wallet");
/**
 * Old price is what the subscriber pays now (its own price when `override_price`, else the plan's);
 * new price is the new plan's. Errors: 404 `subscriber not found`; 400 `<serviceField> not found`;
 * 400 when the two plans are priced in different currencies.
 */
async function quoteServiceChange(db, input) {
    const field = input.serviceField ?? 'new_service_id';
    const [sub] = await db
        .select({ id: schema_1.subscribers.id, resellerId: schema_1.subscribers.resellerId, price: schema_1.subscribers.price, overridePrice: schema_1.subscribers.overridePrice, expiryDate: schema_1.subscribers.expiryDate, serviceId: schema_1.subscribers.serviceId })
        .from(schema_1.subscribers)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.subscribers.id, input.subscriberId), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)));
    if (!sub)
        throw (0, errors_1.notFound)('subscriber not found');
    const [oldPlan] = await db.select().from(schema_1.services).where((0, drizzle_orm_1.eq)(schema_1.services.id, sub.serviceId));
    const [newPlan] = await db.select().from(schema_1.services).where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.services.id, input.newServiceId), (0, drizzle_orm_1.isNull)(schema_1.services.deletedAt)));
    if (!newPlan)
        throw (0, errors_1.badRequest)(`${field} not found`);
    if (!oldPlan)
        throw (0, errors_1.badRequest)('the subscriber has no current plan to prorate');
    if (oldPlan.currency !== newPlan.currency) {
        throw (0, errors_1.badRequest)(`${field} is priced in ${newPlan.currency} but the current plan in ${oldPlan.currency}`);
    }
    const oldPrice = sub.overridePrice && sub.price !== null ? sub.price : oldPlan.price;
    const p = (0, proration_1.prorate)({
        oldPrice,
        oldPeriodDays: oldPlan.durationDays,
        newPrice: newPlan.price,
        newPeriodDays: newPlan.durationDays,
        today: input.today ?? (0, dates_1.todayUtc)(),
        expiryDate: sub.expiryDate,
    });
    return {
        ...p,
        subscriberId: sub.id,
        resellerId: sub.resellerId,
        oldServiceId: oldPlan.id,
        oldServiceName: oldPlan.name,
        newServiceId: newPlan.id,
        newServiceName: newPlan.name,
        currency: newPlan.currency,
    };
}
/** charge_difference: an invoice for the net due, or a wallet credit for a net refund, or nothing. */
async function settleServiceChange(tx, quote, opts = {}) {
    const description = `Plan change ${quote.oldServiceName} -> ${quote.newServiceName} (${quote.daysRemaining} days)`;
    if (quote.netAmountDue > 0) {
        const invoice = await (0, invoices_1.createInvoice)(tx, {
            subscriberId: quote.subscriberId,
            resellerId: quote.resellerId,
            items: [{ description, qty: 1, unitPrice: quote.netAmountDue }],
            currency: quote.currency,
            taxRate: opts.taxRate,
            kind: 'service_change',
            createdBy: opts.createdBy,
        });
        return { invoice, walletCredit: null };
    }
    if (quote.netAmountDue < 0) {
        const walletCredit = await (0, wallet_1.creditWallet)(tx, {
            subscriberId: quote.subscriberId,
            amount: -quote.netAmountDue,
            currency: quote.currency,
            reason: 'service change credit',
            notes: description,
            createdBy: opts.createdBy,
        });
        return { invoice: null, walletCredit };
    }
    return { invoice: null, walletCredit: null };
}
//# sourceMappingURL=service-change.js.map