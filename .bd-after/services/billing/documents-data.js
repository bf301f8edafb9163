"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.OPEN_STATUSES = void 0;
exports.loadInvoiceRow = loadInvoiceRow;
exports.loadDocument = loadDocument;
exports.loadSubscriber = loadSubscriber;
exports.loadOpenDocuments = loadOpenDocuments;
/**
 * Reads what an invoice document shows: the invoice, its items and payments, its subscriber.
 * Read-only by design: rendering never writes (send-combined must change no row).
 */
const drizzle_orm_1 = require("drizzle-orm");
const billing_1 = require("../../shared/billing");
const schema_1 = require("../../shared/db/schema");
/** Statuses whose balance is still owed: what send-combined merges. */
exports.OPEN_STATUSES = ['pending', 'partial', 'overdue'];
async function paymentsOf(db, invoiceIds) {
    if (invoiceIds.length === 0)
        return [];
    return db
        .select()
        .from(schema_1.invoicePayments)
        .where((0, drizzle_orm_1.inArray)(schema_1.invoicePayments.invoiceId, invoiceIds))
        .orderBy((0, drizzle_orm_1.asc)(schema_1.invoicePayments.paidAt), (0, drizzle_orm_1.asc)(schema_1.invoicePayments.id));
}
async function loadInvoiceRow(db, id) {
    const [row] = await db.select().from(schema_1.invoices).where((0, drizzle_orm_1.eq)(schema_1.invoices.id, id));
    return row;
}
/** One query after the other: `db` may be a transaction, whose one connection runs one query at a time. */
async function loadDocument(db, invoice) {
    const items = await (0, billing_1.loadItems)(db, invoice.id);
    return { invoice, items, payments: await paymentsOf(db, [invoice.id]) };
}
async function loadSubscriber(db, id) {
    const [row] = await db
        .select({ id: schema_1.subscribers.id, username: schema_1.subscribers.username, fullName: schema_1.subscribers.fullName, phone: schema_1.subscribers.phone, address: schema_1.subscribers.address })
        .from(schema_1.subscribers)
        .where((0, drizzle_orm_1.eq)(schema_1.subscribers.id, id));
    return row ?? null;
}
/** The subscriber's open invoices in one currency, oldest first, each with items and payments. */
async function loadOpenDocuments(db, subscriberId, currency) {
    const rows = await db
        .select()
        .from(schema_1.invoices)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.invoices.subscriberId, subscriberId), (0, drizzle_orm_1.eq)(schema_1.invoices.currency, currency), (0, drizzle_orm_1.inArray)(schema_1.invoices.status, exports.OPEN_STATUSES)))
        .orderBy((0, drizzle_orm_1.asc)(schema_1.invoices.issueDate), (0, drizzle_orm_1.asc)(schema_1.invoices.id));
    return Promise.all(rows.map((r) => loadDocument(db, r)));
}
//# sourceMappingURL=documents-data.js.map