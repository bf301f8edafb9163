"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.INVOICE_COLUMNS = void 0;
exports.clientOf = clientOf;
exports.txQuery = txQuery;
function clientOf(tx) {
    const client = tx.session?.client;
    if (!client || typeof client.query !== 'function')
        throw new Error('drizzle transaction without a pg client (drizzle-orm internals changed)');
    return client;
}
async function txQuery(tx, name, text, values) {
    const res = await clientOf(tx).query({ name, text, values });
    return res.rows;
}
/** Invoice columns under the Drizzle row's property names, so raw rows are `InvoiceRow`s. */
exports.INVOICE_COLUMNS = `i.id, i.invoice_number as "invoiceNumber", i.subscriber_id as "subscriberId",
  i.reseller_id as "resellerId", i.kind, i.amount, i.tax_rate as "taxRate", i.tax_amount as "taxAmount", i.total,
  i.paid_amount as "paidAmount", i.status, i.currency, i.issue_date as "issueDate", i.due_date as "dueDate",
  i.paid_at as "paidAt", i.notes, i.commission_rate as "commissionRate", i.commission_amount as "commissionAmount",
  i.consolidated_into as "consolidatedInto", i.public_token_nonce as "publicTokenNonce",
  i.public_token_hash as "publicTokenHash", i.created_by as "createdBy", i.created_at as "createdAt",
  i.updated_at as "updatedAt"`;
//# sourceMappingURL=pg.js.map