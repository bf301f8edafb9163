/**
 * Day and month boundaries of the usage counters. The usage rollup already starts the counters
 * afresh when traffic arrives on a new day; this resets the subscribers that
 * had none yet, so reads and the FUP level are right from the first minute of the day.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../../shared/db/client';

/**
 * Counters of a day before `today` (default: the database's UTC date, the clock the trigger
 * uses, so an app host whose clock drifts cannot disagree with it at midnight): daily to 0,
 * monthly to 0 too when the month changed. Marked for the FUP engine, whose level may drop (a
 * daily quota, a new month).
 */
export async function resetCountersBefore(tx: DbOrTx, today?: string): Promise<{ today: string; reset: number }> {
  const day = today === undefined ? sql`(now() at time zone 'UTC')::date` : sql`${today}::date`;
  const res = await tx.execute<{ today: string; reset: number }>(sql`
    with reset as (
      update subscribers
         set daily_quota_used = 0,
             monthly_quota_used = case when date_trunc('month', usage_day) = date_trunc('month', ${day})
                                       then monthly_quota_used else 0 end,
             usage_day = ${day},
             fup_pending = true
       where usage_day < ${day}
      returning 1)
    select ${day}::text as today, (select count(*) from reset)::int as reset`);
  return res.rows[0];
}
