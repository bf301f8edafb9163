/**
 * ledger_rollup rebuilt in one pass from a ledger seeded with its triggers off (bench:reports,
 * bench:ledger): every key at both grains, folded, as the triggers and the fold would leave it.
 */
export const ROLLUP_OF_LEDGER = `insert into ledger_rollup (grain, day, currency, type, method, service_id, reseller_id,
                                  manager_id, n, incoming, outgoing, folded)
  select g.grain, case g.grain when 'd' then d.day else date_trunc('month', d.day)::date end, currency, type, method,
         service_id, reseller_id, created_by, count(*), coalesce(sum(amount) filter (where amount > 0), 0),
         coalesce(sum(amount) filter (where amount < 0), 0), true
    from (select (created_at at time zone 'UTC')::date as day, * from transactions) d
   cross join (values ('d'), ('m')) g(grain)
   group by 1, 2, 3, 4, 5, 6, 7, 8`;
