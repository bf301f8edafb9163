/**
 * Reconciliation of accounting with a router (MikroTik API): the router's `/ppp/active` is what is
 * really online on it; the open `radacct` rows of its address are what we believe.
 * - a **ghost** is open in accounting and absent on the router (its Stop was lost): closed as
 *   `Lost-Service`, stop time the last time accounting heard of it;
 * - a session that **should not exist** is on the router and either absent from accounting
 *   (`not_in_accounting`, only once it is older than the grace: its Accounting-Start may be in
 *   flight), or of a subscriber who is deleted or unknown (`deleted`), `inactive`, or blocked while
 *   `blocked_access` is `reject` (`blocked`; in `walled_garden` mode a blocked subscriber belongs
 *   online, in the garden): removed through the API (`/ppp/active/remove`).
 * `dry_run` reports the same lists and changes nothing. Each mismatch found counts in
 * `session_mismatch_total{nas,kind}`.
 */
import net from 'node:net';
import client from 'prom-client';
import { sql } from 'drizzle-orm';
import { closedAtLastHeard } from '../../shared/access/stale-sessions';
import { rollupUsage } from '../../shared/access/usage-rollup';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import { registry } from '../../shared/metrics';
import { loadSettings } from '../../shared/settings';
import { RouterOsError, type RouterOsClient, type RouterOsTarget } from './routeros/client';
import { DEFAULT_VENDOR, type Vendor } from '../../shared/vendors/profiles';
import { apiTarget, nasPorts, type NasAccess } from './sessions';

export const GHOST_CAUSE = 'Lost-Service';
/** A router session younger than this and absent from accounting is left alone: its Start may be on its way. */
export const RECONCILE_GRACE_SECONDS = 120;

export type MismatchKind = 'ghost' | 'not_in_accounting' | 'deleted' | 'inactive' | 'blocked';

const mismatches =
  (registry.getSingleMetric('session_mismatch_total') as client.Counter<'nas' | 'kind'> | undefined) ??
  new client.Counter({
    name: 'session_mismatch_total',
    help: 'Sessions where accounting and the router disagree, found by reconciliation, by access server and kind',
    labelNames: ['nas', 'kind'] as const,
    registers: [registry],
  });

export interface GhostSession {
  username: string | null;
  session_id: string;
  ip_address: string | null;
  started_at: string | null;
  last_update_at: string | null;
  closed: boolean;
}

export interface UnwantedSession {
  username: string;
  address: string | null;
  router_id: string;
  uptime_seconds: number | null;
  reason: Exclude<MismatchKind, 'ghost'>;
  subscriber_id: number | null;
  removed: boolean;
  detail: string | null;
}

export interface ReconcileReport {
  nas: { id: number; name: string; ip_address: string };
  dry_run: boolean;
  router_sessions: number;
  open_sessions: number;
  ghosts: GhostSession[];
  unwanted: UnwantedSession[];
}

/** RouterOS durations as the API prints them: `1w2d3h4m5s`, `3h4m5s`, `00:04:05`, `2d03:04:05`. */
export function parseUptime(text: string | undefined): number | null {
  if (!text) return null;
  let rest = text.trim();
  let total = 0;
  const clock = /(\d+):(\d{2}):(\d{2})$/.exec(rest);
  if (clock) {
    total += Number(clock[1]) * 3600 + Number(clock[2]) * 60 + Number(clock[3]);
    rest = rest.slice(0, clock.index);
  }
  const unit: Record<string, number> = { w: 604_800, d: 86_400, h: 3600, m: 60, s: 1 };
  const re = /(\d+)(ms|[wdhms])/gy;
  let m: RegExpExecArray | null;
  let read = 0;
  while ((m = re.exec(rest))) {
    if (m[2] !== 'ms') total += Number(m[1]) * unit[m[2]];
    read = re.lastIndex;
  }
  if (read !== rest.length) return null;
  return total;
}

interface NasRow extends Record<string, unknown> {
  id: number;
  shortname: string | null;
  nasname: string;
  secret: string;
  coa_port: number | null;
  api_port: number | null;
  api_username: string | null;
  api_password_enc: string | null;
  vendor: Vendor;
}

export async function loadNas(id: number): Promise<NasAccess> {
  const { rows } = await db().execute<NasRow>(sql`
    select id, shortname, nasname, secret, coa_port, api_port, api_username, api_password_enc, vendor from nas where id = ${id}`);
  const r = rows[0];
  if (!r) throw fail('nasNotFound');
  return {
    id: r.id,
    name: r.shortname ?? r.nasname,
    ip: r.nasname,
    secret: r.secret,
    vendor: r.vendor,
    ...nasPorts(r),
  };
}

interface OpenRow extends Record<string, unknown> {
  radacctid: string;
  username: string | null;
  acctsessionid: string;
  ip: string | null;
  started: Date | null;
  updated: Date | null;
}

