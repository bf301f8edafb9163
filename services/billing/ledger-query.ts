/**
 * The statements of GET /api/transactions (docs/ledger-and-sessions.md). One filter gives three:
 * the page (ids in list order from transactions_created_idx, or the reseller, manager or subscriber
 * index, then those rows with their names), the totals (from ledger_rollup, migration 0052, unless
 * a subscriber is named: its own rows are few) and the CSV's COPY of every match.
 */
import type { Scope } from '../../shared/auth/policy';
import { scopePathPattern } from '../../shared/auth/policy';
import { rollupDays } from '../../shared/db/ledger-rollup';
import { csvTextSql } from '../../shared/http/csv';
import { EXPONENT_EXCEPTIONS } from '../../shared/money';

export interface LedgerFilter {
  type?: string;
  method?: string;
  subscriberId?: number;
  /** Already checked against the caller's scope by the use case. */
  resellerId?: number;
  managerId?: number;
  /** ISO dates, UTC days, both inclusive. */
  from?: string;
  to?: string;
}

/** Placeholders in the order their values are added. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * The conditions of a filter on the ledger or on ledger_rollup, aliased `t`. A tree scope is its
 * resellers by path.
 */
function conditions(scope: Scope, f: LedgerFilter, p: Params, on: 'ledger' | 'totals'): string[] {
  const conds: string[] = [];
  if (f.type !== undefined) conds.push(`t.type = ${p.add(f.type)}`);
  if (f.method !== undefined) conds.push(`t.method = ${p.add(f.method)}`);
  if (f.subscriberId !== undefined) conds.push(`t.subscriber_id = ${p.add(f.subscriberId)}`);
  if (f.managerId !== undefined)
    conds.push(`t.${on === 'ledger' ? 'created_by' : 'manager_id'} = ${p.add(f.managerId)}`);
  if (f.resellerId !== undefined) conds.push(`t.reseller_id = ${p.add(f.resellerId)}`);
  else if (scope.kind === 'tree')
    conds.push(`t.reseller_id in (select id from resellers where path like ${p.add(scopePathPattern(scope))})`);
  if (on === 'ledger') {
    if (f.from !== undefined) conds.push(`t.created_at >= (${p.add(f.from)}::date)::timestamp at time zone 'UTC'`);
    if (f.to !== undefined) conds.push(`t.created_at < (${p.add(f.to)}::date + 1)::timestamp at time zone 'UTC'`);
  } else conds.push(rollupDays('t', f.from, f.to, (v) => p.add(v)));
  return conds;
}

const where = (conds: string[]) => (conds.length ? `where ${conds.join(' and ')}` : '');

/**
 * The columns of a ledger row `t` with its reseller `r`, manager `m` and invoice `i`, as the API and
 * the CSV name them.
 */
const ROW_COLUMNS = `t.id, t.type, t.amount, t.currency, t.method, t.reference, t.notes, t.invoice_id,
  i.invoice_number, t.subscriber_id, t.username as subscriber_username, t.reseller_id, r.name as reseller_name,
  t.created_by as manager_id, m.username as manager_username, t.created_at`;

const PEOPLE = `left join resellers r on r.id = t.reseller_id left join managers m on m.id = t.created_by`;
const NAMES = `${PEOPLE} left join invoices i on i.id = t.invoice_id`;

export interface LedgerRow {
  id: string;
  type: string;
  amount: string;
  currency: string;
  method: string | null;
  reference: string | null;
  notes: string | null;
  invoice_id: number | null;
  invoice_number: string | null;
  subscriber_id: number | null;
  subscriber_username: string | null;
  reseller_id: number | null;
  reseller_name: string | null;
  manager_id: number | null;
  manager_username: string | null;
  created_at: Date;
}

export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * One page, newest first (or oldest with `asc`): the page's ids are found first, so a deep offset
 * skips index entries; names are joined to the page's rows only.
 */
export function pageStatement(
  scope: Scope,
  f: LedgerFilter,
  order: 'asc' | 'desc',
  limit: number,
  offset: number,
): Statement {
  const p = new Params();
  const conds = conditions(scope, f, p, 'ledger');
  const dir = order === 'asc' ? 'asc' : 'desc';
  const text = `select ${ROW_COLUMNS}
    from (select id from transactions t ${where(conds)} order by t.created_at ${dir}, t.id ${dir}
          limit ${p.add(limit)} offset ${p.add(offset)}) page
    join transactions t on t.id = page.id ${NAMES}
    order by t.created_at ${dir}, t.id ${dir}`;
  return { text, values: p.values };
}

export interface TotalsRow {
  currency: string;
  count: string;
  incoming: string;
  outgoing: string;
}

/** Count and sums per currency over every match: the ledger's own rows for a subscriber, ledger_rollup otherwise. */
export function totalsStatement(scope: Scope, f: LedgerFilter): Statement {
  const p = new Params();
  if (f.subscriberId !== undefined) {
    const conds = conditions(scope, f, p, 'ledger');
    return {
      text: `select t.currency, count(*) as count, coalesce(sum(t.amount) filter (where t.amount > 0), 0) as incoming,
          coalesce(sum(t.amount) filter (where t.amount < 0), 0) as outgoing
        from transactions t ${where(conds)} group by t.currency order by t.currency`,
      values: p.values,
    };
  }
  return {
    text: `select t.currency, sum(t.n) as count, sum(t.incoming) as incoming, sum(t.outgoing) as outgoing
      from ledger_rollup t ${where(conditions(scope, f, p, 'totals'))}
      group by t.currency having sum(t.n) <> 0 order by t.currency`,
    values: p.values,
  };
}

/** A ledger amount in minor units as the API's decimal (fromMinor): 1250 USD is 12.5, 500 JPY 500. */
const AMOUNT_DECIMAL = `trim_scale(case t.currency ${Object.entries(EXPONENT_EXCEPTIONS)
  .map(([code, exp]) => `when '${code}' then t.amount / ${10 ** exp}.0`)
  .join(' ')} else t.amount / 100.0 end)`;

/**
 * Every match in list order with its names, each cell as the CSV shows it: the JSON rows' fields,
 * `created_at` second for a spreadsheet's sake (docs/ledger-and-sessions.md), for the server to COPY
 * out (shared/http/csv.ts, copyCsv).
 */
export function exportStatement(scope: Scope, f: LedgerFilter, order: 'asc' | 'desc'): Statement {
  const p = new Params();
  const conds = conditions(scope, f, p, 'ledger');
  const dir = order === 'asc' ? 'asc' : 'desc';
  const text = (column: string, as: string) => `${csvTextSql(column)} as ${as}`;
  return {
    text: `select t.id, to_char(t.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
        ${text('t.type', 'type')}, ${AMOUNT_DECIMAL} as amount, ${text('t.currency', 'currency')},
        ${text('t.method', 'method')}, t.subscriber_id, ${text('t.username', 'subscriber_username')}, t.reseller_id,
        ${text('r.name', 'reseller_name')}, t.created_by as manager_id, ${text('m.username', 'manager_username')},
        t.invoice_id, ${text('i.invoice_number', 'invoice_number')}, ${text('t.reference', 'reference')},
        ${text('t.notes', 'notes')}
      from transactions t ${NAMES} ${where(conds)} order by t.created_at ${dir}, t.id ${dir}`,
    values: p.values,
  };
}
