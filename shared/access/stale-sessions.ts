/**
 * Ghost sessions in accounting: an open `radacct` row whose NAS stopped speaking of it (the router
 * rebooted without Accounting-On, the Stop was lost) keeps the subscriber "online" for ever. A
 * session with no Interim-Update for 2 x `accounting_interim_minutes` + 1 minutes is closed here as
 * `Stale-Session`, set-based, in batches; the usage rollup then clears `is_online` and
 * `ip_address`, so the online filter and the console follow.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { loadSettings } from '../settings';
import { rollupUsage } from './usage-rollup';

export const STALE_CAUSE = 'Stale-Session';

export interface ClosedSession {
  radacctid: number;
  username: string | null;
  nasipaddress: string;
  acctsessionid: string;
}

/** Minutes of silence after which an open session is stale: two missed interims and one minute. */
export const staleAfterMinutes = (interimMinutes: number) => 2 * interimMinutes + 1;

/**
 * The SET of an open radacct row closed at the last time it was heard of (its stop never came):
 * stop time and session time from its last update, and `cause`. Stale sessions and the router
 * reconciliation's ghosts close the same way.
 */
export const closedAtLastHeard = (cause: string) => sql`
  acctstoptime = coalesce(acctupdatetime, acctstarttime, now()),
  acctsessiontime = greatest(0, floor(extract(epoch from
    coalesce(acctupdatetime, acctstarttime, now()) - coalesce(acctstarttime, acctupdatetime, now()))))::bigint,
  acctterminatecause = ${cause}`;

/**
 * Closes every stale open session; returns what it closed. The stop time is the last time the NAS
 * spoke of the session (its last update, or its start), not the time of the sweep: the usage and
 * the duration are what accounting heard. Batches of `batch` rows claimed `for update skip locked`,
 * each its own statement, so FreeRADIUS's concurrent writes wait on a batch at most, and two
 * sweeps running at once do not close a row twice. A late Interim-Update for a closed row matches
 * no open row (FreeRADIUS's stock queries say `AcctStopTime IS NULL`) and changes nothing.
 */
export async function closeStaleSessions(
  db: DbOrTx,
  opts: { interimMinutes?: number; batch?: number } = {},
): Promise<ClosedSession[]> {
  const interim =
    opts.interimMinutes ?? (await loadSettings(db, ['accounting_interim_minutes'])).accounting_interim_minutes;
  const batch = opts.batch ?? 1000;
  const minutes = staleAfterMinutes(interim);
  const closed: ClosedSession[] = [];
  for (;;) {
    const res = await db.execute<{
      radacctid: string;
      username: string | null;
      nasipaddress: string;
      acctsessionid: string;
    }>(sql`
      update radacct r
         set ${closedAtLastHeard(STALE_CAUSE)}
        from (select radacctid from radacct
               where acctstoptime is null
                 and coalesce(acctupdatetime, acctstarttime) < now() - make_interval(mins => ${minutes}::int)
               order by radacctid
               limit ${batch}
               for update skip locked) stale
       where r.radacctid = stale.radacctid and r.acctstoptime is null
      returning r.radacctid, r.username, host(r.nasipaddress) as nasipaddress, r.acctsessionid`);
    for (const row of res.rows) closed.push({ ...row, radacctid: Number(row.radacctid) });
    if (res.rows.length < batch) break;
  }
  // Their subscribers go offline now rather than at the next rollup tick.
  if (closed.length) await rollupUsage(db);
  return closed;
}
