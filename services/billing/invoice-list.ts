/**
 * GET /api/invoices at a million rows (docs/billing.md, "Lists at a million invoices"). A page is
 * one prepared statement: the page's ids from an index in list order (index-only, so a deep OFFSET
 * skips index entries, not rows), then those rows as the API's JSON, and the total beside them:
 *
 * - filtered by reseller only (admin list, a reseller's tree, `reseller_id`): exact, from
 *   `invoice_counts`, which triggers keep in the writing transaction;
 * - by status (and resellers): exact, from `invoice_status_counts` (invoice-status-counts.ts);
 * - any other filter: the page itself when it is the last one, else a count capped at
 *   EXACT_TOTAL_CAP, else the planner's estimate (shared/pagination/total.ts, as subscribers do).
 *   A date range (and resellers) keeps its capped count with the generation it was read at.
 *
 * A page with no status and no subscriber filter (a search, a tree, a date range) is kept between
 * requests with the generation it was read at, and served again while that generation is current
 * (list-page-cache.ts).
 */
import crypto from 'node:crypto';
import type { Scope } from '../../shared/auth/policy';
import { pgPool } from '../../shared/db/client';
import { MAX_PAGE_LIMIT } from '../../shared/http/schemas';
import {
  cappedCountSql,
  EXACT_TOTAL_CAP,
  planRows,
  totalFromCappedCount,
  totalFromPage,
} from '../../shared/pagination/total';
import { invoiceListJson } from './invoice-json';
import { AfterArrival } from '../../shared/after-arrival';
import { Lru } from '../../shared/lru';
import { LIST_CHANGES_KEPT, type ListPage, listPageKey, type PageJson } from './list-page-cache';
import type { PoolClient } from 'pg';
import { namedRows } from './sql';
import { MAX_PAGE_MOVES, type PageMove, type PagePosition, parseIntArray, planPageMove } from './page-moves';
import { type NameSample, rareWordPattern } from './name-lookup';

