/**
 * subscriber_counts (migration 0050, docs/reports.md "Subscriber counts"): live subscribers counted
 * per reseller and expiry day ('x') and per reseller and month of creation ('c'), appended by
 * triggers on `subscribers` in the writing transaction. The fold replaces the rows of each (kind,
 * reseller, day) that has new ones by one row, in one statement, as ledger_rollup's does.
 */
import { pgPool } from './client';

const FOLD = `with touched as (
    select distinct kind, reseller_id, day from subscriber_counts where not folded
  ), gone as (
    delete from subscriber_counts s using touched t
     where s.reseller_id = t.reseller_id and s.kind = t.kind and s.day = t.day
    returning s.*
  )
  insert into subscriber_counts (kind, reseller_id, day, n, active, inactive, blocked, online, wallets, folded)
  select * from (
    select kind, reseller_id, day, sum(n) as n, sum(active) as active, sum(inactive) as inactive, sum(blocked) as blocked,
           sum(online) as online, sum(wallets) as wallets, true
      from gone group by 1, 2, 3) f
  where (n, active, inactive, blocked, online, wallets) <> (0, 0, 0, 0, 0, 0)`;

/** Folds what is committed so far; the number of rows it wrote. */
export async function foldSubscriberCounts(): Promise<number> {
  const res = await pgPool().query({ name: 'subscriber_counts_fold', text: FOLD });
  return res.rowCount ?? 0;
}
