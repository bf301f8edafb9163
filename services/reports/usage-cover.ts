/**
 * Which rows of `usage_monthly` and `daily_usage` sum to a day range (docs/reports.md, "Usage
 * rollup"). A month wholly inside the range is its monthly row. A partial month is whichever reads
 * fewer days: its days inside the range, or its monthly row less its days outside (so the month so
 * far is the monthly row less the days after today, usually none). Pure: no clock, no I/O.
 */
import { addDays } from '../../shared/billing/dates';
import { monthStart, type DayRange } from './periods';

export interface UsageCover {
  /** Monthly rows added (first days of months). */
  months: string[];
  /** Daily rows added. */
  plus: DayRange[];
  /** Daily rows taken away (days of a month read whole that fall outside the range). */
  minus: DayRange[];
}

export function usageCover(range: DayRange): UsageCover {
  const cover: UsageCover = { months: [], plus: [], minus: [] };
  for (let m = monthStart(range.from); ; m = addDays(monthEnd(m), 1)) {
    const last = monthEnd(m);
    const from = range.from > m ? range.from : m;
    const to = range.to < last ? range.to : last;
    const inside = dayCount(from, to);
    const outside = dayCount(m, last) - inside;
    if (outside === 0 || outside < inside) {
      cover.months.push(m);
      if (from > m) cover.minus.push({ from: m, to: addDays(from, -1) });
      if (to < last) cover.minus.push({ from: addDays(to, 1), to: last });
    } else cover.plus.push({ from, to });
    // Stop on the range's last month, not on the next one's date (past year 9999 it is not ISO).
    if (last >= range.to) return cover;
  }
}

/** The last day of the month starting `m` (Date arithmetic: year 9999's December included). */
function monthEnd(m: string): string {
  const d = new Date(`${m}T00:00:00Z`);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).toISOString().slice(0, 10);
}

function dayCount(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
}
