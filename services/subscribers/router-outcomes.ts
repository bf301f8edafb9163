/**
 * What the routers answered (issue 39): a bulk deactivation reported "50 succeeded" while the
 * subscribers stayed online, because a job's success is the database change and the disconnect
 * comes after commit (the outbox). These read network-access's `coa_outcomes` rows back: a
 * subscriber's last router action, and a bulk job's router outcomes (its subscribers' latest
 * disconnect since the job started: ok, failed, or not answered yet).
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../shared/db/client';
import { isoTimestamp } from '../../shared/http/schemas';

/** Outcomes where the session is gone (or was never there); `failed` and `rejected` leave it online. */
const GONE = ['disconnected', 'kicked', 'offline'];
/** Bulk actions that disconnect every subscriber they change (operations.ts queues a disconnect). */
const DISCONNECTING = new Set([
  'disable',
  'disconnect',
  'renew',
  'set_service',
  'set_static_ip',
  'set_static_ipv6',
  'delete',
]);

export interface LastRouterAction {
  action: string;
  outcome: string;
  reason: string | null;
  at: string | null;
}

export async function lastRouterAction(db: DbOrTx, subscriberId: number): Promise<LastRouterAction | null> {
  const { rows } = await db.execute<{ action: string; outcome: string; reason: string | null; created_at: Date }>(sql`
    select action, outcome, reason, created_at from coa_outcomes
     where subscriber_id = ${subscriberId} order by created_at desc, id desc limit 1`);
  const r = rows[0];
  return r
    ? { action: r.action, outcome: r.outcome, reason: r.reason, at: isoTimestamp(new Date(r.created_at)) }
    : null;
}

export interface RouterOutcomes {
  /** Sessions gone: disconnected, kicked, or the subscriber was offline. */
  ok: number;
  /** The router refused or never answered: the subscriber may still be online. */
  failed: number;
  /** Changed by the job, no router answer recorded yet. */
  pending: number;
  by_outcome: Record<string, number>;
}

/** The router outcomes of a bulk job that disconnects, or null for one that does not. */
export async function jobRouterOutcomes(
  db: DbOrTx,
  job: { action: string; succeeded: number[]; createdAt: Date },
): Promise<RouterOutcomes | null> {
  if (!DISCONNECTING.has(job.action)) return null;
  const { rows } = await db.execute<{ outcome: string; n: number }>(sql`
    select outcome, count(*)::int as n from (
      select distinct on (subscriber_id) subscriber_id, outcome from coa_outcomes
       where subscriber_id = any(${sql.param(job.succeeded)}::int[]) and action = 'disconnect'
         and created_at >= ${job.createdAt.toISOString()}::timestamptz
       order by subscriber_id, created_at desc, id desc) latest
    group by outcome`);
  const byOutcome = Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
  const answered = rows.reduce((sum, r) => sum + Number(r.n), 0);
  const ok = rows.filter((r) => GONE.includes(r.outcome)).reduce((sum, r) => sum + Number(r.n), 0);
  return { ok, failed: answered - ok, pending: job.succeeded.length - answered, by_outcome: byOutcome };
}
