/**
 * Every vendor's group rows rewritten at once: the plans' (`plan_<id>@<vendor>` and their tiers')
 * and the garden's. Plans saved before a vendor profile existed, or before migration 0046, have
 * none; a NAS registered with (or moved to) another vendor than MikroTik brings them all up to
 * date in its own transaction, so its first subscriber's login finds them.
 */
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import type { FupTier } from '../db/schema';
import type { BlockedAccessMode } from '../domain/access';
import { writeVendorGroupReply } from '../radius';
import { loadSettings } from '../settings';
import { writeBlockedGroup } from './garden';
import { lockPoolNames } from './ipv6-pools';

export async function writeAllVendorRows(tx: Tx): Promise<void> {
  // Which pool names are ours is read per plan: a pool's create or delete in flight is waited for.
  await lockPoolNames(tx);
  const plans = await tx.execute<{
    id: number;
    pool_name: string | null;
    rate_limit: string | null;
    fup_tiers: FupTier[];
    vendor_attributes: Record<string, string>;
    framed_ipv6_pool: string | null;
    delegated_ipv6_pool: string | null;
  }>(
    sql`select id, pool_name, rate_limit, fup_tiers, vendor_attributes, framed_ipv6_pool, delegated_ipv6_pool
          from services where deleted_at is null order by id`,
  );
  for (const p of plans.rows) {
    await writeVendorGroupReply(tx, Number(p.id), {
      poolName: p.pool_name,
      rateLimit: p.rate_limit,
      fupTiers: p.fup_tiers,
      vendorAttributes: p.vendor_attributes,
      framedIpv6Pool: p.framed_ipv6_pool,
      delegatedIpv6Pool: p.delegated_ipv6_pool,
    });
  }
  const s = await loadSettings(tx, ['blocked_access', 'walled_garden_attributes', 'walled_garden_vendor_attributes']);
  await writeBlockedGroup(
    tx,
    s.blocked_access as BlockedAccessMode,
    s.walled_garden_attributes as string,
    s.walled_garden_vendor_attributes as Record<string, string>,
  );
}
