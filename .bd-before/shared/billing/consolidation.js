"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.consolidateInvoices = consolidateInvoices;
const drizzle_orm_1 = require("drizzle-orm");
const errors_1 = require("../errors");
const dates_1 = require("./dates");
const invoices_1 = require("./invoices");
const subscribers_1 = require("./subscribers");
/**
 * Merges every pending invoice of a subscriber into one new `pending` invoice whose lines are the
 * originals' lines (in invoice then line order), and voids the originals with `consolidated_into`
 * pointing at it. The subscriber row lock makes a second concurrent consolidation wait, then find
 * fewer than two pending invoices and get 409. The merged invoice keeps the earliest original due
 * date (consolidating never extends a deadline; today if that has passed) and needs one currency
 * and one tax rate.
 */
async function consolidateInvoices(tx, input) {
    const subscriber = await (0, subscribers_1.lockSubscriber)(tx, input.subscriberId);
    const originals = await (0, invoices_1.lockPendingInvoices)(tx, subscriber.id);
    if (originals.length < 2)
        throw (0, errors_1.conflict)('at least two pending invoices are needed to consolidate');
    if (new Set(originals.map((o) => o.currency)).size > 1)
        throw (0, errors_1.conflict)('pending invoices are in different currencies');
    if (new Set(originals.map((o) => Number(o.taxRate))).size > 1)
        throw (0, errors_1.conflict)('pending invoices have different tax rates');
    const ids = originals.map((o) => o.id);
    const lines = await tx.execute((0, drizzle_orm_1.sql) `
    select description, qty, unit_price from invoice_items
    where invoice_id in (${drizzle_orm_1.sql.join(ids.map((id) => (0, drizzle_orm_1.sql) `${id}`), (0, drizzle_orm_1.sql) `, `)}) order by invoice_id, position`);
    const record = await (0, invoices_1.createInvoice)(tx, {
        subscriberId: subscriber.id,
        resellerId: subscriber.resellerId,
        items: lines.rows.map((l) => ({ description: l.description, qty: l.qty, unitPrice: Number(l.unit_price) })),
        taxRate: originals[0].taxRate,
        currency: originals[0].currency,
        // Never later than the earliest original, never before today (a pending invoice can be past due
        // until the daily overdue job sees it).
        dueDate: [originals.map((o) => o.dueDate).sort()[0], (0, dates_1.todayUtc)()].sort()[1],
        notes: input.notes ?? null,
        kind: 'consolidated',
        createdBy: input.createdBy,
    });
    await (0, invoices_1.voidInvoices)(tx, ids, record.invoice.id);
    return { ...record, voidedIds: ids };
}
//# sourceMappingURL=consolidation.js.map