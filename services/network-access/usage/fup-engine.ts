/**
 * The FUP engine's I/O: reads subscribers whose usage moved (`fup_pending`), asks the pure rule
 * (shared/domain/fup.ts) for their level, and applies changed levels in the same transaction:
 * `fup_level`, the tier's RADIUS group (next login) and a `subscriber.rate_limit` outbox event
 * (CoA on the live session); on a plan without tiers, the block or its end (access rows and a
 * disconnect). Batches are claimed with SKIP LOCKED, so several network-access
 * instances share the work without applying a change twice.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../../shared/db/client';
import { kickChanged, syncAccessRows } from '../../../shared/access/radius-rows';
import { effectiveQuotaGb, fupLevel, validTiers, type Tier } from '../../../shared/domain/fup';
import { todayIso } from '../../../shared/domain/subscriber';
import { queueRateLimit, writeFupMembership } from '../../../shared/fup-rate';

interface PendingRow extends Record<string, unknown> {
  id: number;
  fup_level: number;
  deleted: boolean;
  daily_quota_used: number;
  monthly_quota_used: number;
  extra_quota_bytes: number;
  own_daily_gb: string | null;
  own_monthly_gb: string | null;
  plan_daily_gb: string | null;
  plan_monthly_gb: string | null;
  fup_tiers: Tier[];
}

export interface EvaluateResult {
  evaluated: number;
  changed: number;
}

/** One batch: returns how many subscribers it looked at and how many changed level. */
async function evaluateBatch(database: Db, batchSize: number): Promise<EvaluateResult> {
  return database.transaction(async (tx) => {
    const res = await tx.execute<PendingRow>(sql`
      select s.id, s.fup_level, s.deleted_at is not null as deleted, s.daily_quota_used, s.monthly_quota_used, s.extra_quota_bytes,
             s.daily_quota_gb as own_daily_gb, s.monthly_quota_gb as own_monthly_gb,
             p.daily_quota_gb as plan_daily_gb, p.monthly_quota_gb as plan_monthly_gb, p.fup_tiers
        from subscribers s join services p on p.id = s.service_id
       where s.id in (
               (select subscriber_id from fup_queue order by subscriber_id limit ${batchSize})
               union
               (select id from subscribers where fup_pending order by id limit ${batchSize}))
       order by s.id
       limit ${batchSize}
         for update of s skip locked`);
    const rows = res.rows;
    if (rows.length === 0) return { evaluated: 0, changed: 0 };
    // A deleted subscriber has no RADIUS rows and no session to change: its mark is just cleared.
    const changes = rows
      .filter((r) => !r.deleted)
      .map((r) => ({
        id: r.id,
        hasTiers: validTiers(r.fup_tiers).length > 0,
        from: r.fup_level,
        to: fupLevel(
          {
            dailyUsedBytes: r.daily_quota_used,
            monthlyUsedBytes: r.monthly_quota_used,
            extraBytes: r.extra_quota_bytes,
          },
          {
            dailyQuotaGb: effectiveQuotaGb(r.own_daily_gb, r.plan_daily_gb),
            monthlyQuotaGb: effectiveQuotaGb(r.own_monthly_gb, r.plan_monthly_gb),
            tiers: r.fup_tiers,
          },
        ),
      }))
      .filter((c) => c.to !== c.from);
    const ids = sql.param(rows.map((r) => r.id));
    // Only rows still flagged are written: an unchanged flag would cost an update of the row.
    await tx.execute(sql`update subscribers set fup_pending = false where id = any(${ids}::int[]) and fup_pending`);
    await tx.execute(sql`delete from fup_queue where subscriber_id = any(${ids}::int[])`);
    if (changes.length) {
      await tx.execute(sql`
        update subscribers s set fup_level = v.level, updated_at = now()
          from unnest(${sql.param(changes.map((c) => c.id))}::int[], ${sql.param(changes.map((c) => c.to))}::int[]) as v(id, level)
         where s.id = v.id`);
      // A plan with tiers changes the rate of the live session; on a plan without, a level above 0
      // blocks (and 0 restores): its access rows are rebuilt and the session, if any, dropped.
      const tiered = changes.filter((c) => c.hasTiers).map((c) => c.id);
      await writeFupMembership(tx, tiered);
      await queueRateLimit(tx, tiered);
      const tierless = changes.filter((c) => !c.hasTiers).map((c) => c.id);
      await kickChanged(tx, await syncAccessRows(tx, tierless, todayIso()));
    }
    return { evaluated: rows.length, changed: changes.length };
  });
}

/** Every pending subscriber, batch after batch. */
export async function evaluatePending(database: Db, batchSize = 500): Promise<EvaluateResult> {
  const total: EvaluateResult = { evaluated: 0, changed: 0 };
  for (;;) {
    const batch = await evaluateBatch(database, batchSize);
    total.evaluated += batch.evaluated;
    total.changed += batch.changed;
    if (batch.evaluated < batchSize) return total;
  }
}
