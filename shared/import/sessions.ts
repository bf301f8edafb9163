/**
 * Accounting history of an import (docs/import.md, "Sessions"): the source's sessions go into
 * `radacct` as they were, closed ones as history and open ones as live sessions, in chunks of one
 * statement each (millions of rows never sit in memory). The insert triggers are skipped for the
 * import's transactions (migration 0043); what they would have done row by row is done in sets
 * instead: each chunk adds its octets to `daily_usage` per subscriber and UTC day, open sessions
 * get their `usage_seen` row (later interims count from the imported totals), and at the end the
 * month's and the day's counters are rebuilt from `daily_usage` and the session state of
 * subscribers with open sessions is recomputed. An open session's last update is set to the time of
 * the import, so the stale-session rule counts from the move, not from an interim heard before it.
 * Sessions are matched by `acctuniqueid`: a second run inserts nothing and finds each one there.
 */
import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../db/client';
import { prof } from './profile';

/** One session as FreeRADIUS's radacct holds it; times as epoch seconds (UTC), octets as decimal text. */
export interface ImportSession {
  uniqueId: string;
  sessionId: string;
  username: string;
  realm: string | null;
  nasIp: string;
  nasPortId: string | null;
  nasPortType: string | null;
  start: number | null;
  update: number | null;
  stop: number | null;
  interval: number | null;
  sessionTime: number | null;
  authentic: string | null;
  connectInfoStart: string | null;
  connectInfoStop: string | null;
  input: string;
  output: string;
  calledStationId: string | null;
  callingStationId: string | null;
  terminateCause: string | null;
  serviceType: string | null;
  framedProtocol: string | null;
  framedIp: string | null;
  framedIpv6Address: string | null;
  framedIpv6Prefix: string | null;
  framedInterfaceId: string | null;
  delegatedIpv6Prefix: string | null;
  class: string | null;
  /** Why the source's row is no session (a CSV row with no start time), else undefined. */
  invalid?: string;
}

/** The source's sessions in chunks, oldest first; reading starts when iterated. */
export interface SessionReader {
  chunks(size: number): AsyncIterable<ImportSession[]>;
}

/** Sessions and octets of one month (UTC, of the session's start; `unknown` without a start). */
export interface MonthCount {
  sessions: number;
  octets: bigint;
}

export interface SessionMonth {
  month: string;
  source: { sessions: number; octets: string };
  notImported: { sessions: number; octets: string };
  /** What our radacct holds of the source's sessions (imported now or by an earlier run). */
  ours: { sessions: number; octets: string };
  difference: { sessions: number; octets: string };
}

export interface SessionTotals {
  read: number;
  imported: number;
  unchanged: number;
  skipped: number;
  months: SessionMonth[];
  reconciled: boolean;
}

export interface SessionContext {
  dryRun: boolean;
  /** Usernames of the subscribers this run accepted (imported now or earlier from this source). */
  accepted: Set<string>;
  /** Usernames the source lists at all (to tell a skipped subscriber from an unknown one). */
  listed: Set<string>;
  /** A skipped session's reason, counted per username (the report lists usernames, not sessions). */
  skip: (username: string, reason: string) => void;
  chunkSize?: number;
  progress?: (message: string) => void;
  /** UTC date the day's counter is rebuilt for (default today). */
  today?: string;
  /**
   * Epoch seconds of the accounting retention's cutoff (`accounting_retention_months`), or null: a
   * closed session that started and stopped before it is not imported, as the usage run's purge
   * would delete it at once.
   */
  retainedFrom: number | null;
}

const month = (epoch: number | null) => (epoch === null ? 'unknown' : new Date(epoch * 1000).toISOString().slice(0, 7));
const octets = (s: ImportSession) => BigInt(s.input) + BigInt(s.output);

