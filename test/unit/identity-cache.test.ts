/** The gateway's cache of manager rows: bounded age, shared loads, invalidation, failed loads not kept. */
import { IdentityCache, type Identity } from '../../services/gateway/identities';

const row = (id: number, active = true): Identity => ({
  id,
  active,
  role: 'admin',
  resellerId: null,
  permissions: [],
  tokenVersion: 0,
});

it('serves a row for at most maxAgeMs, then reads it again', async () => {
  let reads = 0;
  const cache = new IdentityCache(async (id) => (reads++, row(id)), 1000);
  await cache.get(1, 0);
  await cache.get(1, 999);
  expect(reads).toBe(1);
  await cache.get(1, 1000);
  expect(reads).toBe(2);
});

it('shares one read among concurrent requests, and invalidate forces the next read', async () => {
  let reads = 0;
  let active = true;
  const cache = new IdentityCache(async (id) => (reads++, row(id, active)), 60_000);
  await Promise.all([cache.get(7, 0), cache.get(7, 0), cache.get(7, 0)]);
  expect(reads).toBe(1);
  active = false;
  expect((await cache.get(7, 1))?.active).toBe(true);
  cache.invalidate(7);
  expect((await cache.get(7, 2))?.active).toBe(false);
});

it('does not keep a failed read, and stays within its bound', async () => {
  let fail = true;
  const cache = new IdentityCache(
    async (id) => {
      if (fail) throw new Error('database down');
      return row(id);
    },
    60_000,
    2,
  );
  await expect(cache.get(1, 0)).rejects.toThrow('database down');
  fail = false;
  expect(await cache.get(1, 1)).toEqual(row(1));
  await cache.get(2, 1);
  await cache.get(3, 1);
  let reads = 0;
  const counting = new IdentityCache(async (id) => (reads++, row(id)), 60_000, 2);
  await counting.get(1, 0);
  await counting.get(2, 0);
  await counting.get(3, 0);
  await counting.get(1, 0);
  expect(reads).toBe(4);
});
