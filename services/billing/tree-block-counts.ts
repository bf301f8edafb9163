/**
 * The per-block counts of reseller trees (migration 0041): triggers on invoice_tree append signed
 * deltas to invoice_tree_block_deltas without locking any row, and this folds them into
 * invoice_tree_blocks, so a tree's page sums about one row per block plus a second's writes. One
 * statement deletes the deltas it folds and adds their sums, so no block's count changes in any
 * snapshot, and folds from several processes at once are safe: a delta is deleted by one fold only,
 * whose sum commits with the deletion; the count rows are updated in (ancestor, block) order, after
 * every deletion of the statement, so two folds cannot wait on each other in a cycle.
 */
import { pgPool } from '../../shared/db/client';

const FOLD = `with gone as (delete from invoice_tree_block_deltas returning ancestor_id, block, n)
  insert into invoice_tree_blocks as b (ancestor_id, block, n)
  select ancestor_id, block, sum(n) from gone group by 1, 2 order by 1, 2
  on conflict (ancestor_id, block) do update set n = b.n + excluded.n`;

/** Folds every delta committed so far; the number of blocks it changed. */
export async function foldTreeBlockCounts(): Promise<number> {
  const res = await pgPool().query({ name: 'billing_fold_tree_blocks', text: FOLD });
  return res.rowCount ?? 0;
}
