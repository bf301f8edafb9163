/**
 * Time-driven changes of the blocked state (docs/lifecycle.md): every writer keeps `blocked_reason`
 * in its own transaction, but nobody writes when midnight passes an expiry date or an invoice's
 * due date passes the suspension threshold. The sweep finds those subscribers and brings their
 * reason and RADIUS rows up to date in batches, disconnecting the online ones whose state changed.
 */
import { sql } from 'drizzle-orm';
import { blockedReasonSql } from '../../../shared/access/blocked';
import { kickChanged, syncAccessRows } from '../../../shared/access/radius-rows';
import { recordAuditRows } from '../../../shared/audit';
import { db } from '../../../shared/db/client';
import { inBatches } from './batches';

export interface BlockedOutcome {
  /** Subscribers that became blocked. */
  blocked: number;
  /** Subscribers that stopped being blocked. */
  restored: number;
}

/**
 * The candidates, each set on its own index: live subscribers not blocked yet and past expiry
 * (subscribers_unblocked_expiry_idx), the blocked ones whose reason no longer holds or changed
 * (subscribers_blocked_idx), and, with `suspend_overdue_after_days` set, the holders of an
 * invoice unpaid past that many days. Only those whose reason would change: a stable installation
 * costs three index reads a sweep.
 */
export async function blockedCandidates(today: string, suspendAfterDays: number | null): Promise<number[]> {
  const reason = blockedReasonSql(today);
  const overdue =
    suspendAfterDays === null
      ? sql``
      : sql`union
    select s.id from subscribers s join services p on p.id = s.service_id
     where s.id = any(array(
             select distinct i.subscriber_id from invoices i
              where i.status in ('pending', 'partial', 'overdue') and i.total > i.paid_amount
                and i.due_date < ${today}::date - ${suspendAfterDays}::int))
       and s.deleted_at is null and s.blocked_reason is null and (${reason}) is not null`;
  const res = await db().execute<{ id: number }>(sql`
    select s.id from subscribers s
     where s.deleted_at is null and s.blocked_reason is null and s.expiry_date < ${today}::date
    union
    select s.id from subscribers s join services p on p.id = s.service_id
     where s.deleted_at is null and s.blocked_reason is not null and s.blocked_reason is distinct from (${reason})
    ${overdue}
    order by 1`);
  return res.rows.map((r) => Number(r.id));
}

export async function refreshBlocked(
  today: string,
  suspendAfterDays: number | null,
  batchSize: number,
  stopping: () => boolean,
): Promise<BlockedOutcome> {
  const out: BlockedOutcome = { blocked: 0, restored: 0 };
  for (const batch of inBatches(await blockedCandidates(today, suspendAfterDays), batchSize)) {
    if (stopping()) break;
    await db().transaction(async (tx) => {
      // The writers' lock order: subscriber rows by ascending id.
      const locked = await tx.execute<{ id: number; reseller_id: number; blocked_reason: string | null }>(
        sql`select id, reseller_id, blocked_reason from subscribers where id = any(${sql.param(batch)}::int[]) order by id for update`,
      );
      const changes = await syncAccessRows(tx, batch, today);
      await kickChanged(tx, changes);
      const before = new Map(locked.rows.map((r) => [Number(r.id), r]));
      // Actor `system`: one row per subscriber whose state changed, the batch's rows in one statement.
      await recordAuditRows(
        tx,
        undefined,
        changes.map((c) => ({
          action: c.blockedReason === null ? 'subscriber.restore' : 'subscriber.block',
          entity: 'subscriber',
          entityId: c.id,
          resellerId: Number(before.get(c.id)?.reseller_id ?? 0) || null,
          details: { blockedReason: [before.get(c.id)?.blocked_reason ?? null, c.blockedReason] },
        })),
      );
      for (const c of changes) {
        if (c.blockedReason === null) out.restored++;
        else out.blocked++;
      }
    });
  }
  return out;
}
