/**
 * Names shared with FreeRADIUS: each plan is a RADIUS group whose reply attributes carry the
 * plan's pool and rate limit, so changing a plan changes every subscriber on it at next login.
 */
import { eq, like, or, sql } from 'drizzle-orm';
import type { DbOrTx } from './db/client';
import { radgroupreply, type FupTier } from './db/schema';

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
  delegatedIpv6Pool: 'Delegated-IPv6-Prefix-Pool',
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

/**
 * Group replies use `=` (add only when absent): FreeRADIUS applies the user's radreply first, so
 * a subscriber's own rate limit or static address wins over the plan's defaults. A fair-use tier's
 * group uses `:=`: a throttled subscriber gets the tier's rate whatever else applies.
 */
export async function writePlanGroupReply(
  tx: DbOrTx,
  serviceId: number,
  plan: {
    poolName: string | null;
    rateLimit: string | null;
    fupTiers?: FupTier[];
    framedIpv6Pool?: string | null;
    delegatedIpv6Pool?: string | null;
  },
): Promise<void> {
  const group = planGroup(serviceId);
  await tx
    .delete(radgroupreply)
    .where(or(eq(radgroupreply.groupname, group), like(radgroupreply.groupname, `plan\\_${serviceId}\\_fup_`)));
  const rows = [
    plan.poolName ? { groupname: group, attribute: ATTR.framedPool, op: '=', value: plan.poolName } : undefined,
    plan.rateLimit ? { groupname: group, attribute: ATTR.rateLimit, op: '=', value: plan.rateLimit } : undefined,
    // The NAS's own IPv6 pools; a subscriber with a prefix of its own gets no pool name
    // (deploy/freeradius/policy.conf, ipv6_prefix_over_pool).
    plan.framedIpv6Pool
      ? { groupname: group, attribute: ATTR.framedIpv6Pool, op: '=', value: plan.framedIpv6Pool }
      : undefined,
    plan.delegatedIpv6Pool
      ? { groupname: group, attribute: ATTR.delegatedIpv6Pool, op: '=', value: plan.delegatedIpv6Pool }
      : undefined,
    // rlm_sql stops at the first group with reply rows unless it says Fall-Through: the tier group
    // (priority 0, read first) does, so the plan's group still adds its pool.
    ...(plan.fupTiers ?? []).flatMap((t) => [
      { groupname: fupGroup(serviceId, t.level), attribute: ATTR.rateLimit, op: ':=', value: t.rate_limit },
      { groupname: fupGroup(serviceId, t.level), attribute: ATTR.fallThrough, op: '=', value: 'Yes' },
    ]),
  ].filter((r) => r !== undefined);
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
