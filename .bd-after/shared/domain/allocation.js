"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.fifoOrder = fifoOrder;
exports.allocateFifo = allocateFifo;
/**
 * FIFO allocation of one amount over a subscriber's open invoices (quick-pay): oldest issue date
 * first, then lowest id; each invoice takes at most its balance; the invoice where the money runs
 * out takes a partial amount; void and paid invoices (and anything with no balance) take nothing.
 * What is left over is `remaining` (the caller credits it to the wallet).
 */
const invoice_state_1 = require("./invoice-state");
function fifoOrder(list) {
    return [...list].sort((a, b) => (a.issueDate < b.issueDate ? -1 : a.issueDate > b.issueDate ? 1 : a.id - b.id));
}
function allocateFifo(invoices, amount) {
    if (!Number.isSafeInteger(amount) || amount < 0)
        throw new RangeError('amount must be a non-negative integer');
    const allocations = [];
    let left = amount;
    for (const inv of fifoOrder(invoices)) {
        if (left === 0)
            break;
        const balance = inv.total - inv.paidAmount;
        if (!(0, invoice_state_1.isOpen)(inv.status) || balance <= 0)
            continue;
        const take = Math.min(balance, left);
        allocations.push({ invoiceId: inv.id, amount: take });
        left -= take;
    }
    return { allocations, remaining: left };
}
//# sourceMappingURL=allocation.js.map