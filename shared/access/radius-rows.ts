/**
 * The FreeRADIUS rows of subscribers, written inside the caller's transaction so the database
 * never holds a subscriber whose access rows disagree with it. Everything but the password row is
 * derived from the subscriber and its plan by set-based SQL, so a bulk action over thousands of
 * ids costs a handful of statements.
 *
 * Rows per live subscriber:
 * - radcheck  NT-Password := md4(utf16le(password))   (or Cleartext-Password in cleartext mode)
 * - radcheck  Calling-Station-Id == <MAC>             when the plan binds MACs and one is bound (bound at
 *                                                      first login by radius_bind_mac(), migration 0007)
 * - radcheck  Tmp-String-1 := "bind-mac"               when the plan binds MACs and none is bound yet: the
 *                                                      one login that calls radius_bind_mac (MAC_BIND_PENDING)
 * - radcheck  Expiration := "<day after expiry> 00:00:00"  while not blocked: Session-Timeout to the
 *                                                      end of the paid time, and a refusal between
 *                                                      midnight and the sweep that blocks
 * - radcheck  Auth-Type := Reject                     while inactive (an operator's decision)
 * - radusergroup <username> -> plan_<service_id>      plan pool and rate limit (radgroupreply)
 * - radusergroup <username> -> billing_blocked        instead of the plan's groups while blocked
 * - radusergroup <username> -> plan_<id>_fup<level>   while throttled: the tier's rate (shared/fup-rate.ts)
 * - radreply  Framed-IP-Address := <static_ip>        when a static address is set
 * - radreply  Framed-IPv6-Prefix := <ipv6_prefix>     when the subscriber has one (typed in or from a pool of ours)
 * - radreply  Delegated-IPv6-Prefix := <delegated_ipv6_prefix>   likewise
 * - radreply  Mikrotik-Rate-Limit := ...              from bandwidth rules (bandwidth-rules.ts)
 */
import { sql } from 'drizzle-orm';
import { md4 } from 'hash-wasm';
import type { DbOrTx } from '../db/client';
import { radcheck } from '../db/schema';
import { writeFupMembership } from '../fup-rate';
import { ATTR, MAC_BIND_PENDING } from '../radius';
import { BLOCKED_GROUP, type BlockedReason } from '../domain/access';
import { blockedReasonSql } from './blocked';
import { queueDisconnect } from './outbox';

export const EXPIRATION = 'Expiration';
export type PasswordMode = 'nt' | 'cleartext';

/** Every password form FreeRADIUS checks: a new password replaces an imported hash as well. */
const PASSWORD_ATTRS = [
  ATTR.ntPassword,
  ATTR.cleartextPassword,
  'MD5-Password',
  'SMD5-Password',
  'SHA-Password',
  'SSHA-Password',
  'SHA2-Password',
  'SSHA2-256-Password',
  'SSHA2-512-Password',
  'Crypt-Password',
  'LM-Password',
  'User-Password',
];
/** radcheck attributes rebuilt from the subscriber row (the password row is not among them). */
const DERIVED_CHECK_ATTRS = [ATTR.callingStationId, MAC_BIND_PENDING.attribute, ATTR.authType, EXPIRATION];
/** radreply attributes rebuilt from the subscriber's addresses. */
const ADDRESS_ATTRS = [ATTR.framedIp, ATTR.framedIpv6Prefix, ATTR.delegatedIpv6Prefix];

/** NT hash: MD4 of the UTF-16LE password, upper-case hex, as FreeRADIUS's mschap module reads it. */
export async function ntHash(password: string): Promise<string> {
  return (await md4(Buffer.from(password, 'utf16le'))).toUpperCase();
}

export async function passwordCheckRow(username: string, password: string, mode: PasswordMode) {
  return mode === 'cleartext'
    ? { username, attribute: ATTR.cleartextPassword, op: ':=', value: password }
    : { username, attribute: ATTR.ntPassword, op: ':=', value: await ntHash(password) };
}

export async function writePasswordRow(
  tx: DbOrTx,
  username: string,
  password: string,
  mode: PasswordMode,
): Promise<void> {
  await tx.execute(
    sql`delete from radcheck where username = ${username} and attribute = any(${sql.param(PASSWORD_ATTRS)}::text[])`,
  );
  await tx.insert(radcheck).values(await passwordCheckRow(username, password, mode));
}

const ids = (list: number[]) => sql`${sql.param(list)}::int[]`;

/** A subscriber whose blocked state `syncAccessRows` changed. */
export interface AccessChange {
  id: number;
  username: string;
  isOnline: boolean;
  blockedReason: BlockedReason | null;
}

/**
 * Rebuilds every derived row (all but password and bandwidth) of the given live subscribers, after
 * bringing their `blocked_reason` up to date (shared/access/blocked.ts). Returns the subscribers
 * whose blocked state changed: a caller that does not disconnect anyway passes them on to
 * `kickChanged`, so a session opened under the old state ends and the next one gets the new.
 * `today` is the service's UTC date, the same one the actions compare expiry dates with.
 *
 * A blocked subscriber (docs/lifecycle.md) is in the group `billing_blocked` alone: no plan or tier
 * group and no Expiration row, so the group's rows (`writeBlockedGroup`) decide between a reject
 * and the walled garden at each Access-Request.
 */