class Months {
  readonly byMonth = new Map<string, MonthCount>();
  add(m: string, sessions: number, o: bigint): void {
    const c = this.byMonth.get(m) ?? { sessions: 0, octets: 0n };
    c.sessions += sessions;
    c.octets += o;
    this.byMonth.set(m, c);
  }
  get(m: string): MonthCount {
    return this.byMonth.get(m) ?? { sessions: 0, octets: 0n };
  }
}

/** Writes (or, dry, counts) every session of the source and reconciles them per month. */
export async function importSessions(db: Db, reader: SessionReader, ctx: SessionContext): Promise<SessionTotals> {
  const source = new Months();
  const skipped = new Months();
  const ours = new Months();
  const totals = { read: 0, imported: 0, unchanged: 0, skipped: 0 };
  const withUsage = new Set<string>();
  const withOpen = new Set<string>();
  const now = Date.now() / 1000;
  for await (const chunk of readAhead(reader.chunks(ctx.chunkSize ?? 20_000))) {
    const take: ImportSession[] = [];
    const uids = new Set<string>();
    for (const s of chunk) {
      totals.read++;
      const m = month(s.start);
      source.add(m, 1, octets(s));
      const reason = s.invalid
        ? s.invalid.split(': ')[0]
        : !s.uniqueId
          ? 'no unique id'
          : uids.has(s.uniqueId)
            ? 'duplicate unique id in the source'
            : ctx.retainedFrom !== null &&
                s.stop !== null &&
                s.stop < ctx.retainedFrom &&
                (s.start ?? 0) < ctx.retainedFrom
              ? 'ended before the accounting retention (accounting_retention_months)'
              : !ctx.accepted.has(s.username)
                ? ctx.listed.has(s.username)
                  ? 'its subscriber is not imported'
                  : 'unknown subscriber'
                : null;
      if (reason) {
        totals.skipped++;
        skipped.add(m, 1, octets(s));
        ctx.skip(s.username, reason);
        continue;
      }
      uids.add(s.uniqueId);
      take.push(s);
    }
    if (!take.length) continue;
    const rows = await prof('sessions:statement', () =>
      ctx.dryRun ? countChunk(db, take) : db.transaction((tx) => writeChunk(tx, take, now)),
    );
    const inserted = rows.reduce((n, r) => n + (r.kind === 'imported' ? r.sessions : 0), 0);
    // Sessions already here (a second run, a resumed one): what our rows hold of them.
    if (!ctx.dryRun && inserted < take.length) rows.push(...(await countChunk(db, take)));
    for (const r of rows) {
      ours.add(r.month, r.sessions, BigInt(r.octets));
      if (r.kind === 'imported') totals.imported += r.sessions;
      else totals.unchanged += r.sessions;
      for (const u of r.users ?? []) withUsage.add(u);
      for (const u of r.open_users ?? []) withOpen.add(u);
    }
    if (ctx.dryRun) {
      // What a real run would insert: every session taken that is not there yet.
      const there = rows.reduce((n, r) => n + r.sessions, 0);
      totals.imported += take.length - there;
      const present = new Set(rows.flatMap((r) => r.uids ?? []));
      for (const s of take) if (!present.has(s.uniqueId)) ours.add(month(s.start), 1, octets(s));
    }
    ctx.progress?.(`sessions read ${totals.read}: ${totals.imported} to import, ${totals.unchanged} already here`);
  }
  if (!ctx.dryRun && (withUsage.size || withOpen.size)) {
    await db.transaction((tx) => settleSubscribers(tx, [...withUsage], [...withOpen], ctx.today));
  }
  const months = [...new Set([...source.byMonth.keys(), ...ours.byMonth.keys()])].sort().map((m) => {
    const s = source.get(m);
    const k = skipped.get(m);
    const o = ours.get(m);
    return {
      month: m,
      source: { sessions: s.sessions, octets: String(s.octets) },
      notImported: { sessions: k.sessions, octets: String(k.octets) },
      ours: { sessions: o.sessions, octets: String(o.octets) },
      difference: { sessions: s.sessions - k.sessions - o.sessions, octets: String(s.octets - k.octets - o.octets) },
    };
  });
  return {
    ...totals,
    months,
    reconciled: months.every((m) => m.difference.sessions === 0 && m.difference.octets === '0'),
  };
}