interface SubscriberRow extends Record<string, unknown> {
  id: number;
  username: string;
  status: string;
  blocked_reason: string | null;
  deleted_at: Date | null;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** Compares one NAS with its router and, unless `dryRun`, acts on the differences. */
export async function reconcileNas(routeros: RouterOsClient, nasId: number, dryRun: boolean): Promise<ReconcileReport> {
  const nas = await loadNas(nasId);
  const target: RouterOsTarget | null = apiTarget(nas);
  if (!target) throw fail('nasWithoutApi', nas.name);
  if (!net.isIP(nas.ip)) throw fail('nasNotRegistered', nas.ip);

  // Accounting first, then the router: a session that starts in between is on the router and
  // maybe not in what we read (not_in_accounting, but young: the grace keeps it); one that ends in
  // between is in what we read and not on the router (a ghost, closed a moment before its Stop,
  // whose fallback insert then conflicts and does nothing).
  const open = (
    await db().execute<OpenRow>(sql`
      select radacctid, username, acctsessionid,
             coalesce(host(framedipaddress), host(framedipv6address), text(framedipv6prefix), text(delegatedipv6prefix)) as ip,
             acctstarttime as started,
             acctupdatetime as updated
        from radacct
       where acctstoptime is null and nasipaddress = ${nas.ip}::inet
       order by radacctid`)
  ).rows;
  const routerRows = await routeros
    .run(target, '/ppp/active/print', ['=.proplist=.id,name,address,uptime'])
    .catch((err: unknown) => {
      if (err instanceof RouterOsError) throw fail('routerApiFailed', err.kind, err.message);
      throw err;
    });
  const onRouter = routerRows
    .filter((r) => r.name)
    .map((r) => ({
      id: r['.id'],
      name: r.name,
      address: r.address || null,
      uptime: parseUptime(r.uptime),
    }));

  const routerNames = new Set(onRouter.map((r) => r.name));
  const accountingNames = new Set(open.map((o) => o.username).filter((n): n is string => !!n));
  const ghostsRows = open.filter((o) => !o.username || !routerNames.has(o.username));

  const names = [...routerNames];
  const subs = names.length
    ? (
        await db().execute<SubscriberRow>(sql`
          select distinct on (username) id, username, status, blocked_reason, deleted_at
            from subscribers where username = any(${sql.param(names)}::text[])
           order by username, deleted_at desc nulls first, id desc`)
      ).rows
    : [];
  const byName = new Map(subs.map((s) => [s.username, s]));
  const { blocked_access: blockedAccess } = await loadSettings(db(), ['blocked_access']);

  const unwanted: UnwantedSession[] = [];
  for (const r of onRouter) {
    const sub = byName.get(r.name);
    let reason: UnwantedSession['reason'] | undefined;
    if (!sub || sub.deleted_at) reason = 'deleted';
    else if (sub.status === 'inactive') reason = 'inactive';
    else if (sub.blocked_reason && blockedAccess === 'reject') reason = 'blocked';
    else if (!accountingNames.has(r.name) && (r.uptime === null || r.uptime >= RECONCILE_GRACE_SECONDS))
      reason = 'not_in_accounting';
    if (!reason) continue;
    unwanted.push({
      username: r.name,
      address: r.address,
      router_id: r.id,
      uptime_seconds: r.uptime,
      reason,
      subscriber_id: sub && !sub.deleted_at ? sub.id : null,
      removed: false,
      detail: null,
    });
  }

  let closedIds = new Set<number>();
  if (!dryRun && ghostsRows.length > 0) {
    const { rows } = await db().execute<{ radacctid: string }>(sql`
      update radacct
         set ${closedAtLastHeard(GHOST_CAUSE)}
       where radacctid = any(${sql.param(ghostsRows.map((g) => Number(g.radacctid)))}::bigint[])
         and acctstoptime is null
      returning radacctid`);
    closedIds = new Set(rows.map((r) => Number(r.radacctid)));
    // The ghosts' subscribers go offline now, not at the next rollup tick: the report says so.
    await rollupUsage(db());
  }
  if (!dryRun) {
    await Promise.all(
      unwanted.map(async (u) => {
        try {
          await routeros.run(target, '/ppp/active/remove', [`=.id=${u.router_id}`]);
          u.removed = true;
        } catch (err) {
          if (err instanceof RouterOsError && err.kind === 'trap' && /no such item/.test(err.message))
            u.detail = 'gone from the router before the removal';
          else u.detail = err instanceof Error ? err.message : String(err);
        }
      }),
    );
  }

  const label = nas.name;
  if (ghostsRows.length) mismatches.inc({ nas: label, kind: 'ghost' }, ghostsRows.length);
  for (const u of unwanted) mismatches.inc({ nas: label, kind: u.reason });

  return {
    nas: { id: nas.id, name: nas.name, ip_address: nas.ip },
    dry_run: dryRun,
    router_sessions: onRouter.length,
    open_sessions: open.length,
    ghosts: ghostsRows.map((g) => ({
      username: g.username,
      session_id: g.acctsessionid,
      ip_address: g.ip,
      started_at: iso(g.started),
      last_update_at: iso(g.updated),
      closed: closedIds.has(Number(g.radacctid)),
    })),
    unwanted,
  };
}

/** MikroTik access servers with API credentials (the periodic run's list: the API is RouterOS's). */
export async function reconcilableNas(): Promise<number[]> {
  const { rows } = await db().execute<{ id: number }>(sql`
    select id from nas
     where api_username is not null and api_password_enc is not null and vendor = ${DEFAULT_VENDOR}
     order by id`);
  return rows.map((r) => r.id);
}
