/**
 * GET /api/transactions: the ledger (spec 2.3's general transactions record), a page with the
 * filter's totals per currency, or every match as CSV. Scope as the invoice list's: an admin sees
 * every row (or one reseller's with `reseller_id`), a reseller its tree's; a `reseller_id` outside
 * the caller's tree is 403. Rows without a reseller (the operator's own) are the admin's.
 */
import type { Readable } from 'node:stream';
import type { Auth } from '../../../shared/auth/claims';
import { requireAuth, resellerInScope, scopeFor } from '../../../shared/auth/policy';
import { db, readPool } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import { copyCsv } from '../../../shared/http/csv';
import { pageOf } from '../../../shared/http/context';
import type { ActionResult } from '../../../shared/http/route';
import { fromMinor } from '../../../shared/money';
import {
  exportStatement,
  pageStatement,
  totalsStatement,
  type LedgerFilter,
  type LedgerRow,
  type TotalsRow,
} from '../ledger-query';
import type { LedgerInput } from '../ledger-schemas';

const amountOf = (row: { amount: string; currency: string }) => fromMinor(Number(row.amount), row.currency);

function rowJson(r: LedgerRow) {
  return {
    id: Number(r.id),
    type: r.type,
    amount: amountOf(r),
    currency: r.currency,
    method: r.method,
    reference: r.reference,
    notes: r.notes,
    invoice_id: r.invoice_id,
    invoice_number: r.invoice_number,
    subscriber_id: r.subscriber_id,
    subscriber_username: r.subscriber_username,
    reseller_id: r.reseller_id,
    reseller_name: r.reseller_name,
    manager_id: r.manager_id,
    manager_username: r.manager_username,
    created_at: r.created_at.toISOString(),
  };
}

function totalsJson(rows: TotalsRow[]) {
  return rows.map((t) => {
    const incoming = Number(t.incoming);
    const outgoing = Number(t.outgoing);
    return {
      currency: t.currency,
      count: Number(t.count),
      incoming: fromMinor(incoming, t.currency),
      outgoing: fromMinor(outgoing, t.currency),
      net: fromMinor(incoming + outgoing, t.currency),
    };
  });
}

async function ledgerScope(caller: Auth | undefined, p: LedgerInput) {
  const auth = requireAuth(caller);
  const scope = await scopeFor(db(), auth, 'read');
  if (p.reseller_id !== undefined && !(await resellerInScope(db(), scope, p.reseller_id))) throw fail('notAuthorized');
  const filter: LedgerFilter = {
    type: p.type,
    method: p.method,
    subscriberId: p.subscriber_id,
    resellerId: p.reseller_id,
    managerId: p.manager_id,
    from: p.from,
    to: p.to,
  };
  if (filter.from && filter.to && filter.from > filter.to) throw fail('invalidRequest', 'from is after to');
  return { scope, filter, order: p.order ?? 'desc' };
}

export async function listTransactions(caller: Auth | undefined, p: LedgerInput): Promise<ActionResult> {
  const { scope, filter, order } = await ledgerScope(caller, p);
  const { page, limit, offset } = pageOf(p);
  const rows = pageStatement(scope, filter, order, limit, offset);
  const totals = totalsStatement(scope, filter);
  const [pageRows, totalRows] = await Promise.all([
    // A long list that tolerates a second of replica lag (DATABASE_READ_URL).
    readPool().query<LedgerRow>(rows.text, rows.values),
    readPool().query<TotalsRow>(totals.text, totals.values),
  ]);
  const sums = totalsJson(totalRows.rows);
  return {
    data: pageRows.rows.map(rowJson),
    totals: sums,
    pagination: { page, limit, total: sums.reduce((n, t) => n + t.count, 0) },
  };
}

/** Every match as CSV, written by the server (COPY) and piped on with back-pressure. */
export async function exportTransactions(caller: Auth | undefined, p: LedgerInput): Promise<Readable> {
  const { scope, filter, order } = await ledgerScope(caller, p);
  const statement = exportStatement(scope, filter, order);
  return copyCsv(statement.text, statement.values);
}
