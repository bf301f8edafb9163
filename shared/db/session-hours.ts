/**
 * session_hours (migration 0054, docs/reports.md "Sessions per hour"): accounting sessions counted per
 * reseller and hour, appended by triggers on radacct and subscribers in the writing transaction. The
 * fold replaces the rows of each (reseller, hour) that has new ones by one row, in one statement, as
 * subscriber_counts' does, and drops the hours no dashboard reads any more (older than two days; the
 * open count sits at '-infinity' and stays).
 */
import { pgPool } from './client';

const FOLD = `with touched as (
    select distinct reseller_id, hour from session_hours where not folded
  ), gone as (
    delete from session_hours s using touched t
     where s.reseller_id = t.reseller_id and s.hour = t.hour
    returning s.*
  ), stale as (
    delete from session_hours where hour > '-infinity' and hour < now() - interval '2 days'
  )
  insert into session_hours (reseller_id, hour, starts, stops, folded)
  select * from (
    select reseller_id, hour, sum(starts) as starts, sum(stops) as stops, true from gone group by 1, 2) f
  where (starts, stops) <> (0, 0) and (hour = '-infinity' or hour >= now() - interval '2 days')`;

/** Folds what is committed so far; the number of rows it wrote. */
export async function foldSessionHours(): Promise<number> {
  const res = await pgPool().query({ name: 'session_hours_fold', text: FOLD });
  return res.rowCount ?? 0;
}
