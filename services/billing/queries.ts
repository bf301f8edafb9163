/**
 * The billing unit's reads: each is one prepared statement (no N+1), and the invoice reads come
 * back as the API's JSON text built by PostgreSQL (invoice-json.ts), ready for the envelope.
 */
import { fillPlaceholders, sql, type SQL } from 'drizzle-orm';
import type { PoolClient } from 'pg';
import { inScope, scopePathPattern, type Scope } from '../../shared/auth/policy';
import { pgPool } from '../../shared/db/client';
import { publicUrl } from '../../shared/public-links';
import { CURRENCY_DIVISOR, INVOICE_DETAIL_JSON, INVOICE_LIST_JSON, PAYMENT_JSON } from './invoice-json';
import { dialect, namedRows, preparedRows } from './sql';

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
  const { rows: [row] } = await (client ?? pgPool()).query<{ resellerId: number; nonce: string | null; json: string }>(query);
  if (!row) return undefined;
  // The link is an HMAC under a key the database never sees: appended here as the last key.
  const url = row.nonce ? publicUrl(id, row.nonce) : null;
  return { resellerId: row.resellerId, json: `${row.json.slice(0, -1)},"public_url":${JSON.stringify(url)}}` };
}

/** Owner and currency of an invoice, for the scope check and amount conversion before a write. */
export async function invoiceHead(id: number): Promise<{ resellerId: number; currency: string } | undefined> {
  const [row] = await namedRows<{ resellerId: number; currency: string }>(
    'billing_invoice_head', 'select reseller_id as "resellerId", currency from invoices where id = $1', [id],
  );
  return row;
}

export async function subscriberHead(id: number): Promise<{ resellerId: number } | undefined> {
  const [row] = await namedRows<{ resellerId: number }>(
    'billing_subscriber_head', 'select reseller_id as "resellerId" from subscribers where id = $1 and deleted_at is null', [id],
  );
  return row;
}

/** The payments of an invoice as API JSON (an array), oldest first. */
export async function paymentsJson(invoiceId: number): Promise<string> {
  const [row] = await namedRows<{ json: string }>('billing_payments_json', `
    select coalesce(json_agg(${PAYMENT_JSON} order by p.id), '[]')::text as json
    from invoices i cross join ${CURRENCY_DIVISOR} join invoice_payments p on p.invoice_id = i.id
    where i.id = $1`, [invoiceId]);
  return row.json;
}

export interface ListFilter {
  status?: string;
  subscriberId?: number;
  resellerId?: number;
  from?: string;
  to?: string;
  search?: string;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, '\\$&')}%`;

interface ListStatement {
  name: string;
  text: string;
  params: unknown[];
}

/**
 * The list statement for one shape of filter (which filters are present, scope kind, order), with
 * placeholders for the values. Building it through Drizzle and naming it cost about 45 µs, a tenth
 * of a list request, so each shape is built once per process.
 */
const listStatements = new Map<string, ListStatement>();

function listStatement(scope: Scope, f: ListFilter): ListStatement {
  const key = [scope.kind !== 'all', f.status, f.subscriberId, f.resellerId, f.from, f.to, f.search].map((v) => (v ? 1 : 0)).join('') + f.order;
  let statement = listStatements.get(key);
  if (statement) return statement;
  const p = (name: string) => sql.placeholder(name);
  const conds: SQL[] = [];
  if (scope.kind !== 'all') conds.push(inScope(scope, sql`i.reseller_id`, p('scopePattern')));
  if (f.status) conds.push(sql`i.status = ${p('status')}`);
  if (f.subscriberId) conds.push(sql`i.subscriber_id = ${p('subscriberId')}`);
  if (f.resellerId) conds.push(sql`i.reseller_id = ${p('resellerId')}`);
  if (f.from) conds.push(sql`i.issue_date >= ${p('from')}`);
  if (f.to) conds.push(sql`i.issue_date <= ${p('to')}`);
  if (f.search) {
    conds.push(sql`(i.invoice_number ilike ${p('search')} or i.subscriber_id in
      (select s.id from subscribers s where s.username ilike ${p('search')} or s.full_name ilike ${p('search')}))`);
  }
  const where = conds.length ? sql`where ${sql.join(conds, sql` and `)}` : sql``;
  // Newest first = highest id: ids are handed out in creation order and every list index ends in id.
  const order = sql.raw(f.order === 'asc' ? 'i.id asc' : 'i.id desc');
  const { sql: text, params } = dialect.sqlToQuery(sql`
    select (select count(*) from invoices i ${where})::int as total,
      (select coalesce(json_agg(${sql.raw(INVOICE_LIST_JSON)} order by ${order}), '[]')::text
       from (select i.* from invoices i ${where} order by ${order} limit ${p('limit')} offset ${p('offset')}) i
       cross join ${sql.raw(CURRENCY_DIVISOR)}) as json`);
  statement = { name: `billing_list_${listStatements.size}`, text, params };
  listStatements.set(key, statement);
  return statement;
}

/** One page as an API JSON array and the exact total, in one statement (one round trip). */
export async function listInvoicesJson(scope: Scope, f: ListFilter): Promise<{ json: string; total: number }> {
  const { name, text, params } = listStatement(scope, f);
  const values = fillPlaceholders(params, {
    scopePattern: scopePathPattern(scope), status: f.status, subscriberId: f.subscriberId, resellerId: f.resellerId,
    from: f.from, to: f.to, search: f.search === undefined ? undefined : likePattern(f.search), limit: f.limit, offset: f.offset,
  });
  const { rows: [row] } = await pgPool().query<{ json: string; total: number }>({ name, text, values });
  return row;
}

export interface CommissionRow {
  month: string;
  invoiced: number;
  commission: number;
}

export async function commissionRows(
  scope: Scope,
  f: { resellerId?: number; from?: string; to?: string; statuses?: string[] },
): Promise<CommissionRow[]> {
  const conds: SQL[] = [sql`i.status <> 'void'`];
  if (scope.kind !== 'all') conds.push(inScope(scope, sql`i.reseller_id`));
  if (f.resellerId) conds.push(sql`i.reseller_id = ${f.resellerId}`);
  if (f.from) conds.push(sql`i.issue_date >= ${f.from}`);
  if (f.to) conds.push(sql`i.issue_date <= ${f.to}`);
  if (f.statuses) conds.push(sql`i.status in (${sql.join(f.statuses.map((s) => sql`${s}`), sql`, `)})`);
  return preparedRows<CommissionRow>(sql`
    select to_char(i.issue_date, 'YYYY-MM') as month, sum(i.amount)::bigint as invoiced,
      sum(i.commission_amount)::bigint as commission
    from invoices i where ${sql.join(conds, sql` and `)}
    group by 1 order by 1`);
}
