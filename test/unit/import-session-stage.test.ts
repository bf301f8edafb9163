/**
 * The ranges a bulk load stages its sessions in (shared/import/session-stage.ts): cut from a sample
 * in equal parts, every id in exactly one range, ranges in the ids' order.
 */
import { createHash } from 'node:crypto';
import { rangeBounds, rangeCount, rangeOf } from '../../shared/import/session-stage';

const md5 = (k: number) => createHash('md5').update(String(k)).digest('hex');

describe('rangeCount', () => {
  test('about 500,000 sessions a range, at least two, at most 64', () => {
    expect(rangeCount(0)).toBe(2);
    expect(rangeCount(1_000_000)).toBe(2);
    expect(rangeCount(10_000_000)).toBe(20);
    expect(rangeCount(10_000_001)).toBe(21);
    expect(rangeCount(1e9)).toBe(64);
  });
});

describe('rangeBounds and rangeOf', () => {
  test('a sample splits into ranges of equal size, and ids from the same source spread about evenly', () => {
    const sample = Array.from({ length: 20_000 }, (_, k) => md5(k));
    const bounds = rangeBounds(sample, 20);
    expect(bounds).toHaveLength(19);
    expect([...bounds].sort()).toEqual(bounds);
    const inSample = new Array<number>(20).fill(0);
    for (const uid of sample) inSample[rangeOf(bounds, uid)]++;
    expect(inSample).toEqual(new Array(20).fill(1000));
    const later = new Array<number>(20).fill(0);
    for (let k = 20_000; k < 220_000; k++) later[rangeOf(bounds, md5(k))]++;
    for (const n of later) expect(n).toBeGreaterThan(8_000);
    expect(later.reduce((a, b) => a + b, 0)).toBe(200_000);
  });

  test('ranges follow the ids’ order; a bound belongs to the range it opens', () => {
    const bounds = ['b', 'd', 'f'];
    expect(['a', 'b', 'c', 'd', 'e', 'f', 'g', ''].map((u) => rangeOf(bounds, u))).toEqual([0, 1, 1, 2, 2, 3, 3, 0]);
    const ids = Array.from({ length: 500 }, (_, k) => md5(k)).sort();
    const ranges = ids.map((u) => rangeOf(rangeBounds(ids.slice(0, 50), 8), u));
    expect([...ranges].sort((a, b) => a - b)).toEqual(ranges);
  });

  test('a sample smaller than the ranges leaves some empty; every id still has one range', () => {
    const bounds = rangeBounds(['m'], 4);
    expect(bounds).toEqual(['m', 'm', 'm']);
    expect(rangeOf(bounds, 'a')).toBe(0);
    expect(rangeOf(bounds, 'm')).toBe(3);
    expect(rangeOf(bounds, 'z')).toBe(3);
  });
});
