/**
 * The installation's default reseller (docs/operators-first-day.md): the owner of subscribers that
 * an admin or operator staff creates without `reseller_id`. A subscriber always has a reseller (the
 * spec's field, and every scope rule, read it), so "direct" subscribers belong to a root reseller
 * the setting `default_reseller_id` names. The first time one is needed and none is set, a root
 * reseller "Direct subscribers" is created in the system currency and the setting recorded; it is
 * renamed like any reseller, and an admin may point the setting at another one.
 */
import { eq, sql } from 'drizzle-orm';
import { changedFields, recordAudit } from './audit';
import type { Auth } from './auth/claims';
import type { Tx } from './db/client';
import { resellers } from './db/schema';
import { loadSettings, saveSettings } from './settings';

export const DEFAULT_RESELLER_NAME = 'Direct subscribers';

/** The recorded default reseller's id, if it still exists. */
async function recorded(tx: Tx): Promise<number | null> {
  const { default_reseller_id: id } = await loadSettings(tx, ['default_reseller_id']);
  if (id === null) return null;
  const [found] = await tx.select({ id: resellers.id }).from(resellers).where(eq(resellers.id, id));
  return found?.id ?? null;
}

/**
 * The default reseller's id, created when missing. Only the creation takes the lock (so two first
 * creates make one): held by every direct create until its commit, it made them one at a time.
 */
export async function defaultReseller(tx: Tx, auth: Auth): Promise<number> {
  const existing = await recorded(tx);
  if (existing !== null) return existing;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('resellers.default'))`);
  const again = await recorded(tx);
  if (again !== null) return again;
  const { currency } = await loadSettings(tx, ['currency']);
  const [inserted] = await tx
    .insert(resellers)
    .values({ name: DEFAULT_RESELLER_NAME, parentId: null, path: '', currency })
    .returning({ id: resellers.id });
  const [row] = await tx
    .update(resellers)
    .set({ path: `/${inserted.id}/` })
    .where(eq(resellers.id, inserted.id))
    .returning();
  await saveSettings(tx, { default_reseller_id: row.id });
  await recordAudit(tx, auth, {
    action: 'reseller.create',
    entity: 'reseller',
    entityId: row.id,
    resellerId: row.id,
    details: { ...changedFields(null, row), default_reseller: true },
  });
  return row.id;
}
