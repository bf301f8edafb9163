/**
 * Names shared with FreeRADIUS: each plan is a RADIUS group whose reply attributes carry the
 * plan's pool and rate limit, so changing a plan changes every subscriber on it at next login.
 */
import { eq, inArray, like, or, sql } from 'drizzle-orm';
import type { DbOrTx } from './db/client';
import { ipv6Pools, radgroupreply, type FupTier } from './db/schema';
import { rateTextExpands } from './vendors/rate';
import { planPairs, PROFILES, SUFFIXED_VENDORS, tierPairs, vendorGroup, type Vendor } from './vendors/profiles';

export const planGroup = (serviceId: number) => `plan_${serviceId}`;
/** The group of a plan's fair-use tier: its `Mikrotik-Rate-Limit` replaces the plan's and any user's. */
export const fupGroup = (serviceId: number, level: number) => `plan_${serviceId}_fup${level}`;
/** Every tier group of every plan, as a LIKE pattern (`_` escaped). */
export const FUP_GROUP_PATTERN = 'plan\\_%\\_fup_';

export const ATTR = {
  framedPool: 'Framed-Pool',
  rateLimit: 'Mikrotik-Rate-Limit',
  framedIp: 'Framed-IP-Address',
  framedIpv6Prefix: 'Framed-IPv6-Prefix',
  delegatedIpv6Prefix: 'Delegated-IPv6-Prefix',
  framedIpv6Pool: 'Framed-IPv6-Pool',
  ntPassword: 'NT-Password',
  cleartextPassword: 'Cleartext-Password',
  callingStationId: 'Calling-Station-Id',
  authType: 'Auth-Type',
  fallThrough: 'Fall-Through',
} as const;

/**
 * radcheck `Tmp-String-1 := "bind-mac"` while the subscriber's plan binds MACs and none is bound
 * yet. rlm_sql puts it in the control list, and the post-auth policy calls `radius_bind_mac` only
 * when it is there (deploy/freeradius/policy.conf): the login of a bound subscriber, or of one whose
 * plan does not bind, runs no binding query. FreeRADIUS's own scratch attribute, so an unchanged
 * dictionary reads it.
 */
export const MAC_BIND_PENDING = { attribute: 'Tmp-String-1', value: 'bind-mac' } as const;

/** What a plan's group rows are made of. */
export interface PlanReply {
  poolName: string | null;
  rateLimit: string | null;
  fupTiers?: FupTier[];
  /** The operator's extra pairs per vendor (`services.vendor_attributes`), already checked. */
  vendorAttributes?: Record<string, string>;
  framedIpv6Pool?: string | null;
  delegatedIpv6Pool?: string | null;
}

/**
 * The NAS's own IPv6 pools: Framed-IPv6-Pool (RFC 3162) for the WAN prefix, and for the delegated
 * one the vendor's attribute (Mikrotik-Delegated-IPv6-Pool, ERX-IPv6-Delegated-Pool-Name,
 * Alc-Delegated-IPv6-Pool) or RFC 6911's Delegated-IPv6-Prefix-Pool. A subscriber with a prefix of
 * its own gets no pool name (deploy/freeradius/policy.conf, ipv6_prefix_over_pool). `plan` has
 * been through nasPoolsOnly.
 */
function ipv6PoolRows(groupname: string, vendor: Vendor, plan: PlanReply) {
  return [
    plan.framedIpv6Pool
      ? { groupname, attribute: ATTR.framedIpv6Pool, op: '=', value: plan.framedIpv6Pool }
      : undefined,
    plan.delegatedIpv6Pool
      ? { groupname, attribute: PROFILES[vendor].delegatedIpv6Pool, op: '=', value: plan.delegatedIpv6Pool }
      : undefined,
  ].filter((r) => r !== undefined);
}

/**
 * The plan's IPv6 pool names that the NAS keeps: a name of one of our pools (ipv6_pools) is left
 * out. Its subscribers get a prefix of their own from it (shared/access/ipv6-pools.ts); the router
 * has no pool by that name, and if it had one, a subscriber left without a prefix would be handed
 * one from the very range we assign from. Pool creates and deletes rewrite the plans naming them.
 */
async function nasPoolsOnly(tx: DbOrTx, plan: PlanReply): Promise<PlanReply> {
  const names = [plan.framedIpv6Pool, plan.delegatedIpv6Pool].filter((n): n is string => !!n);
  if (names.length === 0) return plan;
  const ours = new Set(
    (await tx.select({ name: ipv6Pools.name }).from(ipv6Pools).where(inArray(ipv6Pools.name, names))).map(
      (r) => r.name,
    ),
  );
  const nasPool = (name: string | null | undefined) => (name && !ours.has(name) ? name : null);
  return { ...plan, framedIpv6Pool: nasPool(plan.framedIpv6Pool), delegatedIpv6Pool: nasPool(plan.delegatedIpv6Pool) };
}