/** The next chunk is read from the source while this one is written. */
async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  const read = () => prof('sessions:read', () => it.next());
  let next = read();
  try {
    for (;;) {
      const r = await next;
      if (r.done) return;
      next = read();
      // A write that fails leaves this read pending: its own failure is not the one to report.
      next.catch(() => undefined);
      yield r.value;
    }
  } finally {
    await next.catch(() => undefined);
    await it.return?.(undefined);
  }
}

type ChunkRow = {
  kind: 'imported' | 'unchanged';
  month: string;
  sessions: number;
  octets: string;
  users: string[] | null;
  open_users: string[] | null;
  uids?: string[] | null;
};

const text = (xs: (string | null)[]) => sql.param(xs);
const num = (xs: (number | null)[]) => sql.param(xs);
const MONTH_OF = sql`coalesce(to_char(acctstarttime at time zone 'UTC', 'YYYY-MM'), 'unknown')`;
const OCTETS_OF = sql`coalesce(acctinputoctets, 0) + coalesce(acctoutputoctets, 0)`;

/**
 * The sessions already in radacct, per month, with their ids (a dry run writes nothing). A join,
 * not `= any(...)`: the planner took that for a scan of the whole table.
 */
async function countChunk(db: Db, take: ImportSession[]): Promise<ChunkRow[]> {
  const { rows } = await db.execute<ChunkRow>(sql`
    select 'unchanged' as kind, ${MONTH_OF} as month, count(*)::int as sessions, sum(${OCTETS_OF})::text as octets,
           null as users, null as open_users, array_agg(acctuniqueid) as uids
      from unnest(${text(take.map((s) => s.uniqueId))}::text[]) as u(uid) join radacct on acctuniqueid = u.uid
     group by 2`);
  return rows;
}

/**
 * One chunk in one statement: the insert (a session already there is left alone), its octets into
 * daily_usage, open sessions' usage_seen rows, and per month what was inserted.
 */
