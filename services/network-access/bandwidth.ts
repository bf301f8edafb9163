/**
 * GET /api/subscribers/:id/bandwidth: usage series from accounting.
 * - last 24 hours, hourly: from `radacct`. A session row holds running totals only, so each
 *   session's octets are spread evenly over the time they cover (start to last update or stop)
 *   and counted in the hours that time overlaps: an estimate whose hours add up to the exact totals.
 * - last 30 days, daily: from `daily_usage` (the accounting rollup), zero-filled.
 * - sessions: the 20 most recent, with totals and mean rates.
 * Download is what the NAS sent to the subscriber (Acct-Output-Octets), upload what it received.
 */
import { sql } from 'drizzle-orm';
import type { NameHolder } from '../../shared/access/session-owner';
import { db } from '../../shared/db/client';

export const SESSION_LIMIT = 20;

export interface HourPoint {
  hour: string;
  download_bytes: number;
  upload_bytes: number;
}
export interface DayPoint {
  date: string;
  download_bytes: number;
  upload_bytes: number;
}
export interface SessionPoint {
  session_id: string;
  started_at: string | null;
  stopped_at: string | null;
  online: boolean;
  duration_seconds: number;
  download_bytes: number;
  upload_bytes: number;
  avg_download_bps: number;
  avg_upload_bps: number;
  ip_address: string | null;
  nas_ip: string;
  terminate_cause: string | null;
}

export interface BandwidthSeries {
  last_24h: HourPoint[];
  last_30d: DayPoint[];
  sessions: SessionPoint[];
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS"Z"'`;

export async function bandwidthSeries(subscriberId: number, holder: NameHolder): Promise<BandwidthSeries> {
  // An earlier holder's sessions under the name are not this subscriber's (shared/access/session-owner.ts).
  const own = sql`(${holder.usernameSince}::timestamptz is null or acctstarttime >= ${holder.usernameSince})`;
  const [hours, days, sessions] = await Promise.all([
    db().execute<HourPoint & Record<string, unknown>>(sql`
      with hours as (
        select h from generate_series(date_trunc('hour', now()) - interval '23 hours', date_trunc('hour', now()), interval '1 hour') h
      ), s as (
        select acctstarttime as t0, greatest(coalesce(acctstoptime, acctupdatetime, acctstarttime), acctstarttime) as t1,
               coalesce(acctoutputoctets, 0) as dl, coalesce(acctinputoctets, 0) as ul
          from radacct
         where username = ${holder.username} and acctstarttime is not null and ${own}
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
      select to_char(h at time zone 'UTC', ${sql.raw(ISO)}) as hour,
             (round(sum(dl) over w) - coalesce(round(sum(dl) over (w rows between unbounded preceding and 1 preceding)), 0))::bigint as download_bytes,
             (round(sum(ul) over w) - coalesce(round(sum(ul) over (w rows between unbounded preceding and 1 preceding)), 0))::bigint as upload_bytes
        from per_hour
      window w as (order by h)
       order by h`),
    db().execute<DayPoint & Record<string, unknown>>(sql`
      select to_char(d, 'YYYY-MM-DD') as date, coalesce(u.download_bytes, 0)::bigint as download_bytes, coalesce(u.upload_bytes, 0)::bigint as upload_bytes
        from generate_series((now() at time zone 'UTC')::date - 29, (now() at time zone 'UTC')::date, interval '1 day') d
        left join daily_usage u on u.subscriber_id = ${subscriberId} and u.date = d::date
       order by d`),
    db().execute<SessionPoint & Record<string, unknown>>(sql`
      select acctsessionid as session_id,
             to_char(acctstarttime at time zone 'UTC', ${sql.raw(ISO)}) as started_at,
             to_char(acctstoptime at time zone 'UTC', ${sql.raw(ISO)}) as stopped_at,
             acctstoptime is null as online,
             coalesce(acctsessiontime, extract(epoch from coalesce(acctstoptime, acctupdatetime, acctstarttime) - acctstarttime))::bigint as duration_seconds,
             coalesce(acctoutputoctets, 0) as download_bytes, coalesce(acctinputoctets, 0) as upload_bytes,
             host(framedipaddress) as ip_address, host(nasipaddress) as nas_ip, acctterminatecause as terminate_cause
        from radacct where username = ${holder.username} and ${own}
       order by acctstarttime desc nulls last, radacctid desc
       limit ${SESSION_LIMIT}`),
  ]);
  return {
    last_24h: hours.rows.map((r) => ({
      hour: r.hour,
      download_bytes: Number(r.download_bytes),
      upload_bytes: Number(r.upload_bytes),
    })),
    last_30d: days.rows.map((r) => ({
      date: r.date,
      download_bytes: Number(r.download_bytes),
      upload_bytes: Number(r.upload_bytes),
    })),
    sessions: sessions.rows.map((r) => {
      const duration = Number(r.duration_seconds);
      const rate = (bytes: number) => (duration > 0 ? Math.round((bytes * 8) / duration) : 0);
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
