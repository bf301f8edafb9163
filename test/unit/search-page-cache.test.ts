import { ConfigError } from '../../shared/config';
import { searchPageEntriesFromEnv, searchPageKey, type SearchPageKey } from '../../services/billing/search-page-cache';

describe('search page keys and bound', () => {
  it('keys every part of a page: search, resellers, order, limit, offset', () => {
    const base: SearchPageKey = { search: 'User 1', resellers: undefined, order: 'desc', limit: 50, offset: 0 };
    const variants: SearchPageKey[] = [
      { ...base, search: 'User 12' }, { ...base, resellers: [1] }, { ...base, resellers: [1, 2] }, { ...base, resellers: [] },
      { ...base, order: 'asc' }, { ...base, limit: 49 }, { ...base, offset: 50 },
    ];
    const keys = new Set([base, ...variants].map(searchPageKey));
    expect(keys.size).toBe(variants.length + 1);
    expect(searchPageKey({ ...base, resellers: [1, 2] })).toBe(searchPageKey({ ...base, resellers: [1, 2] }));
  });

  it('INVOICE_SEARCH_CACHE_ENTRIES: 10,000 by default, 0 or more', () => {
    expect(searchPageEntriesFromEnv({})).toBe(10_000);
    expect(searchPageEntriesFromEnv({ INVOICE_SEARCH_CACHE_ENTRIES: '0' })).toBe(0);
    expect(() => searchPageEntriesFromEnv({ INVOICE_SEARCH_CACHE_ENTRIES: '-1' })).toThrow(ConfigError);
  });
});