export async function syncAccessRows(tx: DbOrTx, subscriberIds: number[], today: string): Promise<AccessChange[]> {
  if (subscriberIds.length === 0) return [];
  const changed = await tx.execute<{
    id: number;
    username: string;
    is_online: boolean;
    blocked_reason: BlockedReason | null;
  }>(sql`
    update subscribers s set blocked_reason = v.reason
      from (select s.id, ${blockedReasonSql(today)} as reason
              from subscribers s join services p on p.id = s.service_id
             where s.id = any(${ids(subscriberIds)}) and s.deleted_at is null) v
     where s.id = v.id and s.blocked_reason is distinct from v.reason
    returning s.id, s.username, s.is_online, s.blocked_reason`);
  // `= any(array(...))`, not `in (select ...)`: with a stale estimate of one matching row the
  // planner drove the subquery form through the subscribers' trigram index, 18 s per batch of 500.
  const users = sql`any(array(select username from subscribers where id = any(${ids(subscriberIds)})))`;
  await tx.execute(
    sql`delete from radcheck where username = ${users} and attribute = any(${sql.param(DERIVED_CHECK_ATTRS)}::text[])`,
  );
  await tx.execute(sql`delete from radusergroup where username = ${users}`);
  await tx.execute(
    sql`delete from radreply where username = ${users} and attribute = any(${sql.param(ADDRESS_ATTRS)}::text[])`,
  );
  await tx.execute(sql`
    insert into radcheck (username, attribute, op, value)
    select s.username, ${ATTR.callingStationId}, '==', s.mac_address
      from subscribers s join services p on p.id = s.service_id
     where s.id = any(${ids(subscriberIds)}) and s.deleted_at is null and p.mac_binding and s.mac_address is not null
    union all
    select s.username, ${MAC_BIND_PENDING.attribute}, ':=', ${MAC_BIND_PENDING.value}
      from subscribers s join services p on p.id = s.service_id
     where s.id = any(${ids(subscriberIds)}) and s.deleted_at is null and p.mac_binding and s.mac_address is null
    union all
    select s.username, ${EXPIRATION}, ':=', to_char(s.expiry_date + 1, 'Mon DD YYYY') || ' 00:00:00'
      from subscribers s
     where s.id = any(${ids(subscriberIds)}) and s.deleted_at is null and s.blocked_reason is null
    union all
    select s.username, ${ATTR.authType}, ':=', 'Reject'
      from subscribers s
     where s.id = any(${ids(subscriberIds)}) and s.deleted_at is null and s.status <> 'active'`);
  await tx.execute(sql`
    insert into radusergroup (username, groupname, priority)
    select username, case when blocked_reason is null then 'plan_' || service_id else ${BLOCKED_GROUP} end, 1
      from subscribers
     where id = any(${ids(subscriberIds)}) and deleted_at is null`);
  await writeFupMembership(tx, subscriberIds);
  await tx.execute(sql`
    insert into radreply (username, attribute, op, value)
    select username, ${ATTR.framedIp}, ':=', host(static_ip) from subscribers
     where id = any(${ids(subscriberIds)}) and deleted_at is null and static_ip is not null
    union all
    select username, ${ATTR.framedIpv6Prefix}, ':=', ipv6_prefix::text from subscribers
     where id = any(${ids(subscriberIds)}) and deleted_at is null and ipv6_prefix is not null
    union all
    select username, ${ATTR.delegatedIpv6Prefix}, ':=', delegated_ipv6_prefix::text from subscribers
     where id = any(${ids(subscriberIds)}) and deleted_at is null and delegated_ipv6_prefix is not null`);
  return changed.rows.map((r) => ({
    id: Number(r.id),
    username: r.username,
    isOnline: r.is_online,
    blockedReason: r.blocked_reason,
  }));
}

/**
 * Disconnects the online subscribers among `changes` (through the outbox, after commit), so one
 * that became blocked lands in the garden (or is refused) and one restored gets its plan again.
 */
export async function kickChanged(tx: DbOrTx, changes: AccessChange[]): Promise<void> {
  const online = changes.filter((c) => c.isOnline);
  await queueDisconnect(
    tx,
    online.filter((c) => c.blockedReason !== null),
    'blocked',
  );
  await queueDisconnect(
    tx,
    online.filter((c) => c.blockedReason === null),
    'restored',
  );
}

/** A deleted subscriber must not log in: every auth and reply row of these usernames goes. */
export async function removeAccessRows(tx: DbOrTx, usernames: string[]): Promise<void> {
  if (usernames.length === 0) return;
  const names = sql`${sql.param(usernames)}::text[]`;
  await tx.execute(sql`delete from radcheck where username = any(${names})`);
  await tx.execute(sql`delete from radreply where username = any(${names})`);
  await tx.execute(sql`delete from radusergroup where username = any(${names})`);
}

/**
 * Rename in every record that carries the username: FreeRADIUS auth, reply, group and accounting
 * rows and the subscriber's ledger rows (matched by subscriber id, so an earlier, deleted holder of
 * the same name keeps its history). The subscribers row itself is updated by the caller first, so
 * the accounting trigger finds the subscriber under its new name.
 */
export async function renameAccessRows(tx: DbOrTx, renames: { id: number; from: string; to: string }[]): Promise<void> {
  if (renames.length === 0) return;
  const from = sql.param(renames.map((r) => r.from));
  const to = sql.param(renames.map((r) => r.to));
  for (const table of ['radcheck', 'radreply', 'radusergroup', 'radacct']) {
    await tx.execute(sql`
      update ${sql.identifier(table)} t set username = m.new_name
        from unnest(${from}::text[], ${to}::text[]) as m(old_name, new_name)
       where t.username = m.old_name`);
  }
  await tx.execute(sql`
    update transactions t set username = m.new_name
      from unnest(${sql.param(renames.map((r) => r.id))}::int[], ${to}::text[]) as m(id, new_name)
     where t.subscriber_id = m.id`);
}
