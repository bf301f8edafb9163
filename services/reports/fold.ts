/**
 * Folds ledger_daily (migration 0047): the triggers on `transactions` append one signed row per key
 * and statement; this replaces the rows of each (day, reseller) that has new ones by one row per key.
 * One statement deletes and re-inserts, so every snapshot sees the same sums before and after; folds
 * from several processes at once are safe, since a row is deleted by one fold only and its sum
 * commits with that deletion.
 */
import { pgPool } from '../../shared/db/client';

const FOLD = `with touched as (
    select distinct day, coalesce(reseller_id, 0) as reseller from ledger_daily where not folded
  ), gone as (
    delete from ledger_daily l using touched t
     where l.day = t.day and coalesce(l.reseller_id, 0) = t.reseller
    returning l.day, l.reseller_id, l.manager_id, l.currency, l.type, l.method, l.amount, l.n
  )
  insert into ledger_daily (day, reseller_id, manager_id, currency, type, method, amount, n, folded)
  select day, reseller_id, manager_id, currency, type, method, sum(amount), sum(n), true
    from gone group by 1, 2, 3, 4, 5, 6
  having sum(n) <> 0 or sum(amount) <> 0`;

/** Folds what is committed so far; the number of rows it wrote. */
export async function foldLedgerDaily(): Promise<number> {
  const res = await pgPool().query({ name: 'reports_fold_ledger_daily', text: FOLD });
  return res.rowCount ?? 0;
}
