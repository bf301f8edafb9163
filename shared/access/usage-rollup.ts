/**
 * The usage rollup: applies to `subscribers` (counters; is_online, ip_address, last_nas_id),
 * `daily_usage` and `fup_queue`, set-based, what accounting heard since the last rollup: how far
 * each session's totals moved past `usage_seen` (what it counted last; migrations 0037 and 0038:
 * neither an Interim-Update nor a Stop fires a trigger), sessions that closed, and the rows the
 * radacct update trigger appended to `usage_deltas` for an open session that moved (migration
 * 0032), deleting what it applied. The counters and the online state follow within
 * USAGE_ROLLUP_SECONDS instead of at once (an interim every few minutes is older than that).
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';

/** Deltas applied per statement: a backlog (the service was down) goes in bounded transactions. */
const BATCH = 50_000;

export interface RollupResult {
  /** Delta rows applied (deleted): moved sessions. */
  deltas: number;
  /** Sessions whose totals grew (Interim-Updates) or that ended (Stops) since the last rollup. */
  sessions: number;
  /** Subscribers whose counters or session state were written. */
  subscribers: number;
}

/**
 * One batch in one statement, after a transaction-level advisory lock taken by the statement before
 * it: rollups run one at a time (two at once could update the same subscribers in another order and
 * deadlock), and the batch's snapshot is taken once the lock is held, so it sees everything a
 * rollup it waited for wrote; when rollupUsage returns, everything committed before the call has
 * been applied, by it or by the one it waited for.
 * Sessions: usage_seen is compared with radacct by primary key (`v`, the row as the snapshot saw
 * it, beside `s`, the row written, so the increase is counted from the old totals); a session still
 * open and grown has its new totals stored (`grown`), one closed or deleted has its row deleted
 * (`ended`) and, closed, its last octets counted and its subscriber's session state recomputed.
 * `s.input = v.input` rechecks a row the moved-session trigger replaced meanwhile (its delete waits
 * for this statement's row lock). Plain tables, not a CTE, on both sides of each join: a CTE's
 * row estimate made PostgreSQL 15 loop over it for every usage_seen row (13 s a rollup at 100,000).
 * Counters follow the trigger's former rule per subscriber: the deltas of the latest day add to the
 * daily counter when `usage_day` is that day and replace it otherwise; the month's likewise. The
 * session state is read from the open sessions in radacct, as subscriber_session_refresh does.
 */
