/**
 * The API shape of invoices, items and payments (spec 2.2, 2.3), built by PostgreSQL as JSON text.
 * The hot reads hand that text to the gateway untouched: no per-column parsing in Node, no
 * JSON.stringify of the result (together about a third of a read's CPU, measured in docs/billing.md).
 * Writes answer with the same shape by reading their row back through the same SQL, so there is
 * one definition of the view. An invoice's own fields are kept as JSON in its row (`api_json`,
 * migration 0040, whose function defines them); items and payments are built here. Money follows
 * `fromMinor` (see `major`); the exponent table is money.ts's.
 */
import { EXPONENT_EXCEPTIONS } from '../../shared/money';

const byDivisor = new Map<number, string[]>();
for (const [code, exp] of Object.entries(EXPONENT_EXCEPTIONS)) {
  const divisor = 10 ** exp;
  byDivisor.set(divisor, [...(byDivisor.get(divisor) ?? []), `'${code}'`]);
}

/** The divisor from minor to major units of the currency in `column`, as a SQL expression. */
function divisorSql(column: string): string {
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
const major = (minor: string, d = 'cur.d') => `(${minor})::float8 / ${d}`;

/** Date.prototype.toISOString's format (milliseconds, UTC, `Z`), or null. */
const iso = (ts: string) => `to_char(${ts} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * `cross join` this after an invoice alias `i` to get `cur.d` for `major()`. `offset 0` keeps the
 * planner from inlining the CASE into every money column (it would be evaluated ten times a row).
 */
export const CURRENCY_DIVISOR = `lateral (select ${divisorSql('i.currency')} as d offset 0) cur`;

/** A payment row `p` of an invoice whose divisor is `cur.d`. */
export const PAYMENT_JSON = `json_build_object('id', p.id, 'invoice_id', p.invoice_id, 'transaction_id', p.transaction_id,
  'amount', ${major('p.amount')}, 'method', p.method, 'reference', p.reference, 'paid_at', ${iso('p.paid_at')},
  'notes', p.notes, 'created_by', p.created_by, 'created_at', ${iso('p.created_at')})`;

/**
 * The names a person reads beside the invoice's ids (issue 39): `subscriber_username` and
 * `reseller_name`, read when the invoice is shown (a rename shows at once; they are not kept in
 * `api_json`), appended to the kept JSON without its closing brace.
 */
const NAMES_JSON = `',"subscriber_username":' || coalesce(to_json((select s.username from subscribers s where s.id = i.subscriber_id))::text, 'null')
  || ',"reseller_name":' || coalesce(to_json((select r.name from resellers r where r.id = i.reseller_id))::text, 'null')`;

/**
 * One invoice `i` (with `cur` joined, for its items and payments) as JSON text: its row's kept JSON
 * (`invoices.api_json`, migration 0040, the one definition of an invoice's fields), the names, then
 * items and payments as its last keys. `public_url` is added in Node (it needs the link key).
 */
export const INVOICE_DETAIL_JSON = `left(i.api_json, -1) || ${NAMES_JSON} || ',"items":' || coalesce((select json_agg(json_build_object(
    'description', t.description, 'qty', trim_scale(t.qty), 'unit_price', ${major('t.unit_price')}, 'amount', ${major('t.amount')})
    order by t.position) from invoice_items t where t.invoice_id = i.id), '[]')::text
  || ',"payments":' || coalesce((select json_agg(${PAYMENT_JSON} order by p.id)
    from invoice_payments p where p.invoice_id = i.id), '[]')::text || '}'`;

/**
 * The list rows `i` as a JSON array, in `order`: their kept JSON (`invoices.api_json`) joined with
 * the names, without building the rest (building 50 rows' JSON was a third of a computed page's
 * PostgreSQL time).
 */
export const invoiceListJson = (order: string) =>
  `coalesce('[' || string_agg(left(i.api_json, -1) || ${NAMES_JSON} || '}', ',' order by ${order}) || ']', '[]')`;
