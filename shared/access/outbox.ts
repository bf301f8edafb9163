/**
 * Router side effects of subscriber changes, written to the outbox in the caller's transaction
 * (ARCHITECTURE section 5): network-access turns each row into a CoA Disconnect-Request after
 * commit. One event for every case; a PPPoE client redials at once, so a disconnect is also how a
 * renewal, a new plan or a new static address takes effect ("disconnect and reconnect").
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';

export const DISCONNECT_EVENT = 'subscriber.disconnect';

export type DisconnectReason =
  | 'renew'
  | 'disable'
  | 'delete'
  | 'service_change'
  | 'static_ip'
  | 'ipv6_prefix'
  | 'rename'
  | 'disconnect'
  | 'bandwidth_rules'
  | 'blocked'
  | 'restored';

/** `username` is the name the live session runs under (the old one for a rename). */
export async function queueDisconnect(
  tx: DbOrTx,
  targets: { id: number; username: string }[],
  reason: DisconnectReason,
): Promise<void> {
  if (targets.length === 0) return;
  await tx.execute(sql`
    insert into outbox (event, payload)
    select ${DISCONNECT_EVENT}, jsonb_build_object('subscriber_id', t.id, 'username', t.username, 'reason', ${reason}::text)
      from unnest(${sql.param(targets.map((t) => t.id))}::int[], ${sql.param(targets.map((t) => t.username))}::text[]) as t(id, username)`);
}
