/**
 * Calendar arithmetic of the reports on ISO `YYYY-MM-DD` strings, in UTC like the books
 * (shared/billing/dates.ts). Pure functions: no clock is read here.
 */
import { addDays } from '../../shared/billing/dates';

export const monthStart = (day: string): string => `${day.slice(0, 7)}-01`;

/** The first day of the month `k` months after the month of `day` (k may be negative). */
export function addMonths(day: string, k: number): string {
  const y = Number(day.slice(0, 4));
  const m = Number(day.slice(5, 7)) - 1 + k;
  const year = y + Math.floor(m / 12);
  const month = ((m % 12) + 12) % 12;
  return `${String(year).padStart(4, '0')}-${String(month + 1).padStart(2, '0')}-01`;
}

export interface DayRange {
  from: string;
  to: string;
}

/** The dashboard's periods: this month so far and the whole of last month. */
export function dashboardPeriods(today: string): { monthFrom: string; lastMonthFrom: string; lastMonthTo: string } {
  const monthFrom = monthStart(today);
  return { monthFrom, lastMonthFrom: addMonths(today, -1), lastMonthTo: addDays(monthFrom, -1) };
}

/**
 * A report's range from its `from`/`to` (inclusive days): missing ends default to `fallback`'s,
 * and `from` after `to` is refused by the caller with the message this returns.
 */
export function rangeOf(p: { from?: string; to?: string }, fallback: DayRange): DayRange | string {
  const from = p.from ?? fallback.from;
  const to = p.to ?? fallback.to;
  return from > to ? 'from must not be after to' : { from, to };
}

/** Rows of a grouped report are keyed by the first day of their period. */
export type Grouping = 'day' | 'week' | 'month';