const rollupBatch = (limit: number) => sql`
  with d as (
    delete from usage_deltas
     where ctid = any(array(select ctid from usage_deltas limit ${limit}))
    returning username, day, upload, download, refresh, nas),
  grown as (
    update usage_seen s
       set input = coalesce(r.acctinputoctets, 0), output = coalesce(r.acctoutputoctets, 0)
      from usage_seen v, radacct r
     where v.radacctid = s.radacctid and r.radacctid = s.radacctid and r.acctstoptime is null
       and (coalesce(r.acctinputoctets, 0), coalesce(r.acctoutputoctets, 0)) is distinct from (s.input, s.output)
       and s.input = v.input and s.output = v.output
    returning r.username, greatest(coalesce(r.acctinputoctets, 0) - v.input, 0) as upload,
              greatest(coalesce(r.acctoutputoctets, 0) - v.output, 0) as download),
  ended as (
    delete from usage_seen s
     using usage_seen v left join radacct r on r.radacctid = v.radacctid
     where v.radacctid = s.radacctid
       and not exists (select from radacct o where o.radacctid = v.radacctid and o.acctstoptime is null)
       and s.input = v.input and s.output = v.output
    returning r.username, r.nasipaddress as nas, r.radacctid is not null as closed,
              greatest(coalesce(r.acctinputoctets, 0) - v.input, 0) as upload,
              greatest(coalesce(r.acctoutputoctets, 0) - v.output, 0) as download),
  closed as (select username, nas, upload, download from ended where closed and username is not null),
  heard as (
    select username, day, upload, download from d
    union all
    select username, (now() at time zone 'UTC')::date, upload, download
      from (select username, upload, download from grown where username is not null
            union all
            select username, upload, download from closed) s),
  per_day as (
    select username, day, sum(upload)::bigint as upload, sum(download)::bigint as download
      from heard group by username, day having sum(upload) + sum(download) > 0),
  counters as (
    select username, last_day,
           sum(upload + download) filter (where day = last_day)::bigint as day_used,
           sum(upload + download) filter (where date_trunc('month', day) = date_trunc('month', last_day))::bigint as month_used
      from (select p.*, max(day) over (partition by username) as last_day from per_day p) x
     group by username, last_day),
  moved as (
    select username, max(nas) as nas
      from (select username, nas from d where refresh
            union all
            select username, nas from closed) m
     group by username),
  state as (
    select m.username, o.open is not null as is_open, o.framedipaddress as open_ip,
           (select n.id from nas n where n.nasname = host(coalesce(o.nasipaddress, m.nas)) limit 1) as seen_nas
      from moved m
      left join lateral (
        select true as open, r.framedipaddress, r.nasipaddress from radacct r
         where r.username = m.username and r.acctstoptime is null
         order by r.acctstarttime desc nulls last, r.radacctid desc
         limit 1) o on true),
  changes as (
    select coalesce(c.username, st.username) as username, c.last_day, c.day_used, c.month_used,
           st.username is not null as refresh, st.is_open, st.open_ip, st.seen_nas
      from counters c full join state st on st.username = c.username),
  updated as (
    update subscribers s
       set daily_quota_used = case when x.last_day is null then s.daily_quota_used
                                   when s.usage_day = x.last_day then s.daily_quota_used + x.day_used
                                   else x.day_used end,
           monthly_quota_used = case when x.last_day is null then s.monthly_quota_used
                                     when date_trunc('month', s.usage_day) = date_trunc('month', x.last_day)
                                     then s.monthly_quota_used + x.month_used
                                     else x.month_used end,
           usage_day = coalesce(x.last_day, s.usage_day),
           is_online = case when x.refresh then x.is_open else s.is_online end,
           ip_address = case when not x.refresh then s.ip_address when x.is_open then x.open_ip end,
           last_nas_id = case when x.refresh then coalesce(x.seen_nas, s.last_nas_id) else s.last_nas_id end
      from changes x
     where s.username = x.username and s.deleted_at is null
       and (x.last_day is not null
            or (s.is_online, s.ip_address, s.last_nas_id)
               is distinct from (x.is_open, case when x.is_open then x.open_ip end, coalesce(x.seen_nas, s.last_nas_id)))
    returning s.id, s.username, x.last_day is not null as used),
  daily as (
    insert into daily_usage as du (subscriber_id, date, download_bytes, upload_bytes)
    select u.id, p.day, p.download, p.upload from per_day p join updated u on u.username = p.username
    on conflict (subscriber_id, date) do update
       set download_bytes = du.download_bytes + excluded.download_bytes,
           upload_bytes = du.upload_bytes + excluded.upload_bytes),
  queued as (
    insert into fup_queue (subscriber_id) select id from updated where used
    on conflict do nothing)
  select (select count(*) from d)::int as deltas,
         ((select count(*) from grown) + (select count(*) from ended))::int as sessions,
         (select count(*) from updated)::int as subscribers`;

/** Applies every pending delta, batch after batch. */
export async function rollupUsage(db: DbOrTx, batch = BATCH): Promise<RollupResult> {
  const total: RollupResult = { deltas: 0, sessions: 0, subscribers: 0 };
  for (;;) {
    const row = await db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext('usage_rollup'))`);
      const res = await tx.execute<{ deltas: number; sessions: number; subscribers: number }>(rollupBatch(batch));
      return res.rows[0];
    });
    total.deltas += row.deltas;
    total.sessions += row.sessions;
    total.subscribers += row.subscribers;
    if (row.deltas < batch) return total;
  }
}
