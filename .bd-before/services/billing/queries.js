"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.invoiceJson = invoiceJson;
exports.invoiceHead = invoiceHead;
exports.subscriberHead = subscriberHead;
exports.paymentsJson = paymentsJson;
exports.commissionRows = commissionRows;
/**
 * The billing unit's reads: each is one prepared statement (no N+1), and the invoice reads come
 * back as the API's JSON text built by PostgreSQL (invoice-json.ts), ready for the envelope.
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const public_links_1 = require("../../shared/public-links");
const invoice_json_1 = require("./invoice-json");
const sql_1 = require("./sql");
const INVOICE_DETAIL = `select i.reseller_id as "resellerId", i.public_token_nonce as nonce, ${invoice_json_1.INVOICE_DETAIL_JSON}::text as json
  from invoices i cross join ${invoice_json_1.CURRENCY_DIVISOR} where i.id = $1`;
/**
 * One invoice as API JSON, or undefined. `client` is a transaction's connection when a write
 * answers with the row it just wrote (default: the pool).
 */
async function invoiceJson(id, client) {
    const query = { name: 'billing_invoice_detail_json', text: INVOICE_DETAIL, values: [id] };
    const { rows: [row] } = await (client ?? (0, client_1.pgPool)()).query(query);
    if (!row)
        return undefined;
    // The link is an HMAC under a key the database never sees: appended here as the last key.
    const url = row.nonce ? (0, public_links_1.publicUrl)(id, row.nonce) : null;
    return { resellerId: row.resellerId, json: `${row.json.slice(0, -1)},"public_url":${JSON.stringify(url)}}` };
}
/** Owner and currency of an invoice, for the scope check and amount conversion before a write. */
async function invoiceHead(id) {
    const [row] = await (0, sql_1.namedRows)('billing_invoice_head', 'select reseller_id as "resellerId", currency from invoices where id = $1', [id]);
    return row;
}
async function subscriberHead(id) {
    const [row] = await (0, sql_1.namedRows)('billing_subscriber_head', 'select reseller_id as "resellerId" from subscribers where id = $1 and deleted_at is null', [id]);
    return row;
}
/** The payments of an invoice as API JSON (an array), oldest first. */
async function paymentsJson(invoiceId) {
    const [row] = await (0, sql_1.namedRows)('billing_payments_json', `
    select coalesce(json_agg(${invoice_json_1.PAYMENT_JSON} order by p.id), '[]')::text as json
    from invoices i cross join ${invoice_json_1.CURRENCY_DIVISOR} join invoice_payments p on p.invoice_id = i.id
    where i.id = $1`, [invoiceId]);
    return row.json;
}
async function commissionRows(scope, f) {
    const conds = [(0, drizzle_orm_1.sql) `i.status <> 'void'`];
    if (scope.kind !== 'all')
        conds.push((0, policy_1.inScope)(scope, (0, drizzle_orm_1.sql) `i.reseller_id`));
    if (f.resellerId)
        conds.push((0, drizzle_orm_1.sql) `i.reseller_id = ${f.resellerId}`);
    if (f.from)
        conds.push((0, drizzle_orm_1.sql) `i.issue_date >= ${f.from}`);
    if (f.to)
        conds.push((0, drizzle_orm_1.sql) `i.issue_date <= ${f.to}`);
    if (f.statuses)
        conds.push((0, drizzle_orm_1.sql) `i.status in (${drizzle_orm_1.sql.join(f.statuses.map((s) => (0, drizzle_orm_1.sql) `${s}`), (0, drizzle_orm_1.sql) `, `)})`);
    // Grouped by the month's first day and formatted once per month: to_char on every row was a
    // third of the statement on a 250,000-invoice tree. invoices_commission_idx covers the columns.
    return (0, sql_1.preparedRows)((0, drizzle_orm_1.sql) `
    select to_char(m.month, 'YYYY-MM') as month, m.invoiced, m.commission from (
      select date_trunc('month', i.issue_date) as month, sum(i.amount)::bigint as invoiced,
        sum(i.commission_amount)::bigint as commission
      from invoices i where ${drizzle_orm_1.sql.join(conds, (0, drizzle_orm_1.sql) ` and `)}
      group by 1) m
    order by m.month`);
}
//# sourceMappingURL=queries.js.map