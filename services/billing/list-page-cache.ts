/**
 * Pages of GET /api/invoices kept between requests (docs/billing.md, "Pages kept between
 * requests"): a search, a reseller's tree, a date range, or any of them together, as long as no
 * status or subscriber filter is set. Which invoices such a list holds, and in what order, changes
 * only with a write that bumps invoice_list_generation (migrations 0010, 0012); payments and status
 * changes do not. Each bump logs what it changed in invoice_list_changes (migration 0033): every
 * written invoice version's reseller, issue date and search_text. An entry holds the page's ids, in
 * list order, its total, its filter and the generation it is known current at; invoice-list.ts serves
 * it only after reading, in the statement that reads the rows, that generation unchanged or no change
 * logged since it that matches the filter, so it is never stale and its rows are always current. A
 * write elsewhere (another reseller's invoice, a subscriber the search does not match) keeps it. A
 * broad search costs about 17 ms of PostgreSQL per page at a million invoices and a deep page of a
 * tree skips thousands of index entries; a kept page is 50 rows read by id.
 *
 * Per process, in a shared/lru.ts map: least recently used entries go first past the bound.
 */
import { pgPool } from '../../shared/db/client';
import { intVar } from '../../shared/config';
import type { PagePosition } from './page-moves';

export interface ListPageKey {
  search: string | undefined;
  /** The list's resellers, as resolved for the caller (undefined: every reseller). */
  resellers: number[] | undefined;
  from: string | undefined;
  to: string | undefined;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** What a logged change is tested against: it matches when it could be in the list. */
export interface PageFilter {
  /** The list's resellers, as resolved for the caller (null: every reseller). */
  resellers: number[] | null;
  from: string | null;
  to: string | null;
  /** The search's LIKE pattern lower-cased, as search_text holds it (null: no search). */
  pattern: string | null;
  /**
   * False for a search holding U+0001, the separator of search_text's parts, which one LIKE on it
   * cannot test exactly: such a page is served only at its own generation.
   */
  checkable: boolean;
}

export interface ListPage {
  /** The page's ids in list order, as PostgreSQL's array text (`{3,2,1}`). */
  ids: string;
  total: number;
  /** Where the page is known current: read there, or confirmed there since (later only). */
  generation: number;
  filter: PageFilter;
  /** Where a search's page lies in its list, ordered by id, so that logged changes can move it (page-moves.ts). */
  position?: PagePosition;
}

/** A kept page's JSON as last read, served again while its rows' versions (xmin, in list order) stand. */
export interface PageJson {
  json: string;
  versions: string;
  /** The page's ids it was built from (ListPage.ids). */
  ids: string;
}

export function listPageKey(k: ListPageKey): string {
  return JSON.stringify([
    k.search ?? null,
    k.resellers ?? null,
    k.from ?? null,
    k.to ?? null,
    k.order,
    k.limit,
    k.offset,
  ]);
}

/** INVOICE_PAGE_CACHE_ENTRIES: pages kept per billing process; 0 keeps none. */
export function listPageEntriesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return intVar(env, 'INVOICE_PAGE_CACHE_ENTRIES', 10_000, 0);
}

/**
 * Generations of invoice_list_changes kept (and the most a kept page's check reads past its own):
 * about 20,000 rows of a few dozen bytes at one or two invoices per write. A page last confirmed
 * longer ago is computed again.
 */
export const LIST_CHANGES_KEPT = 10_000;

/**
 * Deletes the changes older than LIST_CHANGES_KEPT generations, oldest first, so the log stays a
 * prefix-less run and a page's check can tell when its part is gone (invoice-list.ts). Safe from every
 * billing process at once; an idle log is one index probe.
 */
export async function pruneListChanges(): Promise<number> {
  const res = await pgPool().query({
    name: 'billing_prune_list_changes',
    text: `delete from invoice_list_changes where generation <= (select n from invoice_list_generation) - $1::bigint`,
    values: [LIST_CHANGES_KEPT],
  });
  return res.rowCount ?? 0;
}
