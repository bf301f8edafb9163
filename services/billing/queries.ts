/** The billing unit's reads: each is one prepared statement (no N+1, items and payments aggregated in SQL). */
import { sql, type SQL } from 'drizzle-orm';
import { inScope, type Scope } from '../../shared/auth/policy';
import type { InvoiceItemRow, InvoicePaymentRow, InvoiceRow } from '../../shared/billing';
import { INVOICE_COLUMNS } from '../../shared/billing/pg';
import { namedRows, preparedRows } from './sql';

const COLUMNS = sql.raw(INVOICE_COLUMNS);

type JsonPayment = Omit<InvoicePaymentRow, 'paidAt' | 'createdAt'> & { paidAt: string; createdAt: string };

export interface InvoiceDetail {
  invoice: InvoiceRow;
  items: Pick<InvoiceItemRow, 'description' | 'qty' | 'unitPrice' | 'amount'>[];
  payments: InvoicePaymentRow[];
}

const INVOICE_DETAIL = `select ${INVOICE_COLUMNS},
    coalesce((select json_agg(json_build_object('description', t.description, 'qty', t.qty::text,
        'unitPrice', t.unit_price, 'amount', t.amount) order by t.position)
      from invoice_items t where t.invoice_id = i.id), '[]') as items,
    coalesce((select json_agg(json_build_object('id', p.id, 'invoiceId', p.invoice_id, 'transactionId', p.transaction_id,
        'amount', p.amount, 'method', p.method, 'reference', p.reference, 'paidAt', p.paid_at, 'notes', p.notes,
        'createdBy', p.created_by, 'createdAt', p.created_at) order by p.id)
      from invoice_payments p where p.invoice_id = i.id), '[]') as payments
  from invoices i where i.id = $1`;

export async function invoiceDetail(id: number): Promise<InvoiceDetail | undefined> {
  const [row] = await namedRows<InvoiceRow & { items: InvoiceDetail['items']; payments: JsonPayment[] }>('billing_invoice_detail', INVOICE_DETAIL, [id]);
  if (!row) return undefined;
  const { items, payments, ...invoice } = row;
  return {
    invoice,
    items,
    payments: payments.map((p) => ({ ...p, paidAt: new Date(p.paidAt), createdAt: new Date(p.createdAt) })),
  };
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

export async function paymentsOf(invoiceId: number): Promise<InvoicePaymentRow[]> {
  return namedRows<InvoicePaymentRow>('billing_payments_of', `
    select id, invoice_id as "invoiceId", transaction_id as "transactionId", amount, method, reference,
      paid_at as "paidAt", notes, created_by as "createdBy", created_at as "createdAt"
    from invoice_payments where invoice_id = $1 order by id`, [invoiceId]);
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

function listWhere(scope: Scope, f: ListFilter): SQL {
  const conds: SQL[] = [];
  if (scope.kind !== 'all') conds.push(inScope(scope, sql`i.reseller_id`));
  if (f.status) conds.push(sql`i.status = ${f.status}`);
  if (f.subscriberId) conds.push(sql`i.subscriber_id = ${f.subscriberId}`);
  if (f.resellerId) conds.push(sql`i.reseller_id = ${f.resellerId}`);
  if (f.from) conds.push(sql`i.issue_date >= ${f.from}`);
  if (f.to) conds.push(sql`i.issue_date <= ${f.to}`);
  if (f.search) {
    const p = likePattern(f.search);
    conds.push(sql`(i.invoice_number ilike ${p} or i.subscriber_id in
      (select s.id from subscribers s where s.username ilike ${p} or s.full_name ilike ${p}))`);
  }
  return conds.length ? sql`where ${sql.join(conds, sql` and `)}` : sql``;
}

/** One page and the exact total, run side by side on two pooled connections. */
export async function listInvoices(scope: Scope, f: ListFilter): Promise<{ rows: InvoiceRow[]; total: number }> {
  const where = listWhere(scope, f);
  // Newest first = highest id: ids are handed out in creation order and every list index ends in id.
  const order = f.order === 'asc' ? sql.raw('i.id asc') : sql.raw('i.id desc');
  const [rows, [{ total }]] = await Promise.all([
    preparedRows<InvoiceRow>(sql`select ${COLUMNS} from invoices i ${where} order by ${order} limit ${f.limit} offset ${f.offset}`),
    preparedRows<{ total: number }>(sql`select count(*)::int as total from invoices i ${where}`),
  ]);
  return { rows, total };
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
