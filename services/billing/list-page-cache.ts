/**
 * Pages of GET /api/invoices kept between requests (docs/billing.md, "Pages kept between
 * requests"): a search, a reseller's tree, a date range, or any of them together, as long as no
 * status or subscriber filter is set. Which invoices such a list holds, and in what order, changes
 * only when invoice_list_generation does (migrations 0010, 0012); payments and status changes do
 * not move it. An entry holds the page's ids, in list order, its total and the generation they were
 * read at; invoice-list.ts serves it only after reading that generation unchanged in the statement
 * that reads the rows, so it is never stale and its rows are always current. A broad search costs
 * about 30 ms of PostgreSQL per page at a million invoices and a deep page of a tree merges
 * thousands of index entries; a kept page is 50 rows read by id.
 *
 * Per process, in a shared/lru.ts map: least recently used entries go first past the bound.
 */
import { intVar } from '../../shared/config';

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

export interface ListPage {
  /** The page's ids in list order, as PostgreSQL's array text (`{3,2,1}`). */
  ids: string;
  total: number;
  generation: number;
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
