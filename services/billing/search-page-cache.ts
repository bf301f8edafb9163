/**
 * Search pages of GET /api/invoices kept between requests (docs/billing.md, "Search pages kept
 * between requests"). A broad search costs about 30 ms of PostgreSQL per page at a million invoices,
 * which no plan makes 30 times cheaper; what it shows changes only when invoice_list_generation
 * does (migration 0010). An entry holds the page's ids, in list order, its total and the generation
 * they were read at; invoice-list.ts serves it only after reading that generation unchanged in the
 * statement that reads the rows, so it is never stale and its rows are always current.
 *
 * Pure and per process: least recently used entries go first past `maxEntries`.
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

export class SearchPageCache {
  /** A Map iterates in insertion order: re-inserting on each hit keeps the least recent first. */
  private readonly pages = new Map<string, SearchPage>();

  constructor(readonly maxEntries: number) {}

  get(key: string): SearchPage | undefined {
    const page = this.pages.get(key);
    if (page) {
      this.pages.delete(key);
      this.pages.set(key, page);
    }
    return page;
  }

  set(key: string, page: SearchPage): void {
    if (this.maxEntries === 0) return;
    this.pages.delete(key);
    if (this.pages.size >= this.maxEntries) this.pages.delete(this.pages.keys().next().value!);
    this.pages.set(key, page);
  }

  delete(key: string): void {
    this.pages.delete(key);
  }
}
