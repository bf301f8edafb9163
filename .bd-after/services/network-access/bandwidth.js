"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.SESSION_LIMIT = void 0;
exports.bandwidthSeries = bandwidthSeries;
/**
 * GET /api/subscribers/:id/bandwidth: usage series from accounting.
 * - last 24 hours, hourly: from `radacct`. A session row holds running totals only, so each
 *   session's octets are spread evenly over the time they cover (start to last update or stop)
 *   and counted in the hours that time overlaps: an estimate whose hours add up to the exact totals.
 * - last 30 days, daily: from `daily_usage` (the accounting rollup), zero-filled.
 * - sessions: the 20 most recent, with totals and mean rates.
 * Download is what the NAS sent to the subscriber (Acct-Output-Octets), upload what it received.
 */
const drizzle_orm_1 = require("drizzle-orm");
const client_1 = require("../../shared/db/client");
exports.SESSION_LIMIT = 20;
const ISO = `'YYYY-MM-DD"T"HH24:MI:SS"Z"'`;
async function bandwidthSeries(subscriberId, username) {
    const [hours, days, sessions] = await Promise.all([
        (0, client_1.db)().execute((0, drizzle_orm_1.sql) `
      with hours as (
        select h from generate_series(date_trunc('hour', now()) - interval '23 hours', date_trunc('hour', now()), interval '1 hour') h
      ), s as (
        select acctstarttime as t0, greatest(coalesce(acctstoptime, acctupdatetime, acctstarttime), acctstarttime) as t1,
               coalesce(acctoutputoctets, 0) as dl, coalesce(acctinputoctets, 0) as ul
          from radacct
         where username = ${username} and acctstarttime is not null
           and coalesce(acctstoptime, acctupdatetime, acctstarttime) >= date_trunc('hour', now()) - interval '23 hours'
      ), shares as (
        select hours.h, s.dl, s.ul,
               case when s.t1 = s.t0 then 1.0
                    else extract(epoch from least(s.t1, hours.h + interval '1 hour') - greatest(s.t0, hours.h)) / extract(epoch from s.t1 - s.t0)
               end as share
          from hours join s on s.t0 < hours.h + interval '1 hour' and (s.t1 > hours.h or (s.t1 = s.t0 and s.t0 >= hours.h))
      ), per_hour as (
        select hours.h, coalesce(sum(shares.dl * shares.share), 0) as dl, coalesce(sum(shares.ul * shares.share), 0) as ul
          from hours left join shares on shares.h = hours.h
         group by hours.h
      )
      -- Rounded as running totals, so the hours add up to the exact octets of the window.
      select to_char(h at time zone 'UTC', ${drizzle_orm_1.sql.raw(ISO)}) as hour,
             (round(sum(dl) over w) - coalesce(round(sum(dl) over (w rows between unbounded preceding and 1 preceding)), 0))::bigint as download_bytes,
             (round(sum(ul) over w) - coalesce(round(sum(ul) over (w rows between unbounded preceding and 1 preceding)), 0))::bigint as upload_bytes
        from per_hour
      window w as (order by h)
       order by h`),
        (0, client_1.db)().execute((0, drizzle_orm_1.sql) `
      select to_char(d, 'YYYY-MM-DD') as date, coalesce(u.download_bytes, 0)::bigint as download_bytes, coalesce(u.upload_bytes, 0)::bigint as upload_bytes
        from generate_series((now() at time zone 'UTC')::date - 29, (now() at time zone 'UTC')::date, interval '1 day') d
        left join daily_usage u on u.subscriber_id = ${subscriberId} and u.date = d::date
       order by d`),
        (0, client_1.db)().execute((0, drizzle_orm_1.sql) `
      select acctsessionid as session_id,
             to_char(acctstarttime at time zone 'UTC', ${drizzle_orm_1.sql.raw(ISO)}) as started_at,
             to_char(acctstoptime at time zone 'UTC', ${drizzle_orm_1.sql.raw(ISO)}) as stopped_at,
             acctstoptime is null as online,
             coalesce(acctsessiontime, extract(epoch from coalesce(acctstoptime, acctupdatetime, acctstarttime) - acctstarttime))::bigint as duration_seconds,
             coalesce(acctoutputoctets, 0) as download_bytes, coalesce(acctinputoctets, 0) as upload_bytes,
             host(framedipaddress) as ip_address, host(nasipaddress) as nas_ip, acctterminatecause as terminate_cause
        from radacct where username = ${username}
       order by acctstarttime desc nulls last, radacctid desc
       limit ${exports.SESSION_LIMIT}`),
    ]);
    return {
        last_24h: hours.rows.map((r) => ({ hour: r.hour, download_bytes: Number(r.download_bytes), upload_bytes: Number(r.upload_bytes) })),
        last_30d: days.rows.map((r) => ({ date: r.date, download_bytes: Number(r.download_bytes), upload_bytes: Number(r.upload_bytes) })),
        sessions: sessions.rows.map((r) => {
            const duration = Number(r.duration_seconds);
            const rate = (bytes) => (duration > 0 ? Math.round((bytes * 8) / duration) : 0);
            return {
                ...r,
                duration_seconds: duration,
                download_bytes: Number(r.download_bytes),
                upload_bytes: Number(r.upload_bytes),
                avg_download_bps: rate(Number(r.download_bytes)),
                avg_upload_bps: rate(Number(r.upload_bytes)),
            };
        }),
    };
}
//# sourceMappingURL=bandwidth.js.map