/**
 * Restore on payment (docs/lifecycle.md): a payment on an invoice past its due date may end an
 * overdue suspension. The subscriber's access rows are rebuilt in the payment's transaction and a
 * disconnect is queued when the block ended while it was online (in the walled garden), so its
 * next session is a normal one. Payments on invoices not yet due (the common case, renewals
 * included) cost no statement here.
 */
import { sql } from 'drizzle-orm';
import { kickChanged, syncAccessRows } from '../access/radius-rows';
import type { Tx } from '../db/client';
import { todayUtc } from './dates';

export async function restoreIfSuspended(
  tx: Tx,
  subscriberId: number | null,
  paidInvoicesDue: string[],
): Promise<void> {
  const today = todayUtc();
  if (subscriberId === null || !paidInvoicesDue.some((due) => due < today)) return;
  const res = await tx.execute<{ blocked_reason: string | null }>(
    sql`select blocked_reason from subscribers where id = ${subscriberId} and deleted_at is null`,
  );
  if (res.rows[0]?.blocked_reason !== 'overdue') return;
  await kickChanged(tx, await syncAccessRows(tx, [subscriberId], today));
}
