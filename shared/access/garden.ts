/**
 * The rows of the group every blocked subscriber is in (`billing_blocked`), from the settings
 * `blocked_access` and `walled_garden_attributes`. FreeRADIUS reads group rows at each
 * Access-Request, so a changed setting applies at the next login with no restart:
 * - reject: radgroupcheck `Auth-Type := Reject`;
 * - walled_garden: no check row, and the garden's pairs as radgroupreply, replacing the plan's.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { radgroupcheck, radgroupreply } from '../db/schema';
import { BLOCKED_GROUP, parseRadiusPairs, type BlockedAccessMode } from '../domain/access';
import { ATTR } from '../radius';
import { parseTemplate } from '../vendors/pairs';
import { PROFILES, SUFFIXED_VENDORS, vendorGroup } from '../vendors/profiles';
import { queueDisconnect } from './outbox';

/**
 * `gardenAttributes` are MikroTik's (the plain group); every other vendor's garden is its own group
 * `billing_blocked@<vendor>` (deploy/freeradius reads it for that vendor's NASes), from
 * `vendorGardens[vendor]` or else the vendor profile's default. The check row of reject mode is
 * vendor-neutral: FreeRADIUS reads group check rows under the plain name.
 */
export async function writeBlockedGroup(
  tx: DbOrTx,
  mode: BlockedAccessMode,
  gardenAttributes: string,
  vendorGardens: Record<string, string> = {},
): Promise<void> {
  await tx.execute(sql`delete from radgroupcheck where groupname = ${BLOCKED_GROUP}`);
  await tx.execute(
    sql`delete from radgroupreply where groupname = ${BLOCKED_GROUP} or groupname like ${`${BLOCKED_GROUP}@%`}`,
  );
  if (mode === 'reject') {
    await tx
      .insert(radgroupcheck)
      .values({ groupname: BLOCKED_GROUP, attribute: ATTR.authType, op: ':=', value: 'Reject' });
    return;
  }
  const pairs = parseRadiusPairs(gardenAttributes, true);
  if (pairs.length) await tx.insert(radgroupreply).values(pairs.map((p) => ({ groupname: BLOCKED_GROUP, ...p })));
  const vendorRows = SUFFIXED_VENDORS.flatMap((v) =>
    parseTemplate(vendorGardens[v] ?? PROFILES[v].garden, true).map((p) => ({
      groupname: vendorGroup(BLOCKED_GROUP, v),
      ...p,
    })),
  );
  if (vendorRows.length) await tx.insert(radgroupreply).values(vendorRows);
}

/** The blocked subscribers online now: after a change of mode they must log in again under it. */
export async function kickBlockedOnline(tx: DbOrTx): Promise<void> {
  const res = await tx.execute<{ id: number; username: string }>(sql`
    select id, username from subscribers
     where deleted_at is null and blocked_reason is not null and is_online order by id`);
  await queueDisconnect(
    tx,
    res.rows.map((r) => ({ id: Number(r.id), username: r.username })),
    'blocked',
  );
}
