/**
 * IPv6 pools kept by us (docs/ipv6.md, "Pools"): a parent prefix split into prefixes of
 * one length, each handed to one subscriber at a time. A plan names the pool of its subscribers'
 * WAN prefixes (`framed_ipv6_pool`) and of their delegated LAN prefixes (`delegated_ipv6_pool`);
 * when the name is one of ours, a subscriber without a prefix gets the lowest free one, written as
 * its own (so FreeRADIUS replies with it and the NAS needs no pool of its own). The pool's row is
 * locked for each assignment, so concurrent ones queue and never hand out one prefix twice; the
 * subscribers' exclusion constraints (migration 0045) refuse an overlap whatever the path.
 */
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../db/client';
import { isExclusionViolation, isUniqueViolation } from '../db/errors';
import { services } from '../db/schema';
import { FAILURES, fail } from '../failures';
import { writePlanGroupReply } from '../radius';
import { formatIpv6Prefix, parseIpv6Prefix, prefixAt, prefixCount, type Ipv6Prefix } from '../net/ipv6-prefix';

/** Prefix lengths each subscriber field takes: the WAN side may be one address (/128), the LAN side /48 to /64. */
export const IPV6_LENGTHS = { ipv6_prefix: [48, 128], delegated_ipv6_prefix: [48, 64] } as const;

/** Which subscriber column a pool fills, and the plan column that names the pool. */
export const PREFIX_KINDS = {
  framed: { column: 'ipv6_prefix', planColumn: 'framed_ipv6_pool' },
  delegated: { column: 'delegated_ipv6_prefix', planColumn: 'delegated_ipv6_pool' },
} as const;
export type PrefixKind = keyof typeof PREFIX_KINDS;

/** Whether a pool's prefixes fit the subscriber field `kind` fills: as one typed in there would. */
function lengthFits(kind: PrefixKind, prefixLength: number): boolean {
  const [min, max] = IPV6_LENGTHS[PREFIX_KINDS[kind].column];
  return prefixLength >= min && prefixLength <= max;
}

/** The plan field naming a `kind` pool, the subscriber field it fills and that field's lengths: a refusal's words. */
const fieldsOf = (kind: PrefixKind) =>
  [
    PREFIX_KINDS[kind].planColumn,
    PREFIX_KINDS[kind].column,
    IPV6_LENGTHS[PREFIX_KINDS[kind].column].join(' to /'),
  ] as const;

/** A split wider than this is refused: 2^32 prefixes is more than any operator hands out from one pool. */
const MAX_SPLIT_BITS = 32;

export interface Ipv6PoolView {
  name: string;
  prefix: string;
  prefix_length: number;
  size: string;
  used: number;
}

export function checkPoolShape(prefixText: string, prefixLength: number): Ipv6Prefix {
  const parent = parseIpv6Prefix(prefixText);
  if (!parent || parent.length === 128)
    throw fail('ipv6PoolInvalid', 'prefix must be an IPv6 network such as 2001:db8::/40');
  if (prefixLength <= parent.length || prefixLength > 128)
    throw fail('ipv6PoolInvalid', `prefix_length must be longer than the pool's /${parent.length} and at most 128`);
  if (prefixLength - parent.length > MAX_SPLIT_BITS)
    throw fail('ipv6PoolInvalid', `prefix_length may split the pool into at most 2^${MAX_SPLIT_BITS} prefixes`);
  return parent;
}

export async function createPool(
  tx: Tx,
  name: string,
  prefixText: string,
  prefixLength: number,
): Promise<Ipv6PoolView> {
  const parent = checkPoolShape(prefixText, prefixLength);
  await lockPoolNames(tx);
  await checkPlansNaming(tx, name, prefixLength);
  try {
    await tx.execute(sql`
      insert into ipv6_pools (name, prefix, prefix_length) values (${name}, ${formatIpv6Prefix(parent)}::cidr, ${prefixLength})`);
  } catch (err) {
    if (isUniqueViolation(err) || isExclusionViolation(err)) throw fail('ipv6PoolTaken', name);
    throw err;
  }
  await rewritePlansNaming(tx, name);
  return {
    name,
    prefix: formatIpv6Prefix(parent),
    prefix_length: prefixLength,
    size: String(prefixCount(parent.length, prefixLength)),
    used: 0,
  };
}

