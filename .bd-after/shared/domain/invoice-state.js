"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.canDelete = exports.canEdit = exports.isOpen = exports.OPEN_STATUSES = exports.initialStatus = exports.INVOICE_STATUSES = void 0;
exports.paymentRefusal = paymentRefusal;
exports.statusAfterPayment = statusAfterPayment;
exports.isOverdue = isOverdue;
/**
 * The invoice state machine of spec 3.1, plus the overdue rule this project chose (docs/billing.md):
 * an invoice whose due date has passed with a balance left is `overdue`; payments on it behave as on
 * pending/partial, and a partial payment leaves it `overdue` because it is still past due.
 */
exports.INVOICE_STATUSES = ['pending', 'partial', 'paid', 'overdue', 'void'];
/**
 * A new invoice owes its total; one whose total is 0 (a free plan, a fully discounted line) owes
 * nothing and could never be paid, since payments are positive, so it is settled at once
 * (docs/billing.md).
 */
const initialStatus = (total) => (total === 0 ? 'paid' : 'pending');
exports.initialStatus = initialStatus;
/** Statuses that can still take money (quick-pay's "open invoices"). */
exports.OPEN_STATUSES = ['pending', 'partial', 'overdue'];
const isOpen = (status) => exports.OPEN_STATUSES.includes(status);
exports.isOpen = isOpen;
/** Why a payment of `amount` cannot be applied, or null when it can. */
function paymentRefusal(status, total, paid, amount) {
    if (status === 'void')
        return 'void';
    if (amount <= 0)
        return 'not_positive';
    if (amount > total - paid)
        return 'exceeds_balance';
    return null;
}
/** Status after a payment that brought paid_amount to `paidAfter` (already checked <= total). */
function statusAfterPayment(status, total, paidAfter) {
    if (paidAfter >= total)
        return 'paid';
    return status === 'overdue' ? 'overdue' : 'partial';
}
/** The overdue rule: due date strictly before today and money still owed, on an open invoice. */
function isOverdue(status, dueDate, today, total, paid) {
    return (status === 'pending' || status === 'partial') && dueDate < today && total - paid > 0;
}
const canEdit = (status) => status === 'pending';
exports.canEdit = canEdit;
const canDelete = (status) => status !== 'paid';
exports.canDelete = canDelete;
//# sourceMappingURL=invoice-state.js.map