/**
 * Names shared with FreeRADIUS: each plan is a RADIUS group whose reply attributes carry the
 * plan's pool and rate limit, so changing a plan changes every subscriber on it at next login.
 */
import { eq } from 'drizzle-orm';
import type { DbOrTx } from './db/client';
import { radgroupreply } from './db/schema';

export const planGroup = (serviceId: number) => `plan_${serviceId}`;

export const ATTR = {
  framedPool: 'Framed-Pool',
  rateLimit: 'Mikrotik-Rate-Limit',
  framedIp: 'Framed-IP-Address',
  ntPassword: 'NT-Password',
  cleartextPassword: 'Cleartext-Password',
  callingStationId: 'Calling-Station-Id',
  authType: 'Auth-Type',
} as const;

/**
 * Group replies use `=` (add only when absent): FreeRADIUS applies the user's radreply first, so
 * a subscriber's own rate limit or static address wins over the plan's defaults.
 */
export async function writePlanGroupReply(
  tx: DbOrTx,
  serviceId: number,
  plan: { poolName: string | null; rateLimit: string | null },
): Promise<void> {
  const group = planGroup(serviceId);
  await tx.delete(radgroupreply).where(eq(radgroupreply.groupname, group));
  const rows = [
    plan.poolName ? { groupname: group, attribute: ATTR.framedPool, op: '=', value: plan.poolName } : undefined,
    plan.rateLimit ? { groupname: group, attribute: ATTR.rateLimit, op: '=', value: plan.rateLimit } : undefined,
  ].filter((r) => r !== undefined);
  if (rows.length) await tx.insert(radgroupreply).values(rows);
}
