/**
 * How a subscriber's fair-use level reaches FreeRADIUS and the router, written inside the caller's
 * transaction by every writer of `fup_level` (the FUP engine in network-access; reset-fup, refill
 * and the access-row sync in subscribers):
 * - FreeRADIUS: membership of the tier's group (`plan_<id>_fup<level>`, whose radgroupreply sets
 *   `Mikrotik-Rate-Limit :=`) so the next login gets the tier's rate;
 * - the live session: an outbox event `subscriber.rate_limit` that network-access turns into a
 *   CoA-Request with `Mikrotik-Rate-Limit`, so the rate changes without a disconnect.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from './db/client';
import { ATTR, FUP_GROUP_PATTERN } from './radius';

export const RATE_LIMIT_EVENT = 'subscriber.rate_limit';

/** Payload of a `subscriber.rate_limit` outbox event. `rate_limit` null: no limit applies. */
export interface RateLimitEvent {
  subscriber_id: number;
  username: string;
  rate_limit: string | null;
  fup_level: number;
}

const ids = (list: number[]) => sql`${sql.param(list)}::int[]`;

/** Rewrites the tier-group membership of these live subscribers from their `fup_level`. */
export async function writeFupMembership(tx: DbOrTx, subscriberIds: number[]): Promise<void> {
  if (subscriberIds.length === 0) return;
  await tx.execute(sql`
    delete from radusergroup
     where username = any(array(select username from subscribers where id = any(${ids(subscriberIds)})))
       and groupname like ${FUP_GROUP_PATTERN}`);
  // Priority 0: before the plan's group (1), though `:=` wins in any order.
  await tx.execute(sql`
    insert into radusergroup (username, groupname, priority)
    select username, 'plan_' || service_id || '_fup' || fup_level, 0 from subscribers
     where id = any(${ids(subscriberIds)}) and deleted_at is null and fup_level > 0 and blocked_reason is null`);
}

/**
 * Queues one `subscriber.rate_limit` event per live subscriber with the rate now in force: the
 * tier's at a level above 0, else the subscriber's own radreply rate (permanent bandwidth rules),
 * else the plan's.
 */
export async function queueRateLimit(tx: DbOrTx, subscriberIds: number[]): Promise<void> {
  if (subscriberIds.length === 0) return;
  await tx.execute(sql`
    insert into outbox (event, payload)
    select ${RATE_LIMIT_EVENT}, jsonb_build_object(
             'subscriber_id', s.id, 'username', s.username, 'fup_level', s.fup_level,
             'rate_limit', case when s.fup_level > 0 then
                 (select t->>'rate_limit' from jsonb_array_elements(p.fup_tiers) t where (t->>'level')::int = s.fup_level limit 1)
               else coalesce(
                 (select r.value from radreply r where r.username = s.username and r.attribute = ${ATTR.rateLimit} order by r.id desc limit 1),
                 p.rate_limit)
               end)
      from subscribers s join services p on p.id = s.service_id
     where s.id = any(${ids(subscriberIds)}) and s.deleted_at is null
     order by s.id`);
}
