/**
 * ledger_rollup (migration 0052, docs/reports.md "Rollup"): the ledger summed per key at two grains,
 * the UTC day ('d') and the month ('m', dated its first day). Triggers on `transactions` append signed
 * rows in the writing transaction; `foldLedgerRollup` compacts them; `rollupDays` picks the rows of a
 * day range, whole months at the month grain and the partial ones day by day.
 */
import { pgPool } from './client';

/**
 * Replaces the rows of each (grain, day, reseller) that has new ones by one row per key, in one
 * statement, so every snapshot sees the same sums before and after. Folds from several processes at
 * once are safe: a row is deleted by one fold only and its sum commits with that deletion.
 */
const FOLD = `with touched as (
    select distinct grain, day, coalesce(reseller_id, 0) as reseller from ledger_rollup where not folded
  ), gone as (
    delete from ledger_rollup l using touched t
     where l.grain = t.grain and l.day = t.day and coalesce(l.reseller_id, 0) = t.reseller
    returning l.*
  )
  insert into ledger_rollup (grain, day, currency, type, method, service_id, reseller_id, manager_id, n, incoming, outgoing, folded)
  select grain, day, currency, type, method, service_id, reseller_id, manager_id, sum(n), sum(incoming), sum(outgoing), true
    from gone group by 1, 2, 3, 4, 5, 6, 7, 8
  having sum(n) <> 0 or sum(incoming) <> 0 or sum(outgoing) <> 0`;

/** Folds what is committed so far; the number of rows it wrote. */
export async function foldLedgerRollup(): Promise<number> {
  const res = await pgPool().query({ name: 'ledger_rollup_fold', text: FOLD });
  return res.rowCount ?? 0;
}

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const ms = (day: string) => Date.parse(`${day}T00:00:00Z`);
const monthStart = (day: string) => `${day.slice(0, 7)}-01`;
function nextMonth(day: string): string {
  const d = new Date(ms(monthStart(day)));
  return iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

/**
 * The condition on rollup rows `alias` that together cover the UTC days `from`..`to` (both inclusive;
 * either open): the months wholly inside at the month grain, the days of the partial months at the
 * day grain. `add` turns a value into a placeholder.
 */
export function rollupDays(
  alias: string,
  from: string | undefined,
  to: string | undefined,
  add: (value: unknown) => string,
): string {
  // Whole months: [first, end) as month starts; undefined is open.
  const first = from === undefined ? undefined : from === monthStart(from) ? from : nextMonth(from);
  const lastOfMonth = to !== undefined && iso(ms(to) + DAY_MS) === nextMonth(to);
  // Through 9999-12-31 is open above: the next month is past the calendar's dates (not ISO, a 500 before).
  const end =
    to === undefined || (lastOfMonth && to >= '9999-12') ? undefined : lastOfMonth ? nextMonth(to) : monthStart(to);
  const days = (lo: string | undefined, hi: string | undefined) =>
    [`${alias}.grain = 'd'`, lo && `${alias}.day >= ${add(lo)}::date`, hi && `${alias}.day <= ${add(hi)}::date`]
      .filter(Boolean)
      .join(' and ');
  // From a day of 9999-12 on there is no whole month: its next one is past the calendar's dates.
  if (first !== undefined && first.startsWith('+')) return `(${days(from, to)})`;
  if (first !== undefined && end !== undefined && first >= end) return `(${days(from, to)})`;
  const parts = [
    [`${alias}.grain = 'm'`, first && `${alias}.day >= ${add(first)}::date`, end && `${alias}.day < ${add(end)}::date`]
      .filter(Boolean)
      .join(' and '),
  ];
  if (from !== undefined && from !== first) parts.push(days(from, iso(ms(first!) - DAY_MS)));
  if (to !== undefined && end !== undefined && iso(ms(to) + DAY_MS) !== end) parts.push(days(end, to));
  return `((${parts.join(') or (')}))`;
}