/**
 * Serialises the writes that decide whether a name is one of our pools and what the plans' RADIUS
 * rows say of it (a pool's create and delete, a plan's create and update, a NAS's rewrite of every
 * vendor's rows): each reads the other's rows, so none commits past a check or a rewrite the other
 * could not see.
 */
export async function lockPoolNames(tx: Tx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('ipv6_pools.name'))`);
}

/** The plans that name `name` already: as it becomes a pool of ours, it must be one they can use. */
async function checkPlansNaming(tx: Tx, name: string, prefixLength: number): Promise<void> {
  const { rows } = await tx.execute<{ plan: string; framed: string | null; delegated: string | null }>(sql`
    select name as plan, framed_ipv6_pool as framed, delegated_ipv6_pool as delegated from services
     where deleted_at is null and ${name} in (framed_ipv6_pool, delegated_ipv6_pool) order by id`);
  const both = rows.find((r) => r.framed === r.delegated);
  if (both) throw fail('ipv6PoolNamedForBoth', both.plan, name);
  for (const row of rows) {
    const kind = row.framed === name ? 'framed' : 'delegated';
    if (!lengthFits(kind, prefixLength))
      throw fail('ipv6PoolLengthUnfitForPlan', prefixLength, row.plan, ...fieldsOf(kind));
  }
}

/**
 * The IPv6 pool names a plan is saved with, checked against our pools: one of ours gives a
 * subscriber one prefix (ipv6_pool_assignments_holder_uq), so a plan cannot name it for both kinds
 * (every subscriber's create on it would fail), and its prefixes must be of a length the field it
 * fills takes. Names the NAS keeps are the router's business. Every plan write takes the names'
 * lock here, before its RADIUS rows, so a pool's create or delete rewriting them reads the plan as
 * committed after it.
 */
export async function checkPlanPools(tx: Tx, framed: string | null, delegated: string | null): Promise<void> {
  await lockPoolNames(tx);
  if (!framed && !delegated) return;
  const { rows } = await tx.execute<{ name: string; prefix_length: number }>(
    sql`select name, prefix_length from ipv6_pools where name in (${framed}, ${delegated})`,
  );
  const ours = new Map(rows.map((r) => [r.name, r.prefix_length]));
  if (framed === delegated && ours.has(framed!)) throw fail('ipv6PoolBothKinds', framed!);
  const named = [
    ['framed', framed],
    ['delegated', delegated],
  ] as const;
  for (const [kind, name] of named) {
    const length = name === null ? undefined : ours.get(name);
    if (name && length !== undefined && !lengthFits(kind, length))
      throw fail('ipv6PoolLengthUnfit', name, length, ...fieldsOf(kind));
  }
}

export async function listPools(db: DbOrTx): Promise<Ipv6PoolView[]> {
  const { rows } = await db.execute<{ name: string; prefix: string; prefix_length: number; used: number }>(sql`
    select p.name, p.prefix::text as prefix, p.prefix_length,
           (select count(*)::int from ipv6_pool_assignments a where a.pool_name = p.name) as used
      from ipv6_pools p order by p.name`);
  return rows.map((r) => ({
    ...r,
    size: String(prefixCount(parseIpv6Prefix(r.prefix)!.length, r.prefix_length)),
  }));
}

/** A pool with prefixes still held is kept: its holders' prefixes would lose their guard against reuse. */
export async function deletePool(tx: Tx, name: string): Promise<void> {
  await lockPoolNames(tx);
  const { rows } = await tx.execute<{ used: number }>(sql`
    select (select count(*)::int from ipv6_pool_assignments where pool_name = p.name) as used
      from ipv6_pools p where p.name = ${name} for update`);
  if (!rows.length) throw fail('ipv6PoolNotFound');
  if (rows[0].used > 0) throw fail('ipv6PoolInUse', name);
  await tx.execute(sql`delete from ipv6_pools where name = ${name}`);
  await rewritePlansNaming(tx, name);
}

/**
 * The RADIUS groups of the plans naming `name`, rewritten as it becomes or stops being a pool of
 * ours: the pool name leaves or rejoins their replies (radius.ts, nasPoolsOnly).
 */
async function rewritePlansNaming(tx: Tx, name: string): Promise<void> {
  const plans = await tx
    .select()
    .from(services)
    .where(
      and(isNull(services.deletedAt), or(eq(services.framedIpv6Pool, name), eq(services.delegatedIpv6Pool, name))),
    );
  for (const plan of plans) await writePlanGroupReply(tx, plan.id, plan);
}

/** The 409s of a pool of ours that cannot serve a subscriber, for the error lists of the routes that assign. */
export const IPV6_POOL_CONFLICTS = `${FAILURES.ipv6PoolExhausted.message('<pool>')}; ${FAILURES.ipv6PoolHeldForOtherField.message('<pool>', '<field>')}`;

/** Pools of ours by the kind of prefix they give. */
export type PoolsByKind = Partial<Record<PrefixKind, string>>;

/** The pools of ours a plan names, by kind: a name the NAS keeps is none of ours and left out. */
export async function ourPoolsOf(tx: DbOrTx, planId: number): Promise<PoolsByKind> {
  const { rows } = await tx.execute<{ framed: string | null; delegated: string | null }>(sql`
    select fp.name as framed, dp.name as delegated
      from services p
      left join ipv6_pools fp on fp.name = p.framed_ipv6_pool
      left join ipv6_pools dp on dp.name = p.delegated_ipv6_pool
     where p.id = ${planId}`);
  return { framed: rows[0]?.framed ?? undefined, delegated: rows[0]?.delegated ?? undefined };
}

/**
 * Gives the subscriber (locked by the caller) a prefix from each pool of ours its plan names, for
 * each kind where it holds none. Returns what was assigned.
 */
export async function assignPlanPrefixes(tx: Tx, subscriberId: number): Promise<PoolsByKind> {
  const { rows } = await tx.execute<{ framed: string | null; delegated: string | null }>(sql`
    select case when s.ipv6_prefix is null then fp.name end as framed,
           case when s.delegated_ipv6_prefix is null then dp.name end as delegated
      from subscribers s join services p on p.id = s.service_id
      left join ipv6_pools fp on fp.name = p.framed_ipv6_pool
      left join ipv6_pools dp on dp.name = p.delegated_ipv6_pool
     where s.id = ${subscriberId} and s.deleted_at is null`);
  return assignFromPools(tx, subscriberId, {
    framed: rows[0]?.framed ?? undefined,
    delegated: rows[0]?.delegated ?? undefined,
  });
}

/**
 * A prefix from each of `pools` written as the subscriber's (locked by the caller) own, for kinds
 * it holds none of. When one cannot be served (409), those written before it go back, so a caller
 * that carries on (a bulk batch) leaves the subscriber as it was. Returns what was assigned.
 */
export async function assignFromPools(tx: Tx, subscriberId: number, pools: PoolsByKind): Promise<PoolsByKind> {
  const given: PoolsByKind = {};
  try {
    for (const kind of ['framed', 'delegated'] as const) {
      const pool = pools[kind];
      if (pool) given[kind] = await assignFromPool(tx, subscriberId, pool, kind);
    }
  } catch (err) {
    for (const [kind, prefix] of Object.entries(given) as [PrefixKind, string][]) {
      await releasePrefix(tx, subscriberId, prefix);
      const column = sql.identifier(PREFIX_KINDS[kind].column);
      await tx.execute(sql`update subscribers set ${column} = null where id = ${subscriberId}`);
    }
    throw err;
  }
  return given;
}

/**
 * The lowest free prefix of `pool` written as the subscriber's (locked by the caller) `kind`, the
 * prefix it replaces going back to its pool; 409 when none is free, the subscriber's prefixes as
 * they were. Free means held by no assignment and overlapping no other live subscriber's prefix
 * typed in by hand. Such a prefix is passed over to its end in one step, so however many of the
 * pool's prefixes it covers, it costs one look and never makes the walk give up early.
 */
export async function assignFromPool(tx: Tx, subscriberId: number, pool: string, kind: PrefixKind): Promise<string> {
  const {
    rows: [p],
  } = await tx.execute<{ prefix: string; prefix_length: number }>(
    sql`select prefix::text as prefix, prefix_length from ipv6_pools where name = ${pool} for update`,
  );
  const current = await heldPrefix(tx, subscriberId, kind);
  await releaseOwnFromPool(tx, subscriberId, pool, kind, current);
  const parent = parseIpv6Prefix(p.prefix)!;
  const size = prefixCount(parent.length, p.prefix_length);
  let index = await firstUnassigned(tx, pool, 0n);
  while (index < size) {
    const prefix = formatIpv6Prefix(prefixAt(parent, p.prefix_length, index));
    const last = await lastAddressOverlapping(tx, kind, prefix, subscriberId);
    if (last === null) {
      await releasePrefix(tx, subscriberId, current);
      await tx.execute(sql`
        insert into ipv6_pool_assignments (pool_name, index, prefix, subscriber_id)
        values (${pool}, ${String(index)}::bigint, ${prefix}::cidr, ${subscriberId})`);
      const column = sql.identifier(PREFIX_KINDS[kind].column);
      await tx.execute(sql`update subscribers set ${column} = ${prefix}::cidr where id = ${subscriberId}`);
      return prefix;
    }
    const pastHeld = ((last - parent.network) >> BigInt(128 - p.prefix_length)) + 1n;
    index = await firstUnassigned(tx, pool, pastHeld);
  }
  throw fail('ipv6PoolExhausted', pool);
}

async function heldPrefix(tx: Tx, subscriberId: number, kind: PrefixKind): Promise<string | null> {
  const column = sql.identifier(PREFIX_KINDS[kind].column);
  const { rows } = await tx.execute<{ prefix: string | null }>(
    sql`select ${column}::text as prefix from subscribers where id = ${subscriberId}`,
  );
  return rows[0].prefix;
}

/**
 * A subscriber holds one prefix of a pool (ipv6_pool_assignments_holder_uq). Drawing again the
 * `kind` it holds from `pool`, that one goes back first, so the draw cannot run short of it (its
 * own prefix is free for it); one of the other kind from `pool` is 409.
 */
async function releaseOwnFromPool(
  tx: Tx,
  subscriberId: number,
  pool: string,
  kind: PrefixKind,
  current: string | null,
): Promise<void> {
  const { rows } = await tx.execute<{ prefix: string }>(
    sql`select prefix::text as prefix from ipv6_pool_assignments where pool_name = ${pool} and subscriber_id = ${subscriberId}`,
  );
  if (!rows.length) return;
  if (rows[0].prefix !== current) {
    const other = kind === 'framed' ? 'delegated' : 'framed';
    throw fail('ipv6PoolHeldForOtherField', pool, PREFIX_KINDS[other].column);
  }
  await releasePrefix(tx, subscriberId, current);
}

/**
 * The lowest index from `from` on that no assignment holds: `from`, or the end of the run of held
 * indices it starts (an index-only walk of the primary key).
 */
async function firstUnassigned(tx: Tx, pool: string, from: bigint): Promise<bigint> {
  const {
    rows: [first],
  } = await tx.execute<{ index: string }>(sql`
    select case when not exists (select 1 from ipv6_pool_assignments where pool_name = ${pool} and index = ${String(from)}::bigint)
                then ${String(from)}::bigint
           else (select a.index + 1 from ipv6_pool_assignments a
                  where a.pool_name = ${pool} and a.index >= ${String(from)}::bigint
                    and not exists (select 1 from ipv6_pool_assignments b where b.pool_name = a.pool_name and b.index = a.index + 1)
                  order by a.index limit 1) end::text as index`);
  return BigInt(first.index);
}

/**
 * The last address of the other live subscribers' `kind` prefixes that overlap `prefix`, or null
 * when none does (the subscriber's own is the one being replaced).
 */
async function lastAddressOverlapping(
  tx: Tx,
  kind: PrefixKind,
  prefix: string,
  subscriberId: number,
): Promise<bigint | null> {
  const column = sql.identifier(PREFIX_KINDS[kind].column);
  const {
    rows: [held],
  } = await tx.execute<{ last: string | null }>(sql`
    select host(max(broadcast(${column}))) as last from subscribers
     where deleted_at is null and ${column} && ${prefix}::cidr and id <> ${subscriberId}`);
  return held.last === null ? null : parseIpv6Prefix(held.last)!.network;
}

/** A prefix the subscriber no longer holds (changed or cleared by hand) goes back to its pool. */
export async function releasePrefix(tx: Tx, subscriberId: number, prefix: string | null): Promise<void> {
  if (!prefix) return;
  await tx.execute(
    sql`delete from ipv6_pool_assignments where subscriber_id = ${subscriberId} and prefix = ${prefix}::cidr`,
  );
}

/**
 * A deleted subscriber's prefixes go back to their pools at once, as its username and static
 * address do: nothing restores a soft-deleted subscriber, so keeping them only drained the pool.
 */
export async function releaseAllPrefixes(tx: Tx, subscriberIds: number[]): Promise<void> {
  await tx.execute(
    sql`delete from ipv6_pool_assignments where subscriber_id = any(${sql.param(subscriberIds)}::int[])`,
  );
}
