/**
 * Accounting history of an import (docs/import.md, "Sessions"): the source's sessions go into
 * `radacct` as they were, closed ones as history and open ones as live sessions, in chunks of one
 * transaction each, two at a time (millions of rows never sit in memory; each chunk is copied into a
 * staging table and moved on by one statement). The insert triggers are skipped for the
 * import's transactions (migration 0043); what they would have done row by row is done in sets
 * instead: each chunk stages its octets per username and UTC day in `import_usage` (committed with
 * the sessions), open sessions get their `usage_seen` row (later interims count from the imported
 * totals), and at the end the staged usage goes into `daily_usage` in two sorted statements (one per
 * half of the usernames, at once), the month's and the day's counters are rebuilt from it and the
 * session state of subscribers with open sessions is recomputed. A load large beside radacct drops
 * its two random-order B-trees and builds them once after (prepareRadacct), and stages its sessions by
 * range of unique id before it moves them, a range per transaction (session-stage.ts). An open session's last
 * update is set to the time of the import, so the stale-session rule counts from the move, not from
 * an interim heard before it.
 * Sessions are matched by `acctuniqueid`: a second run inserts nothing and finds each one there.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql } from 'drizzle-orm';
import { from as copyFrom } from 'pg-copy-streams';
import { clientOf } from '../billing/pg';
import type { Db, Tx } from '../db/client';
import {
  brokenRadacctIndexes,
  buildRadacctIndexes,
  dropRadacctIndexes,
  tryLockRadacctIndexes,
  unlockRadacctIndexes,
} from '../db/radacct-indexes';
import { estimatedRows, outweighs, poolOf } from './bulk-load';
import { prof } from './profile';
import { copyText, STAGED_COLUMNS } from './session-copy';
import { rangeCount, SessionStage, stageTable } from './session-stage';

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
  /** About how many sessions the source holds, without reading them (for dropsIndexes). */
  estimate?(): Promise<number>;
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

/** Month names by UTC day: a million sessions fall on a few hundred days. */
const monthOfDay = new Map<number, string>();
const month = (epoch: number | null) => {
  if (epoch === null) return 'unknown';
  const day = Math.floor(epoch / 86_400);
  let m = monthOfDay.get(day);
  if (m === undefined) {
    m = new Date(epoch * 1000).toISOString().slice(0, 7);
    if (monthOfDay.size < 100_000) monthOfDay.set(day, m);
  }
  return m;
};
/** A session's octets as a number while exact (nearly always), else as a bigint. */
const octets = (s: ImportSession): number | bigint => {
  const n = Number(s.input) + Number(s.output);
  return Number.isSafeInteger(n) ? n : BigInt(s.input) + BigInt(s.output);
};

/** Sessions and octets per month; octets summed as numbers while exact, then carried into a bigint. */
class Months {
  private readonly byMonth = new Map<string, { sessions: number; small: number; big: bigint }>();
  add(m: string, sessions: number, o: number | bigint): void {
    let c = this.byMonth.get(m);
    if (!c) this.byMonth.set(m, (c = { sessions: 0, small: 0, big: 0n }));
    c.sessions += sessions;
    if (typeof o === 'bigint') c.big += o;
    else if (Number.isSafeInteger(c.small + o)) c.small += o;
    else {
      c.big += BigInt(c.small) + BigInt(o);
      c.small = 0;
    }
  }
  months(): string[] {
    return [...this.byMonth.keys()];
  }
  get(m: string): MonthCount {
    const c = this.byMonth.get(m);
    return c ? { sessions: c.sessions, octets: c.big + BigInt(c.small) } : { sessions: 0, octets: 0n };
  }
}

