"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.INVOICE_LIST_JSON = exports.INVOICE_DETAIL_JSON = exports.PAYMENT_JSON = exports.CURRENCY_DIVISOR = void 0;
/**
 * The API shape of invoices, items and payments (spec 2.2, 2.3), built by PostgreSQL as JSON text.
 * The hot reads hand that text to the gateway untouched: no per-column parsing in Node, no
 * JSON.stringify of the result (together about a third of a read's CPU, measured in docs/billing.md).
 * Writes answer with the same shape by reading their row back through the same SQL, so there is
 * one definition of the view. Money follows `fromMinor` (see `major`); the exponent table is money.ts's.
 */
const money_1 = require("../../shared/money");
const byDivisor = new Map();
for (const [code, exp] of Object.entries(money_1.EXPONENT_EXCEPTIONS)) {
    const divisor = 10 ** exp;
    byDivisor.set(divisor, [...(byDivisor.get(divisor) ?? []), `'${code}'`]);
}
/** The divisor from minor to major units of the currency in `column`, as a SQL expression. */
function divisorSql(column) {
    const cases = [...byDivisor].map(([divisor, codes]) => `when ${column} in (${codes.join(', ')}) then ${divisor}`);
    return `(case ${cases.join(' ')} else 100 end)::float8`;
}
/**
 * Minor units as the API's decimal number, e.g. 1050 USD -> 10.5, exactly as `fromMinor` gives it:
 * both operands are exact doubles (|minor| < 2^53, divisor <= 10^4) and IEEE division rounds
 * correctly, so the quotient is the double nearest the decimal value, the same double that
 * `Number("10.50")` parses; PostgreSQL prints float8 as the shortest round-trip text, as JS does.
 * Several times cheaper than numeric division. `d` is the row's divisor.
 */
const major = (minor, d = 'cur.d') => `(${minor})::float8 / ${d}`;
/** Date.prototype.toISOString's format (milliseconds, UTC, `Z`), or null. */
const iso = (ts) => `to_char(${ts} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/**
 * `cross join` this after an invoice alias `i` to get `cur.d` for `major()`. `offset 0` keeps the
 * planner from inlining the CASE into every money column (it would be evaluated ten times a row).
 */
exports.CURRENCY_DIVISOR = `lateral (select ${divisorSql('i.currency')} as d offset 0) cur`;
/** The API fields of invoice `i` (with `cur` joined) as a select list, in the spec's order. */
const INVOICE_FIELDS = `i.id, i.invoice_number, i.subscriber_id, i.reseller_id, i.kind, ${major('i.amount')} as amount,
  trim_scale(i.tax_rate) as tax_rate, ${major('i.tax_amount')} as tax_amount, ${major('i.total')} as total,
  ${major('i.paid_amount')} as paid_amount, ${major('i.total - i.paid_amount')} as balance, i.status, i.currency,
  i.issue_date, i.due_date, ${iso('i.paid_at')} as paid_at, i.notes, trim_scale(i.commission_rate) as commission_rate,
  ${major('i.commission_amount')} as commission_amount, i.consolidated_into, i.created_by, ${iso('i.created_at')} as created_at`;
/** A payment row `p` of an invoice whose divisor is `cur.d`. */
exports.PAYMENT_JSON = `json_build_object('id', p.id, 'invoice_id', p.invoice_id, 'transaction_id', p.transaction_id,
  'amount', ${major('p.amount')}, 'method', p.method, 'reference', p.reference, 'paid_at', ${iso('p.paid_at')},
  'notes', p.notes, 'created_by', p.created_by, 'created_at', ${iso('p.created_at')})`;
/** One invoice `i` with its items and payments, as JSON; `public_url` is added in Node (it needs the link key). */
exports.INVOICE_DETAIL_JSON = `(select row_to_json(v) from (select ${INVOICE_FIELDS},
  coalesce((select json_agg(json_build_object('description', t.description, 'qty', trim_scale(t.qty),
      'unit_price', ${major('t.unit_price')}, 'amount', ${major('t.amount')}) order by t.position)
    from invoice_items t where t.invoice_id = i.id), '[]') as items,
  coalesce((select json_agg(${exports.PAYMENT_JSON} order by p.id)
    from invoice_payments p where p.invoice_id = i.id), '[]') as payments) v)`;
/** A list row: invoice `i` without items, payments or link, as JSON. */
exports.INVOICE_LIST_JSON = `(select row_to_json(v) from (select ${INVOICE_FIELDS}) v)`;
//# sourceMappingURL=invoice-json.js.map