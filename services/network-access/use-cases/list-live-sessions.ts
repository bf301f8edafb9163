/**
 * GET /api/sessions: the open accounting sessions now, scope-filtered like the subscriber list
 * (permission subscribers.view; an admin sees every session, a reseller its tree's subscribers';
 * a `reseller_id` outside the caller's tree is 403). A session whose username no live subscriber
 * holds is the admin's only. Disconnecting goes through the subscriber's own routes.
 */
import type { Auth } from '../../../shared/auth/claims';
import { requirePermission, resellerInScope, scopeFor } from '../../../shared/auth/policy';
import { staleAfterMinutes } from '../../../shared/access/stale-sessions';
import { db, pgPool } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import { pageOf } from '../../../shared/http/context';
import type { ActionResult } from '../../../shared/http/route';
import { loadSettings } from '../../../shared/settings';
import { liveCountStatement, livePageStatement, type SessionRow } from '../session-list';
import type { LiveSessionsInput } from '../session-schemas';
import { sessionJson } from '../session-json';

export async function listLiveSessions(caller: Auth | undefined, p: LiveSessionsInput): Promise<ActionResult> {
  const auth = requirePermission(caller, 'subscribers.view');
  const scope = await scopeFor(db(), auth, 'read');
  if (p.reseller_id !== undefined && !(await resellerInScope(db(), scope, p.reseller_id))) throw fail('notAuthorized');
  const { accounting_interim_minutes: interim } = await loadSettings(db(), ['accounting_interim_minutes']);
  const filter = {
    nasId: p.nas_id,
    serviceId: p.service_id,
    resellerId: p.reseller_id,
    search: p.search,
    stale: p.stale,
    staleAfterSeconds: staleAfterMinutes(interim) * 60,
  };
  const { page, limit, offset } = pageOf(p);
  const rows = livePageStatement(scope, filter, p.sort ?? 'started_at', p.order ?? 'desc', limit, offset);
  const count = liveCountStatement(scope, filter);
  const [pageRows, counted] = await Promise.all([
    pgPool().query<SessionRow>(rows.text, rows.values),
    pgPool().query<{ n: string }>(count.text, count.values),
  ]);
  return {
    data: pageRows.rows.map((r) => ({ ...sessionJson(r), stale: r.stale ?? false })),
    stale_after_seconds: filter.staleAfterSeconds,
    pagination: { page, limit, total: Number(counted.rows[0].n) },
  };
}