/** Writes (or, dry, counts) every session of the source and reconciles them per month. */
export async function importSessions(db: Db, reader: SessionReader, ctx: SessionContext): Promise<SessionTotals> {
  const source = new Months();
  const skipped = new Months();
  const ours = new Months();
  const totals = { read: 0, imported: 0, unchanged: 0, skipped: 0 };
  const withOpen = new Set<string>();
  const now = Date.now() / 1000;
  // Set while chunks find their sessions already here (a second run, the done part of a resumed
  // one): they are then looked up before the insert, which finds nothing left to do.
  let lookFirst = false;
  /**
   * One staged set of `size` sessions moved into radacct by `move`, and counted. `recount` counts
   * what radacct holds of the whole set, given the rows the move found before its insert.
   */
  const writeAndCount = async (
    move: (look: boolean) => Promise<ChunkRow[]>,
    size: number,
    recount: (found: ChunkRow[]) => Promise<ChunkRow[]>,
  ) => {
    let rows = await prof('sessions:statement', () => move(lookFirst));
    const imported = rows.filter((r) => r.kind === 'imported');
    const found = rows.filter((r) => r.kind === 'unchanged');
    const inserted = imported.reduce((n, r) => n + r.sessions, 0);
    const foundCount = found.reduce((n, r) => n + r.sessions, 0);
    lookFirst = foundCount > 0 || inserted < size;
    // Neither inserted nor found before the insert (a look-up was not made, or another writer got
    // there in between): what our radacct now holds of the rest, counted once more after the commit.
    if (inserted + foundCount < size) {
      const held = await recount(found);
      // The inserted ones are among them: they keep only their open sessions' usernames here.
      rows = [...imported.map((r) => ({ ...r, sessions: 0, octets: '0' })), ...held];
      totals.unchanged += held.reduce((k, r) => k + r.sessions, 0) - inserted;
    } else totals.unchanged += foundCount;
    totals.imported += inserted;
    for (const r of rows) {
      ours.add(r.month, r.sessions, BigInt(r.octets));
      for (const u of r.open_users ?? []) withOpen.add(u);
    }
  };
  /**
   * Every chunk read, checked and written (or counted, or staged for a bulk load), at most WRITERS
   * at once.
   */
  const writeAll = async (stage: SessionStage | undefined) => {
    const writing = inTurn();
    try {
      for await (const chunk of readAhead(reader.chunks(ctx.chunkSize ?? 20_000))) {
        const take: ImportSession[] = [];
        const uids = new Set<string>();
        for (const s of chunk) {
          totals.read++;
          const m = month(s.start);
          const o = octets(s);
          source.add(m, 1, o);
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
            skipped.add(m, 1, o);
            ctx.skip(s.username, reason);
            continue;
          }
          uids.add(s.uniqueId);
          take.push(s);
        }
        if (!take.length) continue;
        if (ctx.dryRun) {
          const there = await prof('sessions:statement', () => countChunk(db, take, true));
          const present = new Set<number>();
          for (const r of there) {
            ours.add(r.month, r.sessions, BigInt(r.octets));
            totals.unchanged += r.sessions;
            for (const k of r.at ?? []) present.add(k);
          }
          // What a real run would insert: every session taken that is not there yet.
          totals.imported += take.length - present.size;
          take.forEach((s, k) => present.has(k + 1) || ours.add(month(s.start), 1, octets(s)));
        } else if (stage) {
          await writing.add(prof('sessions:stage', () => stage.add(take)));
        } else {
          await writing.add(
            writeAndCount(
              (look) => db.transaction((tx) => writeChunk(tx, take, now, look)),
              take.length,
              () => countChunk(db, take, false),
            ),
          );
        }
        ctx.progress?.(
          stage
            ? `sessions read ${totals.read}: ${totals.read - totals.skipped} staged for the load`
            : `sessions read ${totals.read}: ${totals.imported} to import, ${totals.unchanged} already here`,
        );
      }
    } finally {
      // A failed read or write leaves the other chunk's write running: it ends (commits or rolls back)
      // before the run reports the failure, so a next run finds what it committed.
      await writing.settle();
    }
    await writing.end();
  };
  /** A bulk load's ranges moved into radacct, each in one transaction, at most WRITERS at once. */
  const moveRanges = async (stage: SessionStage) => {
    const moving = inTurn();
    try {
      for (let k = 0; k < stage.ranges; k++) {
        if (!stage.staged[k]) continue;
        const table = stageTable(k);
        await moving.add(
          writeAndCount(
            (look) => db.transaction((tx) => moveStaged(tx, table, now, look)),
            stage.staged[k],
            async (found) => [...found, ...(await countStaged(db, table))],
          ).then(() => ctx.progress?.(`sessions moved: ${totals.imported} imported, ${totals.unchanged} already here`)),
        );
      }
    } finally {
      await moving.settle();
    }
    await moving.end();
  };
  const load = ctx.dryRun ? undefined : await prof('sessions:index-drop', () => prepareRadacct(db, reader));
  let failed = false;
  let stage: SessionStage | undefined;
  try {
    if (load) stage = await SessionStage.create(poolOf(db), rangeCount(load.sessions));
    await writeAll(stage);
    if (stage) await moveRanges(stage);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    if (stage) await stage.drop().catch((err) => (failed ? undefined : Promise.reject(err)));
    // The indexes are built again whether the load ended or failed; a failure to build them is
    // reported unless the load's own failure is (the next start or import repairs them).
    if (load)
      await prof('sessions:index-build', () => load.finish()).catch((err) =>
        failed ? undefined : Promise.reject(err),
      );
  }
  if (!ctx.dryRun) await prof('sessions:settle', () => settleAll(db, [...withOpen], ctx.today));
  const months = [...new Set([...source.months(), ...ours.months()])].sort().map((m) => {
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

/**
 * A load drops radacct's two random-order B-trees (radacct-indexes.ts) when its sessions outweigh
 * what radacct holds (bulk-load.ts): writing them costs about half of each chunk's insert.
 */
interface BulkLoad {
  /** The source's sessions, about (its estimate). */
  sessions: number;
  /** Builds the indexes again, frees the lock and the connection. */
  finish(): Promise<void>;
}

/**
 * Before the chunks, on a connection of its own: under radacct's index lock, the indexes are dropped
 * for a bulk load (the connection keeps the lock until they are built again), or else those a
 * stopped load left dropped or invalid are built again. Another import holding the lock is loading:
 * its indexes are left to it.
 */
async function prepareRadacct(db: Db, reader: SessionReader): Promise<BulkLoad | undefined> {
  const client = await poolOf(db).connect();
  let sessions: number;
  try {
    if (!(await tryLockRadacctIndexes(client))) {
      client.release();
      return undefined;
    }
    sessions = (await reader.estimate?.()) ?? 0;
    if (!outweighs(sessions, await estimatedRows(client, 'radacct'))) {
      await buildRadacctIndexes(client, await brokenRadacctIndexes(client));
      await unlockRadacctIndexes(client);
      client.release();
      return undefined;
    }
    await dropRadacctIndexes(client);
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
  return {
    sessions,
    async finish() {
      try {
        await buildRadacctIndexes(client, await brokenRadacctIndexes(client));
        await unlockRadacctIndexes(client);
      } catch (err) {
        // Ending the session frees the lock: the next start or import builds what is missing.
        client.release(err as Error);
        throw err;
      }
      client.release();
    },
  };
}

/**
 * Chunks written at once, each in its own transaction on its own connection: the inserts into radacct's
 * indexes and daily_usage are most of an import's work, and one PostgreSQL backend uses one core.
 */
const WRITERS = 2;

/**
 * Writes on at most WRITERS connections at once: `add` returns once fewer are under way; `settle`
 * waits for every one to end (commit or roll back), `end` then reports the first failure.
 */
function inTurn() {
  const running: Promise<void>[] = [];
  return {
    async add(work: Promise<void>): Promise<void> {
      // Awaited by `add` or `end`; a failure meanwhile is not an unhandled rejection.
      work.catch(() => undefined);
      running.push(work);
      if (running.length >= WRITERS) await running.shift();
    },
    settle: () => Promise.allSettled(running),
    async end(): Promise<void> {
      for (const w of running.splice(0)) await w;
    },
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
  open_users: string[] | null;
  /** countChunk's positions of the sessions found. */
  at?: number[] | null;
};

const text = (xs: (string | null)[]) => sql.param(xs);
/** A ChunkRow's count of radacct rows, grouped by its first column (`group by 1`). */
const PER_MONTH = `coalesce(to_char(acctstarttime at time zone 'UTC', 'YYYY-MM'), 'unknown') as month,
       count(*)::int as sessions, sum(coalesce(acctinputoctets, 0) + coalesce(acctoutputoctets, 0))::text as octets`;

/**
 * The sessions already in radacct, per month, and (`positions`, for a dry run's count of what it would
 * insert) their 1-based places in `take`. A join, not `= any(...)`: the planner took that for a scan
 * of the whole table.
 */
async function countChunk(db: Db, take: ImportSession[], positions: boolean): Promise<ChunkRow[]> {
  const { rows } = await db.execute<ChunkRow>(sql`
    select ${sql.raw(PER_MONTH)}, 'unchanged' as kind, null as open_users,
           ${positions ? sql`array_agg(u.k::int)` : sql`null`} as at
      from unnest(${text(take.map((s) => s.uniqueId))}::text[]) with ordinality as u(uid, k)
      join radacct on acctuniqueid = u.uid
     group by 1`);
  return rows;
}

/**
 * One chunk in one transaction: COPY into the staging table (PostgreSQL parses COPY's text about
 * twice as fast as 28 array parameters, and no arrays are built here), then one statement: the
 * insert (a session already there is left alone), its octets into daily_usage, open sessions'
 * usage_seen rows, and per month what was inserted. The commit does not wait for the WAL flush: a
 * chunk lost in a crash is not there for the next run, which imports it again (matched by
 * acctuniqueid).
 */
async function writeChunk(tx: Tx, take: ImportSession[], now: number, lookFirst: boolean): Promise<ChunkRow[]> {
  const client = clientOf(tx);
  await client.query(`${MOVE_SETTINGS}; ${STAGING}`);
  await pipeline(Readable.from([copyText(take)]), client.query(copyFrom('copy import_radacct from stdin')));
  return moveStatements(tx, 'import_radacct', now, lookFirst);
}

/**
 * Where a chunk is copied before it goes into radacct: a temporary table of this connection, emptied
 * at each commit (so a pooled connection carries no rows from one chunk to the next).
 */
const STAGING = `create temp table if not exists import_radacct (${STAGED_COLUMNS}) on commit delete rows`;

/**
 * The move's transaction settings: the radacct insert triggers skipped, no wait for the WAL flush, and
 * the sort in memory (a bulk load's range holds up to about PER_RANGE sessions).
 */
const MOVE_SETTINGS = `set local isp_billing.importing = 'on'; set local synchronous_commit = off; set local work_mem = '128MB'`;

/** A bulk load's range `table` moved into radacct in the transaction `tx`. */
async function moveStaged(tx: Tx, table: string, now: number, lookFirst: boolean): Promise<ChunkRow[]> {
  await clientOf(tx).query(MOVE_SETTINGS);
  return moveStatements(tx, table, now, lookFirst);
}

/**
 * The sessions staged in `table` moved into radacct by one statement (and, with `lookFirst`, those
 * already there taken out first), under MOVE_SETTINGS.
 */
async function moveStatements(tx: Tx, table: string, now: number, lookFirst: boolean): Promise<ChunkRow[]> {
  const client = clientOf(tx);
  const found = lookFirst ? (await client.query<ChunkRow>(foundStatement(table))).rows : [];
  const { rows } = await client.query<ChunkRow>(chunkStatement(table), [now]);
  return [...found, ...rows];
}

/** What radacct holds of the sessions left in a staging table, per month (after a commit). */
async function countStaged(db: Db, table: string): Promise<ChunkRow[]> {
  const { rows } = await db.execute<ChunkRow>(
    sql.raw(`select ${PER_MONTH}, 'unchanged' as kind, null as open_users
               from ${table} s join radacct on acctuniqueid = s.uid group by 1`),
  );
  return rows;
}

/**
 * The staged sessions already in radacct, counted per month and taken out of the staging table:
 * one index look-up each, where the insert's conflict check and a count after it made two.
 */
const foundStatement = (table: string) => `
    with here as (
      delete from ${table} s using radacct r where r.acctuniqueid = s.uid
      returning r.acctstarttime, r.acctinputoctets, r.acctoutputoctets
    )
    select ${PER_MONTH}, 'unchanged' as kind, null as open_users from here group by 1`;

const chunkStatement = (table: string) => `
    with ins as (
      insert into radacct (acctsessionid, acctuniqueid, username, realm, nasipaddress, nasportid, nasporttype,
                           acctstarttime, acctupdatetime, acctstoptime, acctinterval, acctsessiontime, acctauthentic,
                           connectinfo_start, connectinfo_stop, acctinputoctets, acctoutputoctets, calledstationid,
                           callingstationid, acctterminatecause, servicetype, framedprotocol, framedipaddress,
                           framedipv6address, framedipv6prefix, framedinterfaceid, delegatedipv6prefix, class)
      select sid, uid, username, realm, nas, port_id, port_type, to_timestamp(start_s),
             case when stop_s is null then to_timestamp($1::float8) else to_timestamp(update_s) end,
             to_timestamp(stop_s), intv, stime, authentic, ci_start, ci_stop, input, output, called, calling, cause,
             service, proto, ip, ip6, ip6_prefix, iface, delegated, class
        from ${table}
       order by uid -- chunks written at once wait for each other's ids, never in a circle
      on conflict (acctuniqueid) do nothing
      returning radacctid, username, acctstarttime, acctstoptime, acctinputoctets, acctoutputoctets
    ),
    usage as (
      insert into import_usage (username, day, download_bytes, upload_bytes)
      select username, (coalesce(acctstoptime, acctstarttime, to_timestamp($1::float8)) at time zone 'UTC')::date,
             sum(coalesce(acctoutputoctets, 0)), sum(coalesce(acctinputoctets, 0))
        from ins group by 1, 2
    ),
    seen as (
      insert into usage_seen (radacctid, input, output)
      select radacctid, coalesce(acctinputoctets, 0), coalesce(acctoutputoctets, 0) from ins where acctstoptime is null
      on conflict (radacctid) do nothing
    )
    select ${PER_MONTH}, 'imported' as kind,
           array_agg(distinct username) filter (where acctstoptime is null) as open_users
      from ins group by 1`;

/**
 * After the chunks: the staged daily usage moved into daily_usage, over HALVES connections at once
 * (the move is most of the end's work, and one backend uses one core), each half a disjoint set of
 * usernames (by hash) in a transaction of its own that moves and deletes its staged rows: a run
 * stopped between the two leaves the other half's rows staged, which the next run moves. Rows
 * committed by another import after a half's snapshot are not deleted by it, and stay for that
 * import's own move.
 */
async function settleAll(db: Db, withOpen: string[], today?: string): Promise<void> {
  const halves = await Promise.allSettled(
    Array.from({ length: HALVES }, (_, half) => db.transaction((tx) => settleSubscribers(tx, half, withOpen, today))),
  );
  for (const h of halves) if (h.status === 'rejected') throw h.reason;
}

/** A power of two: a half is picked by the low bits of the username's hash. */
const HALVES = 2;
/** The SQL condition that the username in `col` belongs to half `n`. */
const inHalf = (col: string, n: number) => `(hashtext(${col}) & ${HALVES - 1}) = ${n}`;

/**
 * One half's staged usage moved into daily_usage in one statement, in key order (the rows of a run
 * stopped before this step as well: they were committed with their sessions, and subscribers
 * sorted by id within each half upsert in the same order as any other writer); the counters of the
 * subscribers it touched rebuilt from daily_usage (the day's and the month's, as the usage rollup
 * keeps them), a look for the FUP engine; the session state of those with open sessions (online,
 * address, access server). Staged rows of usernames without a subscriber are deleted with the rest.
 */
async function settleSubscribers(tx: Tx, half: number, withOpen: string[], today?: string): Promise<void> {
  const day = today ? sql`${today}::date` : sql`(now() at time zone 'UTC')::date`;
  // The aggregate of every staged row of the half (one per session and day at most): in memory
  // rather than on disk.
  await tx.execute(sql`set local work_mem = '64MB'`);
  const { rows: touched } = await tx.execute<{ id: number }>(sql`
    with moved as (
      delete from import_usage where ${sql.raw(inHalf('username', half))}
      returning username, day, download_bytes, upload_bytes
    ),
    per_day as (
      select s.id, m.day, sum(m.download_bytes) as download, sum(m.upload_bytes) as upload
        from moved m join subscribers s on s.username = m.username and s.deleted_at is null
       group by 1, 2
    ),
    written as (
      insert into daily_usage as d (subscriber_id, date, download_bytes, upload_bytes)
      select id, day, download, upload from per_day order by id, day
      on conflict (subscriber_id, date) do update
         set download_bytes = d.download_bytes + excluded.download_bytes,
             upload_bytes = d.upload_bytes + excluded.upload_bytes
      returning subscriber_id
    )
    select distinct subscriber_id as id from written`);
  if (touched.length) {
    await tx.execute(sql`
      with touched as (select unnest(${sql.param(touched.map((r) => r.id))}::int[]) as id),
      counted as (
        select t.id,
               coalesce(sum(d.download_bytes + d.upload_bytes) filter (where d.date = ${day}), 0) as today_bytes,
               coalesce(sum(d.download_bytes + d.upload_bytes), 0) as month_bytes
          from touched t left join daily_usage d
            on d.subscriber_id = t.id and d.date >= date_trunc('month', ${day})::date and d.date <= ${day}
         group by t.id
      ),
      queued as (insert into fup_queue (subscriber_id) select id from touched order by id on conflict do nothing)
      update subscribers s
         set daily_quota_used = c.today_bytes, monthly_quota_used = c.month_bytes, usage_day = ${day}
        from counted c where s.id = c.id`);
  }
  if (withOpen.length) {
    await tx.execute(sql`select subscriber_session_refresh(u, null)
      from unnest(${text(withOpen)}::text[]) as u where ${sql.raw(inHalf('u', half))}`);
  }
}
