/**
 * Accounting retention (issue 26): closed sessions that ended before the first day of the UTC
 * month `accounting_retention_months` back are deleted by the usage run, in batches. Open sessions
 * are never touched, whatever their age. No live query reads history (the online filter reads
 * `subscribers.is_online`, the session lookups the partial open-session indexes), so this bounds
 * disk, not latency. Why a batched DELETE rather than monthly partitions: docs/freeradius.md.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../../shared/db/client';
import { retentionCutoff } from '../../../shared/access/retention-cutoff';
import { loadSettings } from '../../../shared/settings';

/** Rows per DELETE: short enough that a batch holds its locks for a moment only. */
export const RETENTION_BATCH = 5000;
/**
 * Batches per usage run: the run also closes stale sessions and applies the FUP, which must not
 * wait behind a backlog of months (the first run after lowering the setting); the next runs go on.
 */
export const RETENTION_MAX_BATCHES = 20;

export interface RetentionResult {
  /** First day kept (null: the setting is 0, nothing deleted). */
  cutoff: string | null;
  deleted: number;
}

/**
 * Deletes closed sessions that started and stopped before the cutoff. The start bound lets the
 * batch walk radacct_start_idx from the oldest row; a row with no start time (FreeRADIUS's queries
 * always write one) is left. `skip locked`: a row FreeRADIUS holds is taken by a later run. The
 * radacct delete trigger fires only for open rows (migration 0024), so a closed row costs its
 * index entries and nothing more.
 */
export async function purgeAccountingHistory(
  db: DbOrTx,
  today: string,
  opts: { months?: number; batch?: number; maxBatches?: number } = {},
): Promise<RetentionResult> {
  const months = opts.months ?? (await loadSettings(db, ['accounting_retention_months'])).accounting_retention_months;
  const batch = opts.batch ?? RETENTION_BATCH;
  const maxBatches = opts.maxBatches ?? RETENTION_MAX_BATCHES;
  const cutoff = retentionCutoff(today, months);
  if (cutoff === null) return { cutoff, deleted: 0 };
  const before = `${cutoff}T00:00:00Z`;
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const res = await db.execute(sql`
      delete from radacct r
       using (select radacctid from radacct
               where acctstarttime < ${before}::timestamptz and acctstoptime < ${before}::timestamptz
               order by acctstarttime
               limit ${batch}
               for update skip locked) old
       where r.radacctid = old.radacctid`);
    const n = res.rowCount ?? 0;
    deleted += n;
    if (n < batch) break;
  }
  return { cutoff, deleted };
}
