"use strict";
/**
 * `pagination.total` for lists too large to count on every page (subscribers, invoices): exact up
 * to EXACT_TOTAL_CAP matches, PostgreSQL's row estimate above it. The pieces are pure so each list
 * keeps its own statements (Drizzle builders or prepared SQL text) and shares the rule.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.EXACT_TOTAL_CAP = void 0;
exports.totalFromPage = totalFromPage;
exports.cappedCountSql = cappedCountSql;
exports.planRows = planRows;
exports.totalFromCappedCount = totalFromCappedCount;
/**
 * Counting every match costs a read of every match on every page (about 300 ms at a million rows),
 * so the exact count stops here; past it `total` is the planner's estimate.
 */
exports.EXACT_TOTAL_CAP = 10_000;
/**
 * A short, non-empty (or first) page is the last one, so it settles the total without a count:
 * what makes a narrow search one query. Undefined when the page cannot tell.
 */
function totalFromPage(offset, limit, rowsOnPage) {
    return rowsOnPage < limit && (rowsOnPage > 0 || offset === 0) ? offset + rowsOnPage : undefined;
}
/** SQL wrapping a select of the matches: their count, stopping at EXACT_TOTAL_CAP + 1. */
function cappedCountSql(matches) {
    return `(select count(*) from (${matches} limit ${exports.EXACT_TOTAL_CAP + 1}) capped)`;
}
/** The `Plan Rows` of `EXPLAIN (FORMAT JSON)` output (node-postgres hands the json column parsed). */
function planRows(explain) {
    const [plan] = explain;
    return plan.Plan['Plan Rows'];
}
/**
 * The total from a capped count: exact up to the cap, otherwise `estimate()` (the planner's rows
 * for the same filter), never below the cap + 1 so it stays consistent with what was counted.
 */
async function totalFromCappedCount(capped, estimate) {
    if (capped <= exports.EXACT_TOTAL_CAP)
        return capped;
    return Math.max(exports.EXACT_TOTAL_CAP + 1, Math.round(await estimate()));
}
//# sourceMappingURL=total.js.map