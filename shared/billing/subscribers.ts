import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { subscribers } from '../db/schema';
import { fail } from '../failures';

export interface LockedSubscriber {
  id: number;
  resellerId: number;
  username: string;
  walletBalance: number;
}

/**
 * Locks a live subscriber row. Lock order for every billing write: subscriber first, then its
 * invoices by ascending id, so quick-pay, consolidation and wallet payments cannot deadlock.
 */
export async function lockSubscriber(tx: Tx, id: number): Promise<LockedSubscriber> {
  const row = await lockSubscriberRow(tx, id, false);
  if (!row) throw fail('subscriberNotFound');
  return row;
}

/**
 * The subscriber's row locked, deleted or not (`deleted` in the answer); undefined when it was
 * removed for good. For money that arrives whatever happened to the account since (an online
 * payment): it is booked, not refused.
 */
export async function lockSubscriberEvenDeleted(
  tx: Tx,
  id: number,
): Promise<(LockedSubscriber & { deleted: boolean }) | undefined> {
  return lockSubscriberRow(tx, id, true);
}

async function lockSubscriberRow(tx: Tx, id: number, evenDeleted: boolean) {
  const [row] = await tx
    .select({
      id: subscribers.id,
      resellerId: subscribers.resellerId,
      username: subscribers.username,
      walletBalance: subscribers.walletBalance,
      deleted: sql<boolean>`${subscribers.deletedAt} is not null`,
    })
    .from(subscribers)
    .where(evenDeleted ? eq(subscribers.id, id) : and(eq(subscribers.id, id), isNull(subscribers.deletedAt)))
    .for('update');
  return row;
}
