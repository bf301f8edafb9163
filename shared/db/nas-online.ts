/**
 * nas_online (migration 0056, docs/reports.md "Online per access server"): live online subscribers
 * counted per reseller and last access server, appended by triggers on `subscribers` in the writing
 * transaction. The fold replaces the rows of each (reseller, server) that has new ones by one row, in
 * one statement, as subscriber_counts' does.
 */
import { pgPool } from './client';

const FOLD = `with touched as (
    select distinct reseller_id, nas_id from nas_online where not folded
  ), gone as (
    delete from nas_online o using touched t
     where o.reseller_id = t.reseller_id and o.nas_id = t.nas_id
    returning o.*
  )
  insert into nas_online (reseller_id, nas_id, n, folded)
  select * from (select reseller_id, nas_id, sum(n) as n, true from gone group by 1, 2) f where n <> 0`;

/** Folds what is committed so far; the number of rows it wrote. */
export async function foldNasOnline(): Promise<number> {
  const res = await pgPool().query({ name: 'nas_online_fold', text: FOLD });
  return res.rowCount ?? 0;
}
