import { ConfigError } from '../../shared/config';
import { listPageEntriesFromEnv, listPageKey, type ListPageKey } from '../../services/billing/list-page-cache';

describe('kept list page keys and bound', () => {
  it('keys every part of a page: search, resellers, dates, order, limit, offset', () => {
    const base: ListPageKey = {
      search: 'User 1',
      resellers: undefined,
      from: undefined,
      to: undefined,
      order: 'desc',
      limit: 50,
      offset: 0,
    };
    const variants: ListPageKey[] = [
      { ...base, search: 'User 12' },
      { ...base, search: undefined },
      { ...base, resellers: [1] },
      { ...base, resellers: [1, 2] },
      { ...base, resellers: [] },
      { ...base, from: '2025-01-01' },
      { ...base, to: '2025-01-01' },
      { ...base, order: 'asc' },
      { ...base, limit: 49 },
      { ...base, offset: 50 },
    ];
    const keys = new Set([base, ...variants].map(listPageKey));
    expect(keys.size).toBe(variants.length + 1);
    expect(listPageKey({ ...base, resellers: [1, 2] })).toBe(listPageKey({ ...base, resellers: [1, 2] }));
  });

  it('INVOICE_PAGE_CACHE_ENTRIES: 10,000 by default, 0 or more', () => {
    expect(listPageEntriesFromEnv({})).toBe(10_000);
    expect(listPageEntriesFromEnv({ INVOICE_PAGE_CACHE_ENTRIES: '0' })).toBe(0);
    expect(() => listPageEntriesFromEnv({ INVOICE_PAGE_CACHE_ENTRIES: '-1' })).toThrow(ConfigError);
  });
});
