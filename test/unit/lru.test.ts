import { Lru } from '../../shared/lru';

const page = (generation: number) => ({ ids: '{3,2,1}', total: 3, generation });

describe('Lru', () => {
  it('drops the least recently used entry past its bound; a hit makes an entry recent', () => {
    const cache = new Lru<ReturnType<typeof page>>(2);
    cache.set('a', page(1));
    cache.set('b', page(1));
    expect(cache.get('a')).toEqual(page(1));
    cache.set('c', page(1));
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toEqual(page(1));
    expect(cache.get('c')).toEqual(page(1));
  });

  it('replaces an entry in place and forgets a deleted one', () => {
    const cache = new Lru<ReturnType<typeof page>>(2);
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
    const cache = new Lru<ReturnType<typeof page>>(0);
    cache.set('a', page(1));
    expect(cache.get('a')).toBeUndefined();
  });
});
