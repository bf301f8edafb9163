/**
 * Search pages of GET /api/invoices kept between requests (docs/billing.md, "Search pages kept
 * between requests"). A broad search costs about 30 ms of PostgreSQL per page at a million invoices,
 * which no plan makes 30 times cheaper; what it shows changes only when invoice_list_generation
 * does (migration 0010). An entry holds the page's ids, in list order, its total and the generation
 * they were read at; invoice-list.ts serves it only after reading that generation unchanged in the
 * statement that reads the rows, so it is never stale and its rows are always current.
 *
 * Per process, in a shared/lru.ts map: least recently used entries go first past the bound.
 */
import { intVar } from '../../shared/config';

export interface SearchPageKey {
  search: string;
  /** The list's resellers, as resolved for the caller (undefined: every reseller). */
  resellers: number[] | undefined;
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export interface SearchPage {
  ids: number[];
  total: number;
  generation: number;
}

export function searchPageKey(k: SearchPageKey): string {
  return JSON.stringify([k.search, k.resellers ?? null, k.order, k.limit, k.offset]);
}

/** INVOICE_SEARCH_CACHE_ENTRIES: pages kept per billing process; 0 keeps none. */
export function searchPageEntriesFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return intVar(env, 'INVOICE_SEARCH_CACHE_ENTRIES', 10_000, 0);
}
