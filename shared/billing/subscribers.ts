import { and, eq, isNull } from 'drizzle-orm';
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
  const [row] = await tx
    .select({
      id: subscribers.id,
      resellerId: subscribers.resellerId,
      username: subscribers.username,
      walletBalance: subscribers.walletBalance,
    })
    .from(subscribers)
    .where(and(eq(subscribers.id, id), isNull(subscribers.deletedAt)))
    .for('update');
  if (!row) throw fail('subscriberNotFound');
  return row;
}
