/**
 * The statements of the session lists (docs/ledger-and-sessions.md): open `radacct` rows (live
 * sessions) and one subscriber's closed ones, each with its subscriber (by live username) and its
 * access server (`nas` row by address). A page reads the online set in the sort's order and joins
 * names to the page only; the count joins subscribers only when a filter or the scope needs them.
 */
import { ownSessionSql, type NameHolder } from '../../shared/access/session-owner';
import type { Scope } from '../../shared/auth/policy';
import { scopePathPattern } from '../../shared/auth/policy';
import type { SessionSort } from './session-schemas';

class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, '\\$&')}%`;

/** The last accounting packet of a session: its Interim-Update, or its Start when none came. */
const LAST_PACKET = 'coalesce(r.acctupdatetime, r.acctstarttime)';

/**
 * Sort keys as SQL, and whether the key grows the other way from the field (older start: longer
 * duration). The start time keeps PostgreSQL's own null order (last ascending, first descending),
 * which radacct_open_start_idx holds in both directions; the others put nulls last both ways.
 */
const SORTS: Record<SessionSort, { expr: string; reversed?: boolean; indexed?: boolean }> = {
  started_at: { expr: 'r.acctstarttime', indexed: true },
  duration: { expr: 'r.acctstarttime', reversed: true, indexed: true },
  username: { expr: 'r.username' },
  subscriber_id: { expr: 's.id' },
  nas: { expr: 'n.shortname' },
  framed_ip: { expr: 'r.framedipaddress' },
  mac: { expr: 'r.callingstationid' },
  bytes_in: { expr: 'r.acctinputoctets' },
  bytes_out: { expr: 'r.acctoutputoctets' },
  interim_age: { expr: LAST_PACKET, reversed: true },
};

/** Closed sessions last as long as their own record says, not as their start's order. */
const CLOSED_DURATION = 'coalesce(r.acctsessiontime, extract(epoch from r.acctstoptime - r.acctstarttime))';

export interface SessionRow {
  id: string;
  subscriber_id: number | null;
  username: string | null;
  service_id: number | null;
  reseller_id: number | null;
  nas_id: number | null;
  nas_name: string | null;
  nas_ip: string;
  framed_ip: string | null;
  mac: string | null;
  started_at: Date | null;
  duration: string | null;
  bytes_in: string;
  bytes_out: string;
  last_update_at: Date | null;
  interim_age: string | null;
  stale?: boolean;
  stopped_at?: Date | null;
  terminate_cause?: string | null;
}

export interface Statement {
  text: string;
  values: unknown[];
}

/** The session's subscriber: the live holder of its name, when it held the name as the session started. */
const SUBSCRIBER_JOIN = `left join subscribers s on s.username = r.username and s.deleted_at is null and ${ownSessionSql('r', 's')}`;
const NAS_JOIN = 'left join nas n on n.nasname = host(r.nasipaddress)';

/** The fields both lists show; `at` is the moment durations and ages run to (now, or the stop). */
function columns(at: string, duration: string): string {
  return `r.radacctid as id, s.id as subscriber_id, r.username, s.service_id, s.reseller_id,
    n.id as nas_id, n.shortname as nas_name, host(r.nasipaddress) as nas_ip, host(r.framedipaddress) as framed_ip,
    r.callingstationid as mac, r.acctstarttime as started_at, (${duration})::bigint as duration,
    coalesce(r.acctinputoctets, 0) as bytes_in, coalesce(r.acctoutputoctets, 0) as bytes_out,
    r.acctupdatetime as last_update_at, extract(epoch from ${at} - ${LAST_PACKET})::bigint as interim_age`;
}

function orderBy(sort: SessionSort, order: 'asc' | 'desc', closed: boolean): string {
  const key = closed && sort === 'duration' ? { expr: CLOSED_DURATION } : SORTS[sort];
  const up = (order === 'asc') !== (key.reversed ?? false);
  const dir = up ? 'asc' : 'desc';
  return `order by ${key.expr} ${dir}${'indexed' in key ? '' : ' nulls last'}, r.radacctid ${dir}`;
}

export interface LiveFilter {
  nasId?: number;
  serviceId?: number;
  /** Checked against the caller's scope by the use case. */
  resellerId?: number;
  search?: string;
  stale?: boolean;
  staleAfterSeconds: number;
}

/** Conditions on open sessions, and whether they need the subscriber row `s`. */
function liveConditions(scope: Scope, f: LiveFilter, p: Params): { conds: string[]; needsSubscriber: boolean } {
  const conds = ['r.acctstoptime is null'];
  let needsSubscriber = false;
  if (f.nasId !== undefined)
    conds.push(`host(r.nasipaddress) = (select nasname from nas where id = ${p.add(f.nasId)})`);
  if (f.serviceId !== undefined) {
    conds.push(`s.service_id = ${p.add(f.serviceId)}`);
    needsSubscriber = true;
  }
  if (f.resellerId !== undefined) {
    conds.push(`s.reseller_id = ${p.add(f.resellerId)}`);
    needsSubscriber = true;
  } else if (scope.kind === 'tree') {
    conds.push(`s.reseller_id in (select id from resellers where path like ${p.add(scopePathPattern(scope))})`);
    needsSubscriber = true;
  }
  if (f.search !== undefined) {
    const pattern = p.add(likePattern(f.search));
    conds.push(
      `(r.username ilike ${pattern} or host(r.framedipaddress) like ${pattern} or r.callingstationid ilike ${pattern})`,
    );
  }
  if (f.stale !== undefined)
    conds.push(
      // A session with no start or update time is not stale, as its row says (coalesce), not neither.
      `${f.stale ? '' : 'not '}coalesce(${LAST_PACKET} < now() - make_interval(secs => ${p.add(f.staleAfterSeconds)}), false)`,
    );
  return { conds, needsSubscriber };
}

export function livePageStatement(
  scope: Scope,
  f: LiveFilter,
  sort: SessionSort,
  order: 'asc' | 'desc',
  limit: number,
  offset: number,
): Statement {
  const p = new Params();
  const { conds, needsSubscriber } = liveConditions(scope, f, p);
  const stale = `${LAST_PACKET} < now() - make_interval(secs => ${p.add(f.staleAfterSeconds)})`;
  const select = `select ${columns('now()', 'extract(epoch from now() - r.acctstarttime)')}, coalesce(${stale}, false) as stale`;
  const orderSql = orderBy(sort, order, false);
  const page = `limit ${p.add(limit)} offset ${p.add(offset)}`;
  // Sorted by radacct's own columns with no filter on the subscriber: the page is cut from radacct
  // alone and only its rows are joined (a sort by bytes joined every open session first).
  const text =
    needsSubscriber || sort === 'subscriber_id' || sort === 'nas'
      ? `${select} from radacct r ${SUBSCRIBER_JOIN} ${NAS_JOIN} where ${conds.join(' and ')} ${orderSql} ${page}`
      : `${select} from (select * from radacct r where ${conds.join(' and ')} ${orderSql} ${page}) r
          ${SUBSCRIBER_JOIN} ${NAS_JOIN} ${orderSql}`;
  return { text, values: p.values };
}

/**
 * The count of the open sessions the filter matches. A tree's or a reseller's with no other filter
 * is session_hours' open count (migration 0054: per reseller of the session's live subscriber, the
 * list's own scoping rule, kept in radacct's writing transactions) plus the open sessions without a
 * start time, which it leaves out: not every open session joined to its subscriber (a second at
 * 100,000 open sessions).
 */
export function liveCountStatement(scope: Scope, f: LiveFilter): Statement {
  const p = new Params();
  const { conds, needsSubscriber } = liveConditions(scope, f, p);
  const onlyScoped =
    f.nasId === undefined && f.serviceId === undefined && f.search === undefined && f.stale === undefined;
  if (onlyScoped && needsSubscriber) {
    const resellers =
      f.resellerId !== undefined
        ? `reseller_id = ${p.add(f.resellerId)}`
        : `reseller_id in (select id from resellers where path like ${p.add(scopePathPattern(scope))})`;
    return {
      text: `select (select coalesce(sum(starts), 0) from session_hours where hour = '-infinity' and ${resellers})
                  + (select count(*) from radacct r ${SUBSCRIBER_JOIN} where ${conds.join(' and ')} and r.acctstarttime is null) as n`,
      values: p.values,
    };
  }
  return {
    text: `select count(*) as n from radacct r ${needsSubscriber ? SUBSCRIBER_JOIN : ''} where ${conds.join(' and ')}`,
    values: p.values,
  };
}

/** The closed sessions under a holder's name that are its own (radacct_username_start_idx). */
function closedOf(holder: NameHolder, p: Params): string {
  const since = p.add(holder.usernameSince);
  return `r.username = ${p.add(holder.username)} and r.acctstoptime is not null
    and (${since}::timestamptz is null or r.acctstarttime >= ${since})`;
}

/** One subscriber's closed sessions. */
export function closedPageStatement(
  holder: NameHolder,
  sort: SessionSort,
  order: 'asc' | 'desc',
  limit: number,
  offset: number,
): Statement {
  const p = new Params();
  const text = `select ${columns('r.acctstoptime', CLOSED_DURATION)}, r.acctstoptime as stopped_at, r.acctterminatecause as terminate_cause
    from radacct r ${SUBSCRIBER_JOIN} ${NAS_JOIN}
    where ${closedOf(holder, p)}
    ${orderBy(sort, order, true)} limit ${p.add(limit)} offset ${p.add(offset)}`;
  return { text, values: p.values };
}

export function closedCountStatement(holder: NameHolder): Statement {
  const p = new Params();
  return { text: `select count(*) as n from radacct r where ${closedOf(holder, p)}`, values: p.values };
}
