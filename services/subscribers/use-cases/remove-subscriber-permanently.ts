/**
 * DELETE /api/subscribers/:id/permanent (admin): every row of the subscriber goes but the ledger,
 * its invoices and the accounting history, which record money and sessions that happened.
 */
import { eq } from 'drizzle-orm';
import type { Auth } from '../../../shared/auth/claims';
import { requireAdmin } from '../../../shared/auth/policy';
import { db, type Tx } from '../../../shared/db/client';
import { recordAudit } from '../../../shared/audit';
import {
  bandwidthRules,
  dailyUsage,
  radcheck,
  radreply,
  radusergroup,
  subscribers,
  walletEntries,
} from '../../../shared/db/schema';
import { fail } from '../../../shared/failures';
import type { IdPath } from '../../../shared/http/schemas';
import { queueDisconnect } from '../../../shared/access/outbox';
import { loadRow } from '../subscriber-rows';
import type { SubscriberRow } from '../subscriber-view';

/** The FreeRADIUS rows of a live subscriber; the router is told to drop its session after commit. */
async function removeAccess(tx: Tx, row: SubscriberRow): Promise<void> {
  await tx.delete(radcheck).where(eq(radcheck.username, row.username));
  await tx.delete(radreply).where(eq(radreply.username, row.username));
  await tx.delete(radusergroup).where(eq(radusergroup.username, row.username));
  await queueDisconnect(tx, [row], 'delete');
}

/** The rows keyed by subscriber id, then the subscriber itself. */
async function removeOwnRows(tx: Tx, id: number): Promise<void> {
  await tx.delete(dailyUsage).where(eq(dailyUsage.subscriberId, id));
  await tx.delete(bandwidthRules).where(eq(bandwidthRules.subscriberId, id));
  await tx.delete(walletEntries).where(eq(walletEntries.subscriberId, id));
  await tx.delete(subscribers).where(eq(subscribers.id, id));
}

export async function removeSubscriberPermanently(caller: Auth | undefined, { id }: IdPath) {
  const auth = requireAdmin(caller);
  const row = await loadRow(id, false);
  if (!row) throw fail('subscriberNotFound');
  await db().transaction(async (tx) => {
    const [locked] = await tx.select().from(subscribers).where(eq(subscribers.id, row.id)).for('update');
    if (!locked) throw fail('subscriberNotFound');
    // A soft-deleted row's username may already belong to a new subscriber: its rows stay.
    if (locked.deletedAt === null) await removeAccess(tx, locked);
    await removeOwnRows(tx, locked.id);
    await recordAudit(tx, auth, {
      action: 'subscriber.delete_permanent',
      entity: 'subscriber',
      entityId: locked.id,
      resellerId: locked.resellerId,
      details: { username: locked.username },
    });
  });
  return { id: row.id, deleted: true };
}
