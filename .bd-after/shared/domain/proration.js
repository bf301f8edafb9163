"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.daysBetween = daysBetween;
exports.prorate = prorate;
/**
 * Day-based proration of a plan change, shared by POST /api/invoices/prorate and the
 * subscribers' change-service price calculation:
 *   credit = old price x unused days / period days
 *   charge = new price x remaining days / period days
 * each rounded once, half-up, to the minor unit. Pure: dates are ISO `YYYY-MM-DD` strings.
 */
const money_1 = require("../money");
const DAY_MS = 86_400_000;
function daysBetween(from, to) {
    return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}
function prorate(input) {
    if (input.oldPeriodDays <= 0 || input.newPeriodDays <= 0)
        throw new RangeError('period days must be positive');
    // Remaining days cannot exceed the period the subscriber paid for (an expiry pushed far out by
    // add-days is credited at most one period).
    const daysRemaining = Math.max(0, Math.min(daysBetween(input.today, input.expiryDate), input.oldPeriodDays));
    const oldUnusedCredit = Number((0, money_1.divRoundHalfUp)(BigInt(input.oldPrice) * BigInt(daysRemaining), BigInt(input.oldPeriodDays)));
    const newServiceCharge = Number((0, money_1.divRoundHalfUp)(BigInt(input.newPrice) * BigInt(daysRemaining), BigInt(input.newPeriodDays)));
    return { daysRemaining, oldUnusedCredit, newServiceCharge, netAmountDue: newServiceCharge - oldUnusedCredit };
}
//# sourceMappingURL=proration.js.map