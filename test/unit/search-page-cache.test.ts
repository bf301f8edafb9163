import { ConfigError } from '../../shared/config';
import { SearchPageCache, searchPageEntriesFromEnv, searchPageKey, type SearchPageKey } from '../../services/billing/search-page-cache';

const page = (generation: number) => ({ ids: [3, 2, 1], total: 3, generation });

describe('SearchPageCache', () => {
  it('drops the least recently used entry past its bound; a hit makes an entry recent', () => {
    const cache = new SearchPageCache(2);
    cache.set('a', page(1));
    cache.set('b', page(1));
    expect(cache.get('a')).toEqual(page(1));
    cache.set('c', page(1));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual(page(1));
    expect(cache.get('c')).toEqual(page(1));
  });

  it('replaces an entry in place and forgets a deleted one', () => {
    const cache = new SearchPageCache(2);
    cache.set('a', page(1));
    cache.set('a', page(2));
    cache.set('b', page(1));
    // One entry for 'a': 'b' did not push it out of a bound of 2.
    expect(cache.get('a')).toEqual(page(2));
    expect(cache.get('b')).toEqual(page(1));
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps nothing with a bound of 0', () => {
    const cache = new SearchPageCache(0);
    cache.set('a', page(1));
    expect(cache.get('a')).toBeUndefined();
  });

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
