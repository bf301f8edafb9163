"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.MAX_TOTAL_MINOR = void 0;
exports.lineAmount = lineAmount;
exports.invoiceTotals = invoiceTotals;
/**
 * Invoice arithmetic (ARCHITECTURE section 3), pure and in integer minor units:
 *   line amount = qty x unit_price, rounded half-up once per line;
 *   amount = sum of lines; tax_amount = amount x tax_rate / 100 half-up; total = amount + tax;
 *   commission_amount = amount x commission_rate / 100 half-up (on the amount before tax).
 * Quantities and rates are decimals (number or decimal string) and go through BigInt, never floats.
 */
const money_1 = require("../money");
/** Totals above this are refused: minor units must stay exact as JS numbers (2^53). */
exports.MAX_TOTAL_MINOR = 1e15;
function lineAmount(qty, unitPrice) {
    const q = (0, money_1.parseDecimal)(qty);
    return Number((0, money_1.divRoundHalfUp)(q.digits * BigInt(unitPrice), 10n ** BigInt(q.scale)));
}
/** Throws RangeError when the result would not be exact (callers turn that into a 400). */
function invoiceTotals(items, taxRate, commissionRate) {
    const priced = items.map((it) => ({ ...it, amount: lineAmount(it.qty, it.unitPrice) }));
    const amount = priced.reduce((sum, it) => sum + BigInt(it.amount), 0n);
    if (amount > BigInt(exports.MAX_TOTAL_MINOR))
        throw new RangeError('invoice total too large');
    const a = Number(amount);
    const taxAmount = (0, money_1.percentOf)(a, taxRate);
    return { items: priced, amount: a, taxAmount, total: a + taxAmount, commissionAmount: (0, money_1.percentOf)(a, commissionRate) };
}
//# sourceMappingURL=invoice-math.js.map