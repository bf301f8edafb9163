/**
 * GET /api/subscribers/:id/sessions: a subscriber's closed sessions, newest first, with the fields
 * of the live list. Checked as the subscriber's own read: subscribers.view, 404 when it does not
 * exist, 403 outside the caller's tree.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Auth } from '../../../shared/auth/claims';
import { recordInScope, requirePermission } from '../../../shared/auth/policy';
import { db, pgPool } from '../../../shared/db/client';
import { subscribers } from '../../../shared/db/schema';
import { pageOf } from '../../../shared/http/context';
import type { ActionResult } from '../../../shared/http/route';
import { closedCountStatement, closedPageStatement, type SessionRow } from '../session-list';
import type { ClosedSessionsInput } from '../session-schemas';
import { sessionJson } from '../session-json';

export async function listClosedSessions(
  caller: Auth | undefined,
  p: ClosedSessionsInput & { id: number },
): Promise<ActionResult> {
  const auth = requirePermission(caller, 'subscribers.view');
  const [row] = await db()
    .select({
      id: subscribers.id,
      username: subscribers.username,
      usernameSince: subscribers.usernameSince,
      resellerId: subscribers.resellerId,
    })
    .from(subscribers)
    .where(and(eq(subscribers.id, p.id), isNull(subscribers.deletedAt)));
  const sub = await recordInScope(db(), auth, 'read', row, 'subscriberNotFound');
  const { page, limit, offset } = pageOf(p);
  const rows = closedPageStatement(sub, p.sort ?? 'started_at', p.order ?? 'desc', limit, offset);
  const count = closedCountStatement(sub);
  const [pageRows, counted] = await Promise.all([
    pgPool().query<SessionRow>(rows.text, rows.values),
    pgPool().query<{ n: string }>(count.text, count.values),
  ]);
  return {
    data: pageRows.rows.map((r) => ({
      ...sessionJson(r),
      stopped_at: r.stopped_at?.toISOString() ?? null,
      terminate_cause: r.terminate_cause ?? null,
    })),
    pagination: { page, limit, total: Number(counted.rows[0].n) },
  };
}