export interface ListFilter {
  status?: string;
  subscriberId?: number;
  resellerId?: number;
  from?: string;
  to?: string;
  search?: string;
  /**
   * The LIKE pattern of the phone a phone-like search names (shared/phone.ts, E.164 or digits):
   * subscribers whose stored phone matches are matched too.
   */
  searchPhone?: string;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, '\\$&')}%`;

/**
 * The phone pattern of a search that names no phone: letters only, which no stored phone holds and
 * whose trigrams the phone index answers at once, so one prepared statement serves both.
 */
const NO_PHONE = 'nophone';

/**
 * The part of a search the number's trigram index should look up: after the last `-` when that
 * leaves at least 3 characters. A number is `<prefix>-<year>-<sequence>`, so `INV-2025-012345`
 * would otherwise make the index intersect trigrams that every invoice of the year holds
 * (115 ms at a million invoices); the sequence's own trigrams are rare (3 ms).
 */
export function numberKey(search: string): string {
  const tail = search.slice(search.lastIndexOf('-') + 1);
  return tail.length >= 3 ? tail : search;
}

/** The resellers of a list (undefined: every one); for a caller's tree, also its root. */
interface Resellers {
  ids?: number[];
  root?: number;
}

/**
 * The resellers of each tree as last resolved, with the tree generation they were read at (migration
 * 0013). The caller's scope carries the current generation, read with its path in the request's
 * policy statement, so a tree kept at that generation is still the tree and the request saves a
 * statement.
 */
const trees = new Lru<{ ids: number[]; root: number; generation: number }>(1_000);

async function resellersOf(scope: Scope, f: ListFilter): Promise<Resellers> {
  // A reseller_id has been checked against the scope by the action: its invoices are all in scope.
  if (f.resellerId !== undefined) return { ids: [f.resellerId] };
  if (scope.kind === 'all') return {};
  const kept = trees.get(scope.rootPath);
  if (kept?.generation === scope.treeGeneration) return kept;
  const [row] = await namedRows<{ ids: number[] | null; generation: string }>(
    'billing_list_tree',
    `
    select array_agg(id order by id) as ids, (select n from reseller_tree_generation) as generation
    from resellers where path like $1`,
    [`${scope.rootPath}%`],
  );
  const tree = { ids: row.ids ?? [], root: scope.rootId, generation: Number(row.generation) };
  trees.set(scope.rootPath, tree);
  return tree;
}

/** Past this many matching subscribers a search is broad: it reads invoices' search_text instead. */
const BROAD_SEARCH_SUBSCRIBERS = 1_000;

/**
 * A search's LIKE pattern, lower-cased, that could match an invoice number: numbers hold only
 * [A-Z0-9-] (a prefix of [A-Z0-9], the year, the sequence; constraint invoices_number_chars), and
 * ILIKE compares lower() of both sides. Any other character (a space in a full name, an `@`, an
 * escaped `%`) rules the number out, and a narrow search then skips the number's trigram index,
 * which for `User 54321` read the large posting lists of the digits' trigrams: 3 ms for no row.
 */
const NUMBER_ALPHABET = '^%[a-z0-9-]*%$';

/** What the subscribers of a search tell the list (see searchSubscribers). */
interface SearchSubscribers {
  /** Their ids, when BROAD_SEARCH_SUBSCRIBERS or fewer match. */
  ids?: number[];
  /** A broad search whose first matching subscribers alone hold more than EXACT_TOTAL_CAP invoices. */
  overCap: boolean;
  /** The search's LIKE pattern through PostgreSQL's lower(), what ILIKE compares. */
  lowered: string;
  /** Whether the search could match an invoice number at all (see NUMBER_ALPHABET). */
  numberLike: boolean;
  /** invoice_list_generation when the subscribers were read (see listInvoicesJson). */
  generation: number;
}

/**
 * Subscribers whose username or full name matches a search (trigram indexes): their ids, or
 * none when there are more than BROAD_SEARCH_SUBSCRIBERS (sending thousands of ids back and
 * forth cost the app 4 ms per page). For a broad search, the invoices of the subscribers already
 * read are counted up to the cap: past it, the total is an estimate and the page needs no count
 * (which would look the subscribers up again).
 */
async function searchSubscribers(search: string, phone: string): Promise<SearchSubscribers> {
  // The full-name index looks up the search's rare word when it has one (name-lookup.ts), `|| ''`
  // keeps the whole pattern's check out of the index.
  const [row] = await namedRows<{
    ids: number[] | null;
    overCap: boolean;
    lowered: string;
    numberLike: boolean;
    generation: number;
  }>(
    'billing_search_subscribers',
    `
    with s as materialized (select id from subscribers
        where username ilike $1 or (full_name ilike $5 and (full_name || '') ilike $1) or phone like $6 limit $2 + 1),
      k as (select count(*) as n, array_agg(id) as ids from s)
    select case when k.n <= $2 then coalesce(k.ids, '{}') end as ids,
      k.n > $2 and (select count(*) from (select 1 from s join invoices i on i.subscriber_id = s.id limit $3) c) = $3 as "overCap",
      lower($1) as lowered, lower($1) ~ $4 as "numberLike", (select n from invoice_list_generation) as generation
    from k`,
    [
      likePattern(search),
      BROAD_SEARCH_SUBSCRIBERS,
      EXACT_TOTAL_CAP + 1,
      NUMBER_ALPHABET,
      rareWordPattern(search, nameSample) ?? likePattern(search),
      phone,
    ],
  );
  return {
    ids: row.ids ?? undefined,
    overCap: row.overCap,
    lowered: row.lowered,
    numberLike: row.numberLike,
    generation: row.generation,
  };
}

/** What a filter's statement depends on, besides the values: one prepared statement per shape. */
interface Shape {
  /** `tree`: a caller's tree of several resellers, listed from invoice_tree (migration 0014). */
  resellers: 'all' | 'one' | 'many' | 'tree';
  status: boolean;
  subscriber: boolean;
  from: boolean;
  to: boolean;
  /**
   * few: up to FEW_SUBSCRIBERS matching subscribers and no number to look up; number: no matching
   * subscriber, the number's matches first (numberMatches); narrow: the matching subscribers' ids or
   * the number; broad: invoices' search_text (see conditions).
   */
  search: false | 'few' | 'number' | 'narrow' | 'broad';
  order: 'asc' | 'desc';
}

interface Values {
  resellers?: number[];
  /** The root reseller of a `tree` shape. */
  treeRoot?: number;
  status?: string;
  subscriberId?: number;
  from?: string;
  to?: string;
  search?: string;
  /** The phone's LIKE pattern (ListFilter.searchPhone), or NO_PHONE. */
  searchPhone: string;
  /** Subscribers whose username or full name matches the search. */
  searchSubscribers?: number[];
  /** A broad search known to match more than EXACT_TOTAL_CAP invoices. */
  searchOverCap?: boolean;
  /** The search's LIKE pattern, lower-cased by PostgreSQL (see SearchSubscribers). */
  searchLowered?: string;
  /** The search could match an invoice number (see NUMBER_ALPHABET). */
  searchNumberLike?: boolean;
  /** A date range's capped count kept from an earlier page, and the generation it was read at. */
  keptCount?: number;
  keptGeneration?: number;
  limit: number;
  offset: number;
}

interface Statement {
  name: string;
  text: string;
  /** The statement's parameters in order, from the request's values. */
  values: (v: Values) => unknown[];
  /** EXPLAIN of the matches, for the estimate past the cap (unnamed: planned with the values). */
  estimate: { text: string; values: (v: Values) => unknown[] };
}

/** Builds SQL with numbered placeholders, each bound to a getter of the request's values. */
class Params {
  readonly getters: ((v: Values) => unknown)[] = [];
  add(get: (v: Values) => unknown): string {
    this.getters.push(get);
    return `$${this.getters.length}`;
  }
  values = (v: Values) => this.getters.map((g) => g(v));
}

function conditions(s: Shape, p: Params): string[] {
  const conds: string[] = [];
  if (s.resellers === 'one') conds.push(`i.reseller_id = ${p.add((v) => v.resellers![0])}`);
  if (s.resellers === 'many') conds.push(`i.reseller_id = any(${p.add((v) => v.resellers)}::int[])`);
  if (s.status) conds.push(`i.status = ${p.add((v) => v.status)}`);
  if (s.subscriber) conds.push(`i.subscriber_id = ${p.add((v) => v.subscriberId)}`);
  if (s.from) conds.push(`i.issue_date >= ${p.add((v) => v.from)}::date`);
  if (s.to) conds.push(`i.issue_date <= ${p.add((v) => v.to)}::date`);
  if (s.search === 'few') {
    // Planned once, the ids are out of the planner's sight (an initplan), so a plan made for one
    // subscriber costs the same as the generic one: a few subscribers' invoices are few whatever their number.
    const few = `${p.add((v) => v.searchSubscribers)}::int[]`;
    conds.push(`i.subscriber_id = any(${planOnce(s) ? `(select ${few})::int[]` : few})`);
  } else if (s.search === 'narrow' || s.search === 'broad') {
    const pattern = p.add((v) => v.search && likePattern(v.search));
    if (s.search === 'narrow') {
      // The number by its trigram index (only the pattern's distinctive part is looked up, see
      // numberKey; the whole pattern is then checked on those rows, kept out of the index by
      // `|| ''`), or one of the matching subscribers, whose ids are a parameter: planned with its
      // values, two bitmap index scans ORed and a handful of rows sorted. A search that cannot be
      // a number folds its branch away at planning (the flag is a value of this plan).
      const key = p.add((v) => v.search && likePattern(numberKey(v.search)));
      const numberLike = p.add((v) => v.searchNumberLike);
      conds.push(`(i.subscriber_id = any(${p.add((v) => v.searchSubscribers)}::int[])
        or (${numberLike}::boolean and i.invoice_number ilike ${key} and (i.invoice_number || '') ilike ${pattern}))`);
    } else {
      // ILIKE is LIKE over lower() of both sides, so one LIKE on search_text (number, username and
      // full name, lower-cased, joined by U+0001; migration 0009) walks invoices_search_idx
      // index-only. Only a search holding U+0001 could match across two parts: it is checked exactly.
      // The pattern comes lower-cased from searchSubscribers: `lower(pattern)` here was evaluated on
      // every entry a generic plan walked (half of the walk's time), and computed once (an
      // initplan) it hid the pattern from the planner, which then sorted every invoice for page 100.
      conds.push(`i.search_text like ${p.add((v) => v.searchLowered)}`);
      conds.push(`(not ${p.add((v) => v.search!.includes('\u0001'))}::boolean or i.id in (select x.id from invoices x join subscribers s on s.id = x.subscriber_id
        where x.invoice_number ilike ${pattern} or s.username ilike ${pattern} or s.full_name ilike ${pattern}))`);
    }
  }
  return conds;
}

/**
 * A search that only a number can match (no subscriber matches it): the number's matches by its
 * trigram index (the distinctive part looked up, see numberKey, the whole pattern checked on those
 * rows), at most EXACT_TOTAL_CAP + 1 of them, with the columns the list's other filters and order
 * read. Both patterns go through initplans, out of the planner's sight, so the plan made for any
 * values costs what the generic one does and PostgreSQL keeps the generic one: planning the narrow
 * statement anew on every search was about a third of its PostgreSQL time. The trigram index is then
 * always the way in (a generic plan cannot tell a 10-match number from `2025`), so only a search
 * whose key looks rare takes this shape (rareNumberKey); one matching more than the cap after all
 * spills (see listInvoicesJson) and is planned with its values as a narrow search.
 */
function numberMatches(p: Params): string {
  const key = p.add((v) => likePattern(numberKey(v.search!)));
  const pattern = p.add((v) => likePattern(v.search!));
  return `select i.id, i.reseller_id, i.status, i.subscriber_id, i.issue_date from invoices i
    where i.invoice_number ilike (select ${key}::text) and (i.invoice_number || '') ilike (select ${pattern}::text)
    limit ${EXACT_TOTAL_CAP + 1}`;
}

/**
 * Whether any subscriber matches a number's search (searchSubscribers' conditions), and the
 * search's pattern through PostgreSQL's lower(), read in the number's own statement (numberSearch).
 * The check is a materialized CTE, planned for all its rows, so its generic plan reads the two
 * trigram indexes (a bitmap), and EXISTS stops at the first row it yields: EXISTS over the table
 * itself was planned as a sequential scan expected to stop early, which reads every subscriber when
 * none matches (the usual case).
 */
function numberSearchSubscribers(p: Params): { matches: string; lowered: string } {
  const pattern = p.add((v) => likePattern(v.search!));
  const word = p.add((v) => rareWordPattern(v.search!, nameSample) ?? likePattern(v.search!));
  const phone = p.add((v) => v.searchPhone);
  return {
    matches: `select 1 from subscribers s where s.username ilike (select ${pattern}::text)
      or (s.full_name ilike (select ${word}::text) and (s.full_name || '') ilike (select ${pattern}::text))
      or s.phone like (select ${phone}::text)`,
    lowered: `(select lower(${pattern}::text))`,
  };
}

function buildStatement(s: Shape, name: string): Statement {
  const p = new Params();
  const dir = s.order === 'asc' ? 'asc' : 'desc';
  // A date range reads newest issue date first (then id): the range's own index order. Elsewhere
  // newest = highest id (ids are handed out in creation order).
  const order = s.from || s.to ? `i.issue_date ${dir}, i.id ${dir}` : `i.id ${dir}`;
  const numbers = s.search === 'number' ? numberMatches(p) : undefined;
  const source = numbers === undefined ? 'invoices i' : 'number_matches i';
  const conds = conditions(s, p);
  const where = (c: string[]) => (c.length ? `where ${c.join(' and ')}` : '');
  const matches = `select 1 from ${source} ${where(conds)}`;
  const matchParams = p.getters.length;
  const limit = p.add((v) => v.limit);
  const offset = p.add((v) => v.offset);
  const subscribers = numbers === undefined ? undefined : numberSearchSubscribers(p);
  // The page keeps what it is ordered by, so that its kept ids can be aggregated in list order.
  const ids = `select i.id${s.from || s.to ? ', i.issue_date' : ''} from ${source} ${where(conds)} order by ${order}`;
  const tree = s.resellers === 'tree' ? treePage(p, dir, offset) : undefined;
  // Reseller-only lists take the exact count kept by the triggers; others count up to the cap,
  // unless the page is short and so settles the total itself (-1: see totalFromPage).
  let total: string;
  if (onlyResellers(s)) {
    const which = s.resellers === 'all' ? '' : `where reseller_id = any(${p.add((v) => v.resellers)}::int[])`;
    total = `(select coalesce(sum(n), 0) from invoice_counts ${which})`;
  } else if (statusCounted(s)) {
    const which = s.resellers === 'all' ? '' : ` and reseller_id = any(${p.add((v) => v.resellers)}::int[])`;
    total = `(select coalesce(sum(n), 0) from invoice_status_counts where status = ${p.add((v) => v.status)}${which})`;
  } else {
    // A broad search alone: past the cap already (searchSubscribers), or counted from the subscribers.
    const broad = s.search === 'broad' && onlySearch(s);
    const overCap = broad ? ` when ${p.add((v) => v.searchOverCap)}::boolean then ${EXACT_TOTAL_CAP + 1}` : '';
    // A kept count is used only while the generation it was read at is current (dateCounts).
    const keptCount = datesKept(s)
      ? ` when ${p.add((v) => v.keptGeneration ?? null)}::bigint = (select n from invoice_list_generation) then ${p.add((v) => v.keptCount ?? null)}::int`
      : '';
    total = `case when n.n < ${limit}::int and (n.n > 0 or ${offset}::int = 0) then -1${overCap}${keptCount}
      else ${cappedCountSql(broad ? broadSearchMatches(p) : matches)} end`;
  }
  // A page to keep (listPages): its ids, and the generation in this statement's snapshot, the one
  // the ids (and a date range's count) were read in. The ids stay PostgreSQL's array text: kept as
  // is and sent back as is, never parsed in Node (a miss pays for keeping too).
  const kept = keepable(s)
    ? `, (select coalesce(array_agg(i.id order by ${order}), '{}')::text from page i) as ids,
      (select coalesce(array_agg(i.row_version order by ${order}), '{}')::text from rows i) as versions,
      (select n from invoice_list_generation) as generation`
    : '';
  // Planned once (planOnce): the offset out of the planner's sight, and a constant cap that bounds
  // its estimate of the page (a LIMIT it cannot see reads as a tenth of the matches, and the rows'
  // join then read every invoice); the outer limit stops the walk at the page.
  const pageIds = tree
    ? `select * from (${tree.ids} limit ${MAX_PAGE_LIMIT}) w limit ${limit}::int`
    : planOnce(s)
      ? `select * from (${ids} offset (select ${offset}::int) limit ${MAX_PAGE_LIMIT}) w limit ${limit}::int`
      : `${ids} limit ${limit}::int offset ${offset}::int`;
  // A number's matches spill when there are more than the cap: some were cut, the page is not served.
  // And whether a subscriber matches the search after all: the page is then not the list's either.
  const spilled =
    subscribers === undefined
      ? ''
      : `, (select count(*) from number_matches) > ${EXACT_TOTAL_CAP} as spilled,
        exists (select 1 from number_subscribers) as subscribers, ${subscribers.lowered} as lowered`;
  const numberCtes =
    numbers === undefined || subscribers === undefined
      ? ''
      : `number_matches as materialized (${numbers}), number_subscribers as materialized (${subscribers.matches}),`;
  const text = `with ${numberCtes}${tree ? `${tree.start},` : ''}
      page as materialized (${pageIds}),
      rows as (select i.*, i.xmin as row_version from page join invoices i using (id)),
      n as (select count(*)::int as n from page)
    select (select ${invoiceListJson(order)} from rows i) as json,
      n.n as "rowCount", ${total}::int as total${kept}${spilled}
    from n`;
  return {
    name,
    text,
    values: p.values,
    estimate: {
      text: `explain (format json) ${numbers === undefined ? '' : `with number_matches as (${numbers}) `}${matches}`,
      values: (v) => p.values(v).slice(0, matchParams),
    },
  };
}

/** invoice_tree_blocks' block of an invoice id: 4,096 ids (migration 0041). */
const TREE_BLOCK_BITS = 12;

/**
 * A reseller tree's page (planned once, as planOnce): one range of invoice_tree's primary key in id
 * order (PostgreSQL does not merge ordered scans of a UNION ALL, so one scan per reseller of the
 * tree would each read offset + limit entries), started at the block that holds the page's first
 * entry. `start` sums the tree's per-block counts (the folded rows and the deltas not yet folded,
 * merged in block order) from the list's end until they pass the offset: a few dozen rows for page
 * 100, because the hidden LIMITs make the planner walk both indexes in order and stop, where it
 * read and sorted every block of the tree. `ids` skips only what that block holds before the page.
 * An offset past the tree finds no block: no bound, no rows. Counts and entries are read in one
 * snapshot, in which they agree (the triggers write them with the entries, a fold in one statement).
 */
function treePage(p: Params, dir: 'asc' | 'desc', offset: string): { start: string; ids: string } {
  const root = p.add((v) => v.treeRoot);
  const counts = (table: string) =>
    `(select block, n from ${table} where ancestor_id = ${root} order by block ${dir} limit (select null::int))`;
  const start = `tree_start as materialized (select b.block, b.through - b.n as before from (
      select k.block, k.n, sum(k.n) over (order by k.block ${dir}) as through from (
        select block, sum(n)::int as n from (${counts('invoice_tree_blocks')} union all ${counts('invoice_tree_block_deltas')}) u
        group by block order by block ${dir}) k) b
    where b.through > (select ${offset}::int) order by b.block ${dir} limit 1)`;
  // The block's first id in list order. Descending, its last: `(block + 1) << bits` overflows int
  // for the block of 2^31 - 1 (PostgreSQL's shift does not check), so the top is or-ed in.
  const bound =
    dir === 'desc'
      ? `t.invoice_id <= (select (block << ${TREE_BLOCK_BITS}) | ${(1 << TREE_BLOCK_BITS) - 1} from tree_start)`
      : `t.invoice_id >= (select block << ${TREE_BLOCK_BITS} from tree_start)`;
  const ids = `select t.invoice_id as id from invoice_tree t where t.ancestor_id = ${root} and ${bound}
    order by t.invoice_id ${dir} offset (select ${offset}::int - before from tree_start)`;
  return { start, ids };
}

/**
 * A broad search's matches from the subscriber side, for its capped count: each matching
 * subscriber's invoices (index-only on `(subscriber_id, ...)`), then number matches of other
 * subscribers. The count stops at the cap after about cap / invoices-per-subscriber subscribers,
 * wherever their invoices lie; counting along the id order read every invoice up to the cap-th
 * match (all of them when a search matches fewer).
 */
function broadSearchMatches(p: Params): string {
  const pattern = p.add((v) => likePattern(v.search!));
  const key = p.add((v) => likePattern(numberKey(v.search!)));
  const subscriberMatches = (s: string) => `(${s}.username ilike ${pattern} or ${s}.full_name ilike ${pattern})`;
  return `select 1 from subscribers s join invoices i on i.subscriber_id = s.id where ${subscriberMatches('s')}
    union all
    select 1 from invoices i where i.invoice_number ilike ${key} and (i.invoice_number || '') ilike ${pattern}
      and not exists (select 1 from subscribers s where s.id = i.subscriber_id and ${subscriberMatches('s')})`;
}

const statements = new Map<string, Statement>();

function statementFor(s: Shape): Statement {
  const key = JSON.stringify(s);
  let statement = statements.get(key);
  if (!statement) {
    statement = buildStatement(s, `billing_list_${statements.size}`);
    statements.set(key, statement);
  }
  return statement;
}

const onlyResellers = (s: Shape) => !s.status && !s.subscriber && !s.from && !s.to && !s.search;
/** A status with no filter but the caller's resellers: exact from invoice_status_counts. */
const statusCounted = (s: Shape) => s.status && !s.subscriber && !s.from && !s.to && !s.search;
/** A date range with no filter but the caller's resellers: its capped count is kept (dateCounts). */
const datesKept = (s: Shape) => (s.from || s.to) && !s.status && !s.subscriber && !s.search;
/** No status, no subscriber: what the list holds moves only with the generation (list-page-cache.ts). */
const keepable = (s: Shape) => !s.status && !s.subscriber;
// A phone search is not kept: a kept page is checked against invoice and name changes, not phones.
const keepableFilter = (f: ListFilter) => !f.status && f.subscriberId === undefined && f.searchPhone === undefined;
const onlySearch = (s: Shape) => s.resellers === 'all' && !!s.search && keepable(s) && !s.from && !s.to;

/**
 * A search matching this many subscribers or fewer, and no number, is prepared: the generic plan
 * (their invoices by `(subscriber_id, ...)`, then sorted) is the one their values would get, and
 * planning the statement anew was most of its PostgreSQL time. With more, the plan depends on how
 * many invoices they hold (sorting them all, or walking the id order until the page is full).
 */
const FEW_SUBSCRIBERS = 10;

/**
 * Whether the part of a number search the trigram index looks up (numberKey) should match few
 * numbers: 5 letters or digits with no `-`, which only a sequence holds that long (a year is 4; a
 * 5-digit run matches about 20 of a million 6-digit sequences). Only the plan depends on it: a key
 * that matches more than the cap after all costs its spill (numberMatches), about 30 ms for
 * `INV-2025-0` at a million invoices beside the 170 ms of its planned statement.
 */
const rareNumberKey = (search: string) => /^[A-Za-z0-9]{5,}$/.test(numberKey(search));

/**
 * Whether a search is run as a number's first, before its subscribers are read: letters, digits and
 * `-` only (so PostgreSQL's lower() makes it a possible number, see NUMBER_ALPHABET), a rare key
 * (rareNumberKey) holding a digit (a run of 5 letters is more often a name). The number's statement
 * also says whether any subscriber matches (numberSearchSubscribers); only then are the subscribers
 * read and the shape chosen from them, so a number's search is one statement instead of two
 * (searchSubscribers' round trip and statement were a third of its PostgreSQL time).
 */
const numberSearch = (search: string) =>
  /^[A-Za-z0-9-]+$/.test(search) && rareNumberKey(search) && /\d/.test(numberKey(search));

/** What numberSearch assumes of the subscribers until the number's statement says otherwise. */
const NO_SUBSCRIBERS: SearchSubscribers = { ids: [], overCap: false, lowered: '', numberLike: true, generation: 0 };

function searchShape(search: string, found: SearchSubscribers): Shape['search'] {
  if (!found.ids) return 'broad';
  if (found.ids.length === 0 && found.numberLike && rareNumberKey(search)) return 'number';
  return found.numberLike || found.ids.length > FEW_SUBSCRIBERS ? 'narrow' : 'few';
}

function shapeOf(f: ListFilter, r: Resellers, found: SearchSubscribers | undefined): Shape {
  const s: Shape = {
    resellers: 'all',
    status: !!f.status,
    subscriber: f.subscriberId !== undefined,
    from: !!f.from,
    to: !!f.to,
    search: found && f.search !== undefined ? searchShape(f.search, found) : false,
    order: f.order,
  };
  if (r.ids?.length === 1) s.resellers = 'one';
  // With other filters a tree's resellers filter what those filters' indexes read.
  else if (r.ids) s.resellers = r.root !== undefined && onlyResellers(s) ? 'tree' : 'many';
  return s;
}

/**
 * Whether a shape's statement should be planned once per connection. PostgreSQL plans a prepared
 * statement again on every execution while its generic plan looks costlier than the plans made for
 * the values, and an OFFSET it can see makes the generic plan look costlier (it assumes a tenth of
 * the matches to skip): a list page spent 0.25 ms of its 0.85 ms in the planner. A shape with one
 * filter at most (the resellers, a status, a date range, a subscriber, a few subscribers' search)
 * walks that filter's index in list order whatever the values, so its offset is hidden from the
 * planner (an initplan) and the generic plan, as cheap as the custom ones, is kept; so is a number's
 * search, whatever filters go with it (numberMatches). With two
 * filters, or a search of many subscribers, how many rows each matches decides which index to walk
 * (a deep page of a tree's month: its resellers' index and a sort, where a generic plan walked the
 * month's index, most of its 86,000 invoices for page 100), so those are planned with their values
 * every time.
 */
function planOnce(s: Shape): boolean {
  // A number's matches are few whatever the filters beside them (numberMatches).
  if (s.search === 'number') return true;
  const filters = [s.resellers !== 'all', s.status, s.subscriber, s.from || s.to, !!s.search].filter(Boolean).length;
  return filters <= 1 && s.resellers !== 'many' && (s.search === false || s.search === 'few');
}

/**
 * Trigram shares of full names (name-lookup.ts), sampled when the billing service starts and every
 * NAME_SAMPLE_INTERVAL_MS.
 */
let nameSample: NameSample | undefined;

export function useNameSample(sample: NameSample | undefined): void {
  nameSample = sample;
}

/** Pages kept between requests (list-page-cache.ts); sized when the billing service starts. */
let listPages = new Lru<ListPage>(0);
let pageJsons = new Lru<PageJson>(0);

export function keepListPages(maxEntries: number): void {
  listPages = new Lru<ListPage>(maxEntries);
  pageJsons = new Lru<PageJson>(Math.min(maxEntries, KEPT_JSON_PAGES));
}

/**
 * A date range's capped count (at most EXACT_TOTAL_CAP + 1) per resellers and range, with the
 * generation it was read at. Which invoices a range holds changes only with a write that bumps the
 * generation (an insert, a delete, a move, a new issue date; migration 0012), so while it is
 * current the page statement takes the kept count instead of counting 10,001 index entries again
 * (about two thirds of such a page's PostgreSQL time). An entry is a few numbers.
 */
const dateCounts = new Lru<{ count: number; generation: number }>(10_000);

/**
 * A kept page, in one snapshot: whether its ids are still the page (the generation is the page's, or
 * no change logged since the page's generation matches its filter, $3-$6; list-page-cache.ts), and
 * then its rows' versions and, only when one of them is not the kept one ($8: a payment, a status
 * change), the rows' JSON in the kept order. A row's xmin is the transaction that wrote that version,
 * so equal versions are equal rows and the kept JSON is theirs (a frozen row reads as another xmin:
 * rebuilt, never stale); building 50 rows' JSON was most of a kept page's PostgreSQL time. The log
 * holds every generation after the page's only while it holds the next one (pruned oldest first;
 * every bump logs at least one row), and its range is scanned only up to LIST_CHANGES_KEPT. Every
 * value goes through an initplan, out of the planner's sight, so PostgreSQL keeps the generic plan
 * instead of planning this statement again on every request (0.8 ms of PostgreSQL CPU per repeat
 * against 0.3 ms, one connection at a million invoices).
 */
const KEPT_PAGE = `with g as materialized (select n from invoice_list_generation),
    m as materialized (select case when g.n <> (select $2::bigint) and (select $7::boolean) and g.n - (select $2::bigint) <= ${LIST_CHANGES_KEPT}
      and (select min(c.generation) from invoice_list_changes c where c.generation > (select $2::bigint)) = (select $2::bigint) + 1
      then (select coalesce(array_agg(case when c.every or c.invoice_id is null then 0 when c.added then c.invoice_id else -c.invoice_id end), '{}')::text
        from (select c.every, c.invoice_id, c.added from invoice_list_changes c where c.generation > (select $2::bigint) and c.generation <= g.n
          and (c.every or (((select $3::int[]) is null or c.reseller_id = any((select $3::int[])::int[]))
            and ((select $4::date) is null or c.issue_date >= (select $4::date)) and ((select $5::date) is null or c.issue_date <= (select $5::date))
            and ((select $6::text) is null or c.search_text like (select $6::text))))
          limit ${MAX_PAGE_MOVES + 1}) c) end as moves from g),
    c as materialized (select g.n = (select $2::bigint) or coalesce(m.moves = '{}', false) as current from g, m),
    v as materialized (select case when c.current then (select coalesce(array_agg(i.xmin order by p.k), '{}')::text
      from unnest((select $1::int[])) with ordinality p(id, k) join invoices i using (id)) end as versions from c)
  select g.n as generation, c.current, m.moves, v.versions,
    case when c.current and v.versions is distinct from (select $8::text) then (select ${invoiceListJson('p.k')}
      from unnest((select $1::int[])) with ordinality p(id, k) join invoices i using (id)) end as json
  from g, m, c, v`;

/**
 * A kept page in id order moved by the changes logged since it was read (planPageMove), in one
 * snapshot: the rows nearest before its first id and after its last, each read by walking the id
 * order from there with the list's filter, at most MOVE_WALK entries (a list that sparse is computed
 * again), then the page's ids, versions and JSON. Ids order the list, so the walk reads the pk
 * index (or invoices_search_idx, index-only, for a search alone) from a known place.
 */
const MOVE_WALK = 10_000;
const moveStatements = new Map<string, { name: string; text: string }>();

function moveStatement(order: 'asc' | 'desc', resellers: boolean, pattern: boolean): { name: string; text: string } {
  const key = `${order} ${resellers} ${pattern}`;
  let statement = moveStatements.get(key);
  if (statement) return statement;
  const cols = `i.id${resellers ? ', i.reseller_id' : ''}${pattern ? ', i.search_text' : ''}`;
  const conds = [
    resellers ? 'w.reseller_id = any($8::int[])' : '',
    pattern ? `w.search_text like $${resellers ? 9 : 8}::text` : '',
  ]
    .filter(Boolean)
    .join(' and ');
  const where = conds ? `where ${conds}` : '';
  // Before the page: ids greater than its first in a descending list.
  const [beforeOp, beforeDir, afterOp, afterDir] =
    order === 'desc' ? ['>', 'asc', '<', 'desc'] : ['<', 'desc', '>', 'asc'];
  // Each side is one walk that stops at its rows (a CTE read twice would be walked whole); when it
  // finds fewer than asked, a walk of MOVE_WALK entries says whether it ran out of list or of walk.
  const side = (op: string, dir: string, from: string, count: string) =>
    `select w.id from (select ${cols} from invoices i where i.id ${op} ${from}::int and ${count}::int > 0
      order by i.id ${dir} limit ${MOVE_WALK}) w ${where} order by w.id ${dir} limit ${count}::int`;
  const cut = (op: string, dir: string, from: string, count: string, rows: string) =>
    `((select count(*) from ${rows}) < ${count}::int and exists (select 1 from invoices i where i.id ${op} ${from}::int
      order by i.id ${dir} offset ${MOVE_WALK - 1} limit 1))`;
  const text = `with b as (${side(beforeOp, beforeDir, '$1', '$3')}),
      a as (${side(afterOp, afterDir, '$2', '$4')}),
      page as materialized (select id from (select id from b union all select unnest($5::int[]) union all select id from a) u
        order by id ${order} offset $6::int limit $7::int)
    select ${cut(beforeOp, beforeDir, '$1', '$3', 'b')} or ${cut(afterOp, afterDir, '$2', '$4', 'a')} as cut,
      (select coalesce(array_agg(id order by id ${order}), '{}')::text from page) as ids,
      (select coalesce(array_agg(i.xmin order by i.id ${order}), '{}')::text from page join invoices i using (id)) as versions,
      (select ${invoiceListJson(`i.id ${order}`)} from page join invoices i using (id)) as json`;
  statement = { name: `billing_list_move_${moveStatements.size}`, text };
  moveStatements.set(key, statement);
  return statement;
}

async function keptPage(key: string): Promise<{ json: string; total: number } | undefined> {
  // An entry's ids never change (a move keeps a new entry), so it is this request's snapshot.
  const page = listPages.get(key);
  if (!page) return undefined;
  // Kept JSON is served only for the ids it was built from: rows written by one transaction share
  // their versions, so equal versions of other ids would not tell another page's rows apart.
  const json = pageJsons.get(key);
  const kept = json?.ids === page.ids ? json : undefined;
  const db = await pgPool().connect();
  try {
    let checked = await checkPage(db, key, page, kept);
    if (checked && !('plan' in checked)) return checked;
    let served: { json: string; total: number } | undefined;
    if (checked) {
      // A page to move is checked again and moved in one snapshot (a read-only transaction), so that
      // the move's rows are those of the log it applies: between two statements, matching writes
      // every few milliseconds landed before most moves.
      await db.query('begin isolation level repeatable read read only');
      try {
        checked = await checkPage(db, key, page, kept);
        served = checked && 'plan' in checked ? await movedPage(db, key, page, checked) : checked;
      } catch (err) {
        // The statement's error is the one to report, not a failed rollback's.
        await db.query('rollback').catch(() => undefined);
        throw err;
      }
      await db.query('commit');
    }
    if (served) return served;
    if (listPages.get(key) === page) {
      listPages.delete(key);
      pageJsons.delete(key);
    }
    return undefined;
  } finally {
    db.release();
  }
}

/** A kept page checked: served as it is, a move planned, or neither (undefined: compute it again). */
async function checkPage(
  db: PoolClient,
  key: string,
  page: ListPage,
  kept: PageJson | undefined,
): Promise<{ json: string; total: number } | PlannedMove | undefined> {
  const { filter } = page;
  const {
    rows: [row],
  } = await db.query<{
    generation: string;
    current: boolean;
    moves: string | null;
    versions: string;
    json: string | null;
  }>({
    name: 'billing_list_kept_page',
    text: KEPT_PAGE,
    values: [
      page.ids,
      page.generation,
      filter.resellers,
      filter.from,
      filter.to,
      filter.pattern,
      filter.checkable,
      kept?.versions ?? null,
    ],
  });
  if (!row.current) return plannedMove(page, row.moves, Number(row.generation));
  // Confirmed at this generation: the next request checks only the changes logged after it.
  page.generation = Math.max(page.generation, Number(row.generation));
  if (row.json === null) return { json: kept!.json, total: page.total };
  keepJson(key, row.json, row.versions, page.ids);
  return { json: row.json, total: page.total };
}

interface PlannedMove {
  plan: PageMove;
  ids: number[];
  position: PagePosition;
  /** The generation the log was read to, the move's. */
  generation: number;
}

/** How the logged moves move a kept page in id order (page-moves.ts), or undefined: compute it again. */
function plannedMove(page: ListPage, moves: string | null, generation: number): PlannedMove | undefined {
  if (moves === null || !page.position) return undefined;
  const ids = parseIntArray(page.ids);
  const plan = planPageMove(ids, page.position, parseIntArray(moves));
  return plan && { plan, ids, position: page.position, generation };
}

/**
 * The kept page moved by its plan in the check's snapshot, kept and served; undefined when the list
 * is too sparse to walk.
 */
async function movedPage(
  db: PoolClient,
  key: string,
  page: ListPage,
  { plan, ids, position, generation: g }: PlannedMove,
): Promise<{ json: string; total: number } | undefined> {
  const { filter } = page;
  const s = moveStatement(position.order, filter.resellers !== null, filter.pattern !== null);
  const values: unknown[] = [
    ids[0],
    ids[ids.length - 1],
    plan.before,
    plan.after,
    plan.window,
    plan.skip,
    position.limit,
  ];
  if (filter.resellers !== null) values.push(filter.resellers);
  if (filter.pattern !== null) values.push(filter.pattern);
  const {
    rows: [row],
  } = await db.query<{ cut: boolean; ids: string; versions: string; json: string }>({
    name: s.name,
    text: s.text,
    values,
  });
  if (row.cut) return undefined;
  const next: ListPage = { ...page, ids: row.ids, total: page.total + plan.net, generation: g };
  // Concurrent requests move the same entry: the one at the latest generation stays.
  const current = listPages.get(key);
  if (!current || current.generation <= g) {
    listPages.set(key, next);
    keepJson(key, row.json, row.versions, row.ids);
  }
  return { json: row.json, total: next.total };
}

/**
 * Kept pages' JSON (PageJson), fewer than the pages: a page of 50 rows is about 27 KB of text, so
 * KEPT_JSON_PAGES of at most KEPT_JSON_CHARS each bound it to 64 MB per process; a page without
 * kept JSON builds it from its kept ids.
 */
const KEPT_JSON_PAGES = 1_000;
const KEPT_JSON_CHARS = 64 * 1024;

function keepJson(key: string, json: string, versions: string, ids: string): void {
  if (json.length <= KEPT_JSON_CHARS) pageJsons.set(key, { json, versions, ids });
  else pageJsons.delete(key);
}

/** One page as an API JSON array and its total (see the header for which total each list gets). */
export async function listInvoicesJson(scope: Scope, f: ListFilter): Promise<{ json: string; total: number }> {
  const r = await resellersOf(scope, f);
  if (r.ids?.length === 0) return { json: '[]', total: 0 };
  const key = keepableFilter(f)
    ? listPageKey({
        search: f.search,
        resellers: r.ids,
        from: f.from,
        to: f.to,
        order: f.order,
        limit: f.limit,
        offset: f.offset,
      })
    : undefined;
  // Pages are shared only where they are kept: with none kept every request computes its own.
  if (key === undefined || listPages.maxEntries === 0) return listPage(r, f, key);
  return sharedPages.run(key, () => listPage(r, f, key));
}

/**
 * Requests for one kept page that arrive while it is being read share the next read (AfterArrival):
 * under writes that reach a page every request found it changed and moved or computed it again, 50
 * at once for 50 callers of the same page; now at most one read runs and one waits, and each answer
 * was read after its request arrived. The key holds everything the page depends on.
 */
const sharedPages = new AfterArrival<{ json: string; total: number }>();

async function listPage(
  r: Resellers,
  f: ListFilter,
  key: string | undefined,
): Promise<{ json: string; total: number }> {
  const kept = key === undefined ? undefined : await keptPage(key);
  if (kept) return kept;
  // A number-like search reads its subscribers only when its own statement finds one (numberSearch).
  const guess = f.search !== undefined && numberSearch(f.search) ? NO_SUBSCRIBERS : undefined;
  const phone = f.searchPhone ?? NO_PHONE;
  let found = guess ?? (f.search === undefined ? undefined : await searchSubscribers(f.search, phone));
  let shape = shapeOf(f, r, found);
  const dateKey = datesKept(shape) ? JSON.stringify([r.ids ?? null, f.from ?? null, f.to ?? null]) : undefined;
  const keptCount = dateKey === undefined ? undefined : dateCounts.get(dateKey);
  const valuesOf = (subs: SearchSubscribers | undefined): Values => ({
    resellers: r.ids,
    treeRoot: r.root,
    status: f.status,
    subscriberId: f.subscriberId,
    from: f.from,
    to: f.to,
    search: f.search,
    searchPhone: phone,
    searchSubscribers: subs?.ids,
    searchOverCap: subs?.overCap,
    searchLowered: subs?.lowered,
    searchNumberLike: subs?.numberLike,
    keptCount: keptCount?.count,
    keptGeneration: keptCount?.generation,
    limit: f.limit,
    offset: f.offset,
  });
  let v = valuesOf(found);
  let { s, row } = await pageOf(shape, v);
  if (guess && row.subscribers) {
    // A subscriber matches the number-like search: its shape comes from the subscribers after all.
    found = await searchSubscribers(f.search!, phone);
    shape = shapeOf(f, r, found);
    v = valuesOf(found);
    ({ s, row } = await pageOf(shape, v));
  } else if (guess) found = { ...guess, lowered: row.lowered!, generation: row.generation! };
  // A number matching more than the cap: its prepared statement cut the matches short.
  if (row.spilled) ({ s, row } = await pageOf((shape = { ...shape, search: 'narrow' }), v));
  // The count (kept or fresh) and the generation come from one snapshot: keep them together.
  if (dateKey !== undefined && row.total >= 0)
    dateCounts.set(dateKey, { count: row.total, generation: row.generation! });
  const total =
    onlyResellers(shape) || statusCounted(shape)
      ? row.total
      : (totalFromPage(f.offset, f.limit, row.rowCount) ??
        (await totalFromCappedCount(row.total, () => estimateOf(s, v))));
  // A narrow search's page used the subscribers' ids read one statement earlier. A write committed
  // between the two changes the generation: such a page is served, as it would have been before, but
  // not kept, or it would be kept as current without a subscriber renamed into the search meanwhile.
  // A broad page is read by search_text in its own snapshot (the subscribers only said whether the
  // total is past the cap, an estimate then): it is kept, or matching writes landing between the two
  // statements would keep it from ever being kept.
  if (key !== undefined && (found === undefined || shape.search === 'broad' || row.generation === found.generation)) {
    const page: ListPage = {
      ids: row.ids!,
      total,
      generation: Number(row.generation!),
      filter: {
        resellers: r.ids ?? null,
        from: f.from ?? null,
        to: f.to ?? null,
        pattern: found?.lowered ?? null,
        checkable: !f.search?.includes('\u0001'),
      },
      // Only a search's page is moved: a move reads the page's rows again as computing it does, so it
      // saves only what the search's walk costs (a tree's page 100 cost PostgreSQL 2.5 ms moved at
      // every request against 1.5 ms computed; a broad search 2.0 against 9-11). A date range is
      // ordered by issue date first: its pages are computed again.
      position:
        f.search === undefined || f.from || f.to ? undefined : { order: f.order, offset: f.offset, limit: f.limit },
    };
    listPages.set(key, page);
    keepJson(key, row.json, row.versions!, page.ids);
  }
  return { json: row.json, total };
}

interface PageRow {
  json: string;
  rowCount: number;
  total: number;
  ids?: string;
  /** The rows' versions (xmin) in list order, as PostgreSQL's array text (KEPT_PAGE). */
  versions?: string;
  generation?: number;
  /** A number's matches passed the cap (numberMatches): the page is not the list's. */
  spilled?: boolean;
  /** A subscriber matches a number's search (numberSearchSubscribers): the page is not the list's. */
  subscribers?: boolean;
  /** A number's search pattern through PostgreSQL's lower() (SearchSubscribers.lowered). */
  lowered?: string;
}

/** One run of a shape's statement. */
async function pageOf(shape: Shape, v: Values): Promise<{ s: Statement; row: PageRow }> {
  const s = statementFor(shape);
  // A narrow search is planned with its values every time (unnamed): how many rows it matches
  // decides the plan, which a generic plan cannot know (the one a prepared union of both index
  // paths settled on took 1.3 s for a 10-match number search at a million invoices, not 3 ms).
  // A search of a few subscribers, or of a number alone, is prepared (FEW_SUBSCRIBERS, numberMatches).
  const query = { name: shape.search === 'narrow' ? undefined : s.name, text: s.text, values: s.values(v) };
  const {
    rows: [row],
  } = await pgPool().query<PageRow>(query);
  return { s, row };
}

/**
 * The planner's row estimate for a filter, kept a minute per statement and values: it comes from
 * table statistics, which change only when (auto)ANALYZE runs, so asking again every page would
 * cost a round trip and a planning for the same number. Bounded, least recently used dropped first.
 */
const estimates = new Lru<{ rows: number; until: number }>(1_000);
const ESTIMATE_TTL_MS = 60_000;

async function estimateOf(s: Statement, v: Values): Promise<number> {
  const values = s.estimate.values(v);
  // Hashed: a narrow search's values hold up to a thousand subscriber ids.
  const key = crypto
    .createHash('sha1')
    .update(JSON.stringify([s.name, values]))
    .digest('base64');
  const cached = estimates.get(key);
  if (cached && cached.until > Date.now()) return cached.rows;
  const res = await pgPool().query<{ 'QUERY PLAN': unknown }>({ text: s.estimate.text, values });
  const rows = planRows(res.rows[0]['QUERY PLAN']);
  estimates.set(key, { rows, until: Date.now() + ESTIMATE_TTL_MS });
  return rows;
}
