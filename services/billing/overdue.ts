/**
 * The overdue rule (docs/billing.md): a pending or partial invoice whose due date is before today
 * (UTC) and which still has a balance becomes `overdue`. Set-based, idempotent, safe to run from
 * several instances at once.
 */
import { sql } from 'drizzle-orm';
import { todayUtc } from '../../shared/billing';
import { db } from '../../shared/db/client';

export async function markOverdue(today: string = todayUtc()): Promise<number> {
  const res = await db().execute(sql`
    update invoices set status = 'overdue', updated_at = now()
    where status in ('pending', 'partial') and due_date < ${today} and total > paid_amount`);
  return res.rowCount ?? 0;
}
