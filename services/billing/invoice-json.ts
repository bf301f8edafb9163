/**
 * The API shape of invoices, items and payments (spec 2.2, 2.3), built by PostgreSQL as JSON text.
 * The hot reads hand that text to the gateway untouched: no per-column parsing in Node, no
 * JSON.stringify of the result (together about a third of a read's CPU, measured in docs/billing.md).
 * Writes answer with the same shape by reading their row back through the same SQL, so there is
 * one definition of the view. Money goes through `fromMinor`'s rule (minor units / 10^exponent,
 * trailing zeros dropped, as a JS number prints); the exponent table is money.ts's.
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
  return `(case ${cases.join(' ')} else 100 end)::numeric`;
}

/** Minor units as the API's decimal number, e.g. 1050 USD -> 10.5. `d` is the row's divisor. */
const major = (minor: string, d = 'cur.d') => `trim_scale((${minor})::numeric / ${d})`;

/** Date.prototype.toISOString's format (milliseconds, UTC, `Z`), or null. */
const iso = (ts: string) => `to_char(${ts} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** `cross join lateral` this after an invoice alias `i` to get `cur.d` for `major()`. */
export const CURRENCY_DIVISOR = `lateral (select ${divisorSql('i.currency')} as d) cur`;

/** One invoice row `i` (with `cur` joined), keys in the spec's order. */
export const INVOICE_JSON = `json_build_object(
  'id', i.id, 'invoice_number', i.invoice_number, 'subscriber_id', i.subscriber_id, 'reseller_id', i.reseller_id,
  'kind', i.kind, 'amount', ${major('i.amount')}, 'tax_rate', trim_scale(i.tax_rate), 'tax_amount', ${major('i.tax_amount')},
  'total', ${major('i.total')}, 'paid_amount', ${major('i.paid_amount')}, 'balance', ${major('i.total - i.paid_amount')},
  'status', i.status, 'currency', i.currency, 'issue_date', i.issue_date, 'due_date', i.due_date,
  'paid_at', ${iso('i.paid_at')}, 'notes', i.notes, 'commission_rate', trim_scale(i.commission_rate),
  'commission_amount', ${major('i.commission_amount')}, 'consolidated_into', i.consolidated_into,
  'created_by', i.created_by, 'created_at', ${iso('i.created_at')}`;

/** A payment row `p` of an invoice whose divisor is `cur.d`. */
export const PAYMENT_JSON = `json_build_object('id', p.id, 'invoice_id', p.invoice_id, 'transaction_id', p.transaction_id,
  'amount', ${major('p.amount')}, 'method', p.method, 'reference', p.reference, 'paid_at', ${iso('p.paid_at')},
  'notes', p.notes, 'created_by', p.created_by, 'created_at', ${iso('p.created_at')})`;

/** One invoice with its items and payments; `public_url` is added in Node (it needs the link key). */
export const INVOICE_DETAIL_JSON = `${INVOICE_JSON},
  'items', coalesce((select json_agg(json_build_object('description', t.description, 'qty', trim_scale(t.qty),
      'unit_price', ${major('t.unit_price')}, 'amount', ${major('t.amount')}) order by t.position)
    from invoice_items t where t.invoice_id = i.id), '[]'),
  'payments', coalesce((select json_agg(${PAYMENT_JSON} order by p.id)
    from invoice_payments p where p.invoice_id = i.id), '[]'))`;

/** A list row: the invoice without items, payments or link. */
export const INVOICE_LIST_JSON = `${INVOICE_JSON})`;
