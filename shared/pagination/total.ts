/**
 * `pagination.total` for lists too large to count on every page (subscribers, invoices): exact up
 * to EXACT_TOTAL_CAP matches, PostgreSQL's row estimate above it. The pieces are pure so each list
 * keeps its own statements (Drizzle builders or prepared SQL text) and shares the rule.
 */

/**
 * Counting every match costs a read of every match on every page (about 300 ms at a million rows),
 * so the exact count stops here; past it `total` is the planner's estimate.
 */
export const EXACT_TOTAL_CAP = 10_000;

/**
 * A short, non-empty (or first) page is the last one, so it settles the total without a count:
 * what makes a narrow search one query. Undefined when the page cannot tell.
 */
export function totalFromPage(offset: number, limit: number, rowsOnPage: number): number | undefined {
  return rowsOnPage < limit && (rowsOnPage > 0 || offset === 0) ? offset + rowsOnPage : undefined;
}

/** SQL wrapping a select of the matches: their count, stopping at EXACT_TOTAL_CAP + 1. */
export function cappedCountSql(matches: string): string {
  return `(select count(*) from (${matches} limit ${EXACT_TOTAL_CAP + 1}) capped)`;
}

/** The `Plan Rows` of `EXPLAIN (FORMAT JSON)` output (node-postgres hands the json column parsed). */
export function planRows(explain: unknown): number {
  const [plan] = explain as [{ Plan: { 'Plan Rows': number } }];
  return plan.Plan['Plan Rows'];
}

/**
 * The total from a capped count: exact up to the cap, otherwise `estimate()` (the planner's rows
 * for the same filter), never below the cap + 1 so it stays consistent with what was counted.
 */
export async function totalFromCappedCount(capped: number, estimate: () => Promise<number>): Promise<number> {
  if (capped <= EXACT_TOTAL_CAP) return capped;
  return Math.max(EXACT_TOTAL_CAP + 1, Math.round(await estimate()));
}
