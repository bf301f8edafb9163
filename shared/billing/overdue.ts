/**
 * The overdue rule (docs/billing.md): a pending or partial invoice whose due date is before today
 * (UTC) and which still has a balance becomes `overdue`. Set-based, idempotent, safe to run from
 * several instances at once. Used by billing's daily job and by the lifecycle sweep of the
 * subscribers unit (docs/lifecycle.md), so both mark with the one statement.
 */
import { sql } from 'drizzle-orm';
import { db, type DbOrTx } from '../db/client';
import { todayUtc } from './dates';

export async function markOverdue(today: string = todayUtc(), executor: DbOrTx = db()): Promise<number> {
  const res = await executor.execute(sql`
    update invoices set status = 'overdue', updated_at = now()
    where status in ('pending', 'partial') and due_date < ${today} and total > paid_amount`);
  return res.rowCount ?? 0;
}