/**
 * Group replies use `=` (add only when absent): FreeRADIUS applies the user's radreply first, so
 * a subscriber's own rate limit or static address wins over the plan's defaults. A fair-use tier's
 * group uses `:=`: a throttled subscriber gets the tier's rate whatever else applies.
 *
 * The plain groups (`plan_<id>`, `plan_<id>_fup<n>`) are MikroTik's, as they always were; each
 * other vendor has its own copy, `<group>@<vendor>`, with its profile's attributes
 * (writeVendorGroupReply), which FreeRADIUS reads for a NAS of that vendor (deploy/freeradius).
 */
export async function writePlanGroupReply(tx: DbOrTx, serviceId: number, saved: PlanReply): Promise<void> {
  const plan = await nasPoolsOnly(tx, saved);
  const group = planGroup(serviceId);
  await tx
    .delete(radgroupreply)
    .where(or(eq(radgroupreply.groupname, group), like(radgroupreply.groupname, `plan\\_${serviceId}\\_fup_`)));
  const rows = [
    plan.poolName ? { groupname: group, attribute: ATTR.framedPool, op: '=', value: plan.poolName } : undefined,
    plan.rateLimit && !rateTextExpands(plan.rateLimit)
      ? { groupname: group, attribute: ATTR.rateLimit, op: '=', value: plan.rateLimit }
      : undefined,
    ...ipv6PoolRows(group, 'mikrotik', plan),
    ...planPairs('mikrotik', { poolName: null, rateLimit: null, template: plan.vendorAttributes?.mikrotik }).map(
      (p) => ({ groupname: group, ...p }),
    ),
    // rlm_sql stops at the first group with reply rows unless it says Fall-Through: the tier group
    // (priority 0, read first) does, so the plan's group still adds its pool.
    ...(plan.fupTiers ?? [])
      .filter((t) => !rateTextExpands(t.rate_limit))
      .flatMap((t) => [
        { groupname: fupGroup(serviceId, t.level), attribute: ATTR.rateLimit, op: ':=', value: t.rate_limit },
        { groupname: fupGroup(serviceId, t.level), attribute: ATTR.fallThrough, op: '=', value: 'Yes' },
      ]),
  ].filter((r) => r !== undefined);
  if (rows.length) await tx.insert(radgroupreply).values(rows);
  await writeVendorRows(tx, serviceId, plan);
}

/** The rows of a plan's groups for a NAS of `vendor` (not MikroTik: its groups are the plain ones). */
export function vendorGroupRows(serviceId: number, vendor: Vendor, plan: PlanReply) {
  const group = vendorGroup(planGroup(serviceId), vendor);
  return [
    ...ipv6PoolRows(group, vendor, plan),
    ...planPairs(vendor, { ...plan, template: plan.vendorAttributes?.[vendor] }).map((p) => ({
      groupname: group,
      ...p,
    })),
    ...(plan.fupTiers ?? []).flatMap((t) => {
      const tier = vendorGroup(fupGroup(serviceId, t.level), vendor);
      return [
        ...tierPairs(vendor, t.rate_limit).map((p) => ({ groupname: tier, ...p })),
        { groupname: tier, attribute: ATTR.fallThrough, op: '=', value: 'Yes' },
      ];
    }),
  ];
}

/** Rewrites a plan's groups of every vendor but MikroTik (`plan_<id>@<vendor>`, `plan_<id>_fup<n>@<vendor>`). */
export async function writeVendorGroupReply(tx: DbOrTx, serviceId: number, plan: PlanReply): Promise<void> {
  await writeVendorRows(tx, serviceId, await nasPoolsOnly(tx, plan));
}

async function writeVendorRows(tx: DbOrTx, serviceId: number, plan: PlanReply): Promise<void> {
  await tx
    .delete(radgroupreply)
    .where(
      or(
        like(radgroupreply.groupname, `plan\\_${serviceId}@%`),
        like(radgroupreply.groupname, `plan\\_${serviceId}\\_fup_@%`),
      ),
    );
  const rows = SUFFIXED_VENDORS.flatMap((v) => vendorGroupRows(serviceId, v, plan));
  if (rows.length) await tx.insert(radgroupreply).values(rows);
}

/**
 * A plan's `mac_binding` switched: its subscribers' Calling-Station-Id rows follow (on: the MACs
 * already stored are enforced at once and the others bind at their next login; off: no row, any
 * MAC logs in).
 */
export async function syncPlanMacRows(tx: DbOrTx, serviceId: number): Promise<void> {
  await tx.execute(sql`
    delete from radcheck
     where attribute = any(${sql.param([ATTR.callingStationId, MAC_BIND_PENDING.attribute])}::text[])
       and username = any(array(select username from subscribers where service_id = ${serviceId} and deleted_at is null))`);
  await tx.execute(sql`
    insert into radcheck (username, attribute, op, value)
    select s.username, ${ATTR.callingStationId}, '==', s.mac_address
      from subscribers s join services p on p.id = s.service_id
     where s.service_id = ${serviceId} and s.deleted_at is null and p.mac_binding and s.mac_address is not null
    union all
    select s.username, ${MAC_BIND_PENDING.attribute}, ':=', ${MAC_BIND_PENDING.value}
      from subscribers s join services p on p.id = s.service_id
     where s.service_id = ${serviceId} and s.deleted_at is null and p.mac_binding and s.mac_address is null`);
}
