/** The 409s of create and update: a static address or IPv6 prefix already held, a username already taken. */
import { sql } from 'drizzle-orm';
import type { Tx } from '../../shared/db/client';
import { isExclusionViolation, isUniqueViolation, violatedConstraint } from '../../shared/db/errors';
import type { ApiError } from '../../shared/errors';
import { fail } from '../../shared/failures';
import type { Ipv6Field } from './field-checks';
import type { SubscriberRow } from './subscriber-view';

/** Same rule as bulk set_static_ip: free among live subscribers and in no other username's reply rows. */
export async function assertAddressFree(tx: Tx, ip: string, self?: SubscriberRow): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('subscribers.static_ip'))`);
  const res = await tx.execute(sql`
    select 1 from subscribers where deleted_at is null and static_ip = ${ip}::inet and id <> ${self?.id ?? 0}
    union all
    select 1 from radreply where attribute = 'Framed-IP-Address' and value = ${ip} and username <> ${self?.username ?? ''}
    limit 1`);
  if (res.rows.length) throw fail('staticIpUsed');
}

/**
 * An IPv6 prefix overlapping a live subscriber's (a /64 inside another's /56 routes to the same
 * place). Under the same lock as the IPv4 check; the exclusion constraints hold if a writer skips it.
 */
export async function assertPrefixFree(tx: Tx, field: Ipv6Field, prefix: string, self?: SubscriberRow): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('subscribers.static_ip'))`);
  const res = await tx.execute<{ held: string }>(sql`
    select ${sql.identifier(field)}::text as held from subscribers
     where deleted_at is null and ${sql.identifier(field)} && ${prefix}::cidr and id <> ${self?.id ?? 0}
     limit 1`);
  if (res.rows.length) throw fail('ipv6PrefixUsed', field, res.rows[0].held);
}

/** The 409 of each subscriber index or constraint a concurrent writer may win. */
const CONFLICTS: Record<string, () => ApiError> = {
  subscribers_username_live_uq: () => fail('usernameTaken'),
  subscribers_static_ip_live_uq: () => fail('staticIpUsed'),
  subscribers_ipv6_prefix_no_overlap: () => fail('ipv6PrefixUsed', 'ipv6_prefix', 'a prefix'),
  subscribers_delegated_ipv6_prefix_no_overlap: () => fail('ipv6PrefixUsed', 'delegated_ipv6_prefix', 'a prefix'),
};

/**
 * A unique index or exclusion constraint that a concurrent writer won becomes the same 409 as the
 * checks before it. Any other violation is rethrown as it is: named by its constraint, an index of
 * another table (a pool's holders) is never answered as a username taken.
 */
export function uniqueConflict(err: unknown): never {
  const violation = isUniqueViolation(err) || isExclusionViolation(err);
  const conflict = violation ? CONFLICTS[violatedConstraint(err) ?? ''] : undefined;
  throw conflict ? conflict() : err;
}