async function writeChunk(tx: Tx, take: ImportSession[], now: number): Promise<ChunkRow[]> {
  await tx.execute(sql`set local isp_billing.importing = 'on'`);
  const col = <K extends keyof ImportSession>(k: K) => take.map((s) => s[k]);
  const { rows } = await tx.execute<ChunkRow>(sql`
    with v as (
      select * from unnest(
        ${text(col('sessionId'))}::text[], ${text(col('uniqueId'))}::text[], ${text(col('username'))}::text[],
        ${text(col('realm'))}::text[], ${text(col('nasIp'))}::inet[], ${text(col('nasPortId'))}::text[],
        ${text(col('nasPortType'))}::text[], ${num(col('start'))}::float8[], ${num(col('update'))}::float8[],
        ${num(col('stop'))}::float8[], ${num(col('interval'))}::bigint[], ${num(col('sessionTime'))}::bigint[],
        ${text(col('authentic'))}::text[], ${text(col('connectInfoStart'))}::text[],
        ${text(col('connectInfoStop'))}::text[], ${text(col('input'))}::bigint[], ${text(col('output'))}::bigint[],
        ${text(col('calledStationId'))}::text[], ${text(col('callingStationId'))}::text[],
        ${text(col('terminateCause'))}::text[], ${text(col('serviceType'))}::text[],
        ${text(col('framedProtocol'))}::text[], ${text(col('framedIp'))}::inet[],
        ${text(col('framedIpv6Address'))}::inet[], ${text(col('framedIpv6Prefix'))}::inet[],
        ${text(col('framedInterfaceId'))}::text[], ${text(col('delegatedIpv6Prefix'))}::inet[],
        ${text(col('class'))}::text[])
        as v(sid, uid, username, realm, nas, port_id, port_type, start_s, update_s, stop_s, intv, stime, authentic,
             ci_start, ci_stop, input, output, called, calling, cause, service, proto, ip, ip6, ip6_prefix, iface,
             delegated, class)
    ),
    ins as (
      insert into radacct (acctsessionid, acctuniqueid, username, realm, nasipaddress, nasportid, nasporttype,
                           acctstarttime, acctupdatetime, acctstoptime, acctinterval, acctsessiontime, acctauthentic,
                           connectinfo_start, connectinfo_stop, acctinputoctets, acctoutputoctets, calledstationid,
                           callingstationid, acctterminatecause, servicetype, framedprotocol, framedipaddress,
                           framedipv6address, framedipv6prefix, framedinterfaceid, delegatedipv6prefix, class)
      select sid, uid, username, realm, nas, port_id, port_type, to_timestamp(start_s),
             case when stop_s is null then to_timestamp(${now}::float8) else to_timestamp(update_s) end,
             to_timestamp(stop_s), intv, stime, authentic, ci_start, ci_stop, input, output, called, calling, cause,
             service, proto, ip, ip6, ip6_prefix, iface, delegated, class
        from v
      on conflict (acctuniqueid) do nothing
      returning radacctid, username, acctstarttime, acctstoptime, acctinputoctets, acctoutputoctets
    ),
    per_day as (
      select s.id, (coalesce(i.acctstoptime, i.acctstarttime, to_timestamp(${now}::float8)) at time zone 'UTC')::date as day,
             sum(coalesce(i.acctoutputoctets, 0)) as download, sum(coalesce(i.acctinputoctets, 0)) as upload
        from ins i join subscribers s on s.username = i.username and s.deleted_at is null
       group by 1, 2
    ),
    daily as (
      insert into daily_usage as d (subscriber_id, date, download_bytes, upload_bytes)
      select id, day, download, upload from per_day
      on conflict (subscriber_id, date) do update
         set download_bytes = d.download_bytes + excluded.download_bytes,
             upload_bytes = d.upload_bytes + excluded.upload_bytes
    ),
    seen as (
      insert into usage_seen (radacctid, input, output)
      select radacctid, coalesce(acctinputoctets, 0), coalesce(acctoutputoctets, 0) from ins where acctstoptime is null
      on conflict (radacctid) do nothing
    )
    select 'imported' as kind, ${MONTH_OF} as month, count(*)::int as sessions, sum(${OCTETS_OF})::text as octets,
           array_agg(distinct username) as users, array_agg(distinct username) filter (where acctstoptime is null) as open_users
      from ins group by 2`);
  return rows;
}

/**
 * After the chunks: the counters of subscribers that got sessions, rebuilt from daily_usage (the
 * day's and the month's, as the usage rollup keeps them), a look for the FUP engine, and the session
 * state of those with open sessions (online, address, access server).
 */
async function settleSubscribers(tx: Tx, withUsage: string[], withOpen: string[], today?: string): Promise<void> {
  const day = today ? sql`${today}::date` : sql`(now() at time zone 'UTC')::date`;
  await tx.execute(sql`
    with touched as (
      select id from subscribers where username = any(${text(withUsage)}::text[]) and deleted_at is null
    ),
    counted as (
      select t.id,
             coalesce(sum(d.download_bytes + d.upload_bytes) filter (where d.date = ${day}), 0) as today_bytes,
             coalesce(sum(d.download_bytes + d.upload_bytes), 0) as month_bytes
        from touched t left join daily_usage d
          on d.subscriber_id = t.id and d.date >= date_trunc('month', ${day})::date and d.date <= ${day}
       group by t.id
    ),
    queued as (insert into fup_queue (subscriber_id) select id from touched on conflict do nothing)
    update subscribers s
       set daily_quota_used = c.today_bytes, monthly_quota_used = c.month_bytes, usage_day = ${day}
      from counted c where s.id = c.id`);
  if (withOpen.length) {
    await tx.execute(sql`select subscriber_session_refresh(u, null) from unnest(${text(withOpen)}::text[]) as u`);
  }
}
