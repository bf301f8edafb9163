"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.FOLD_INTERVAL_MS = void 0;
exports.foldStatusCounts = foldStatusCounts;
/**
 * Exact totals of the status lists (migration 0012): writes append (reseller, status, ±n) deltas to
 * invoice_status_counts without locking any row, and this folds each key's deltas into one row, so
 * a status total stays a sum over about one row per reseller. Folding changes no sum, so it is
 * safe from every billing process at once: a delta is deleted by exactly one fold, and that fold's
 * sum is inserted in the same statement. Deltas a write commits meanwhile wait for the next fold.
 */
const client_1 = require("../../shared/db/client");
/** Keys with more than one row only: an idle table is read, not rewritten. */
const FOLD = `with many as (select reseller_id, status from invoice_status_counts group by 1, 2 having count(*) > 1),
    gone as (delete from invoice_status_counts c using many m where c.reseller_id = m.reseller_id and c.status = m.status
      returning c.reseller_id, c.status, c.n)
  insert into invoice_status_counts (reseller_id, status, n)
  select reseller_id, status, sum(n) from gone group by 1, 2 having sum(n) <> 0`;
async function foldStatusCounts() {
    const res = await (0, client_1.pgPool)().query({ name: 'billing_fold_status_counts', text: FOLD });
    return res.rowCount ?? 0;
}
/** How often each billing process folds: deltas a list sums stay about one second's writes. */
exports.FOLD_INTERVAL_MS = 1_000;
//# sourceMappingURL=invoice-status-counts.js.map