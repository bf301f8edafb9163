/**
 * The statements of GET /api/transactions (docs/ledger-and-sessions.md). One filter gives three:
 * the page (ids in list order from transactions_created_idx, or the reseller, manager or subscriber
 * index, then those rows with their names), the totals (from ledger_totals and its pending deltas,
 * migration 0048, unless a subscriber is named: its own rows are few) and the CSV's cursor over
 * every match.
 */
import type { Scope } from '../../shared/auth/policy';
import { scopePathPattern } from '../../shared/auth/policy';

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
 * The conditions of a filter on a table aliased `t` whose day is `dayOf` of its own columns: the
 * ledger (a timestamp) or ledger_totals (a UTC date). A tree scope is its resellers by path.
 */
function conditions(scope: Scope, f: LedgerFilter, p: Params, on: 'ledger' | 'totals'): string[] {
  const conds: string[] = [];
  if (f.type !== undefined) conds.push(`t.type = ${p.add(f.type)}`);
  if (f.method !== undefined) conds.push(`t.method = ${p.add(f.method)}`);
  if (f.subscriberId !== undefined) conds.push(`t.subscriber_id = ${p.add(f.subscriberId)}`);
  if (f.managerId !== undefined) conds.push(`t.created_by = ${p.add(f.managerId)}`);
  if (f.resellerId !== undefined) conds.push(`t.reseller_id = ${p.add(f.resellerId)}`);
  else if (scope.kind === 'tree')
    conds.push(`t.reseller_id in (select id from resellers where path like ${p.add(scopePathPattern(scope))})`);
  if (on === 'ledger') {
    if (f.from !== undefined) conds.push(`t.created_at >= (${p.add(f.from)}::date)::timestamp at time zone 'UTC'`);
    if (f.to !== undefined) conds.push(`t.created_at < (${p.add(f.to)}::date + 1)::timestamp at time zone 'UTC'`);
  } else {
    if (f.from !== undefined) conds.push(`t.day >= ${p.add(f.from)}::date`);
    if (f.to !== undefined) conds.push(`t.day <= ${p.add(f.to)}::date`);
  }
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
/** The CSV has no invoice_number column: its cursor is spared the invoice join. */
const EXPORT_COLUMNS = ROW_COLUMNS.replace('i.invoice_number', 'null::text as invoice_number');

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

/** Count and sums per currency over every match: the ledger's own rows for a subscriber, ledger_totals otherwise. */
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
  const conds = where(conditions(scope, f, p, 'totals'));
  // The same placeholders serve both tables: the values are added once.
  return {
    text: `select t.currency, sum(t.n) as count, sum(t.incoming) as incoming, sum(t.outgoing) as outgoing
      from (select * from ledger_totals t ${conds} union all select * from ledger_total_deltas t ${conds}) t
      group by t.currency having sum(t.n) <> 0 order by t.currency`,
    values: p.values,
  };
}

/** Every match in list order with its names, for the CSV's cursor. */
export function exportStatement(scope: Scope, f: LedgerFilter, order: 'asc' | 'desc'): Statement {
  const p = new Params();
  const conds = conditions(scope, f, p, 'ledger');
  const dir = order === 'asc' ? 'asc' : 'desc';
  return {
    text: `select ${EXPORT_COLUMNS} from transactions t ${PEOPLE} ${where(conds)} order by t.created_at ${dir}, t.id ${dir}`,
    values: p.values,
  };
}

/**
 * Moves the deltas the triggers appended into ledger_totals, one row per key: every delta is
 * deleted by exactly one move and its sum added in the same statement, so moves from several
 * billing processes at once change no sum. Deltas committed meanwhile wait for the next move.
 */
export const FOLD_LEDGER_TOTALS = `with moved as (delete from ledger_total_deltas returning *)
  insert into ledger_totals as l (day, reseller_id, type, method, created_by, currency, n, incoming, outgoing)
  select day, reseller_id, type, method, created_by, currency, sum(n), sum(incoming), sum(outgoing)
  from moved group by 1, 2, 3, 4, 5, 6
  on conflict on constraint ledger_totals_key do update
    set n = l.n + excluded.n, incoming = l.incoming + excluded.incoming, outgoing = l.outgoing + excluded.outgoing`;
