import { MAX_WORD_ROWS, type NameSample, rareWordPattern, wordTrigrams } from '../../services/billing/name-lookup';

/** A sample of 100,000 names where `user` is in every one, `isp` in most and `bench` in half. */
const sample: NameSample = {
  shares: new Map([
    ['use', 1],
    ['ser', 1],
    ['ben', 0.5],
    ['enc', 0.5],
    ['nch', 0.5],
    ['543', 0.004],
    ['432', 0.003],
    ['321', 0.005],
    ['isp', 0.9],
  ]),
  unseen: 0.0001,
  rows: 100_000,
};

describe('rareWordPattern: the word of a name search the full-name index looks up alone', () => {
  it('gives a word the trigrams pg_trgm looks up for %word%', () => {
    expect(wordTrigrams('54321')).toEqual(['543', '432', '321']);
    expect(wordTrigrams('ab')).toEqual([]);
    expect(wordTrigrams('حسن')).toEqual(['حسن']);
  });

  it('picks the word whose rarest trigram is rarest, lower-cased', () => {
    expect(rareWordPattern('User 54321', sample)).toBe('%54321%');
    expect(rareWordPattern('Bench USER 54321', sample)).toBe('%54321%');
    // Unseen trigrams are as rare as one sampled name: 10 rows.
    expect(rareWordPattern('user Zyxw', sample)).toBe('%zyxw%');
    expect(rareWordPattern('user@isp-zyxw', sample)).toBe('%zyxw%');
  });

  it('looks the whole pattern up when a word would not narrow it', () => {
    // One word: the word is the pattern.
    expect(rareWordPattern('54321', sample)).toBeUndefined();
    // Words under 3 characters have no trigram: `User 1` has one word.
    expect(rareWordPattern('User 1', sample)).toBeUndefined();
    // Every word is common: more than MAX_WORD_ROWS names to check.
    expect(rareWordPattern('bench user', sample)).toBeUndefined();
    expect(0.5 * sample.rows).toBeGreaterThan(MAX_WORD_ROWS);
    // No sample yet (no subscribers at start).
    expect(rareWordPattern('User 54321', undefined)).toBeUndefined();
  });

  it('a word as rare as MAX_WORD_ROWS names is looked up, one more is not', () => {
    const edge = (rows: number): NameSample => ({
      ...sample,
      shares: new Map([...sample.shares, ['abc', rows / sample.rows]]),
    });
    expect(rareWordPattern('user abc', edge(MAX_WORD_ROWS))).toBe('%abc%');
    expect(rareWordPattern('user abc', edge(MAX_WORD_ROWS + 1))).toBeUndefined();
  });
});
