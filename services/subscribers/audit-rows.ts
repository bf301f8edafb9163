/**
 * The audit rows of a set-based write over many subscribers (a bulk job's batch, the sweep's
 * auto-renew): the rows as they are now read in one statement, each compared with its row as
 * locked before the write, and every row appended in one INSERT ... SELECT (shared/audit.ts), in
 * the batch's transaction.
 */
import { inArray } from 'drizzle-orm';
import { auditWriting, changedFields, recordAuditRows, type AuditEntry } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import type { Tx } from '../../shared/db/client';
import { subscribers } from '../../shared/db/schema';
import type { SubscriberRow } from './subscriber-view';

export async function auditSubscriberRows(
  tx: Tx,
  auth: Auth | undefined,
  action: string,
  before: SubscriberRow[],
  ids: number[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  if (!auditWriting() || ids.length === 0) return;
  const wanted = new Set(ids);
  const after = new Map(
    (await tx.select().from(subscribers).where(inArray(subscribers.id, ids))).map((r) => [r.id, r] as const),
  );
  const entries: AuditEntry[] = [];
  for (const row of before) {
    if (!wanted.has(row.id)) continue;
    const now = after.get(row.id);
    entries.push({
      action,
      entity: 'subscriber',
      entityId: row.id,
      resellerId: now?.resellerId ?? row.resellerId,
      details: { ...changedFields(row, now), ...extra },
    });
  }
  await recordAuditRows(tx, auth, entries);
}
