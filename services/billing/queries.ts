/**
 * The billing unit's reads: each is one prepared statement (no N+1), and the invoice reads come
 * back as the API's JSON text built by PostgreSQL (invoice-json.ts), ready for the envelope.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { PoolClient } from 'pg';
import { inScope, type Scope } from '../../shared/auth/policy';
import { pgPool } from '../../shared/db/client';
import { publicUrl } from '../../shared/public-links';
import { CURRENCY_DIVISOR, INVOICE_DETAIL_JSON, PAYMENT_JSON } from './invoice-json';
import { namedRows, preparedRows } from './sql';

export interface InvoiceJson {
  resellerId: number;
  /** The invoice as the API shows it, with items, payments and `public_url`. */
  json: string;
}

const INVOICE_DETAIL = `select i.reseller_id as "resellerId", i.public_token_nonce as nonce, ${INVOICE_DETAIL_JSON}::text as json
  from invoices i cross join ${CURRENCY_DIVISOR} where i.id = $1`;

/**
 * One invoice as API JSON, or undefined. `client` is a transaction's connection when a write
 * answers with the row it just wrote (default: the pool).
 */
export async function invoiceJson(id: number, client?: PoolClient): Promise<InvoiceJson | undefined> {
  const query = { name: 'billing_invoice_detail_json', text: INVOICE_DETAIL, values: [id] };
  const {
    rows: [row],
  } = await (client ?? pgPool()).query<{ resellerId: number; nonce: string | null; json: string }>(query);
  if (!row) return undefined;
  // The link is an HMAC under a key the database never sees: appended here as the last key.
  const url = row.nonce ? publicUrl(id, row.nonce) : null;
  return { resellerId: row.resellerId, json: `${row.json.slice(0, -1)},"public_url":${JSON.stringify(url)}}` };
}

/** Owner and currency of an invoice, for the scope check and amount conversion before a write. */
export async function invoiceHead(id: number): Promise<{ resellerId: number; currency: string } | undefined> {
  const [row] = await namedRows<{ resellerId: number; currency: string }>(
    'billing_invoice_head',
    'select reseller_id as "resellerId", currency from invoices where id = $1',
    [id],
  );
  return row;
}

export async function subscriberHead(id: number): Promise<{ resellerId: number } | undefined> {
  const [row] = await namedRows<{ resellerId: number }>(
    'billing_subscriber_head',
    'select reseller_id as "resellerId" from subscribers where id = $1 and deleted_at is null',
    [id],
  );
  return row;
}

/** The payments of an invoice as API JSON (an array), oldest first. */
export async function paymentsJson(invoiceId: number): Promise<string> {
  const [row] = await namedRows<{ json: string }>(
    'billing_payments_json',
    `
    select coalesce(json_agg(${PAYMENT_JSON} order by p.id), '[]')::text as json
    from invoices i cross join ${CURRENCY_DIVISOR} join invoice_payments p on p.invoice_id = i.id
    where i.id = $1`,
    [invoiceId],
  );
  return row.json;
}

export interface CommissionRow {
  month: string;
  invoiced: number;
  commission: number;
}

export async function commissionRows(
  scope: Scope,
  f: { currency: string; resellerId?: number; from?: string; to?: string; statuses?: string[] },
): Promise<CommissionRow[]> {
  const conds: SQL[] = [sql`i.status <> 'void'`, sql`i.currency = ${f.currency}`];
  if (scope.kind !== 'all') conds.push(inScope(scope, sql`i.reseller_id`));
  if (f.resellerId) conds.push(sql`i.reseller_id = ${f.resellerId}`);
  if (f.from) conds.push(sql`i.issue_date >= ${f.from}`);
  if (f.to) conds.push(sql`i.issue_date <= ${f.to}`);
  if (f.statuses)
    conds.push(
      sql`i.status in (${sql.join(
        f.statuses.map((s) => sql`${s}`),
        sql`, `,
      )})`,
    );
  // Grouped by the month's first day and formatted once per month: to_char on every row was a
  // third of the statement on a 250,000-invoice tree. invoices_commission_idx covers the columns.
  return preparedRows<CommissionRow>(sql`
    select to_char(m.month, 'YYYY-MM') as month, m.invoiced, m.commission from (
      select date_trunc('month', i.issue_date) as month, sum(i.amount)::bigint as invoiced,
        sum(i.commission_amount)::bigint as commission
      from invoices i where ${sql.join(conds, sql` and `)}
      group by 1) m
    order by m.month`);
}
