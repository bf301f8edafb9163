/**
 * The overdue rule (docs/billing.md): a pending or partial invoice whose due date is before today
 * (UTC) and which still has a balance becomes `overdue`. Set-based, idempotent, safe to run from
 * several instances at once. Used by billing's daily job and by the lifecycle sweep of the
 * subscribers unit (docs/lifecycle.md), so both mark with the one statement.
 */
import { sql } from 'drizzle-orm';
import { auditWriting } from '../audit';
import { db, type DbOrTx } from '../db/client';
import { todayUtc } from './dates';

/**
 * The marking and its audit rows (actor `system`, one per invoice, the status before and after) are
 * one statement: the trail costs no round trip and no row-by-row loop however many invoices pass
 * their due date. The self-join reads each row's status as it was before the update.
 */
export async function markOverdue(today: string = todayUtc(), executor: DbOrTx = db()): Promise<number> {
  const audited = auditWriting();
  const res = await executor.execute(sql`
    with marked as (
      update invoices i set status = 'overdue', updated_at = now()
        from invoices o
       where o.id = i.id and i.status in ('pending', 'partial') and i.due_date < ${today} and i.total > i.paid_amount
      returning i.id, i.reseller_id, o.status as before
    ), audit as (
      insert into audit_log (actor_type, action, entity, entity_id, reseller_id, details)
      select 'system', 'invoice.overdue', 'invoice', id, reseller_id, jsonb_build_object('status', jsonb_build_array(before, 'overdue'))
        from marked where ${audited}::boolean
    )
    select count(*)::int as n from marked`);
  return Number((res.rows[0] as { n: number }).n);
}
