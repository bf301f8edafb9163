"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.markOverdue = markOverdue;
/**
 * The overdue rule (docs/billing.md): a pending or partial invoice whose due date is before today
 * (UTC) and which still has a balance becomes `overdue`. Set-based, idempotent, safe to run from
 * several instances at once.
 */
const drizzle_orm_1 = require("drizzle-orm");
const billing_1 = require("../../shared/billing");
const client_1 = require("../../shared/db/client");
async function markOverdue(today = (0, billing_1.todayUtc)()) {
    const res = await (0, client_1.db)().execute((0, drizzle_orm_1.sql) `
    update invoices set status = 'overdue', updated_at = now()
    where status in ('pending', 'partial') and due_date < ${today} and total > paid_amount`);
    return res.rowCount ?? 0;
}
//# sourceMappingURL=overdue.js.map