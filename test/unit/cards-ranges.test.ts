/** Issue 27: a card sheet printed in parts (services/cards/ranges.ts). */
import {
  erasePins,
  overlapText,
  requestedRange,
  sheetMaxCards,
  unprintedRanges,
  withPrinted,
} from '../../services/cards/ranges';

const failure = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return [(err as { code?: number }).code, (err as Error).message];
  }
  return undefined;
};

describe('requestedRange', () => {
  it('defaults to the whole batch and takes from and to as given', () => {
    expect(requestedRange(30, 10)).toEqual({ from: 1, to: 30 });
    expect(requestedRange(30, 10, 11, 20)).toEqual({ from: 11, to: 20 });
    expect(requestedRange(30, 10, 21)).toEqual({ from: 21, to: 30 });
    expect(requestedRange(100_000, 10, 99_501, 100_000)).toEqual({ from: 99_501, to: 100_000 });
  });

  it('refuses a range outside the batch or reversed with 400', () => {
    expect(failure(() => requestedRange(30, 10, 1, 31))).toEqual([
      400,
      "to must be at most 30 (the batch's last card)",
    ]);
    expect(failure(() => requestedRange(30, 10, 31))).toEqual([400, "from must be at most 30 (the batch's last card)"]);
    expect(failure(() => requestedRange(30, 10, 20, 11))).toEqual([400, 'from must not be greater than to']);
  });

  it('refuses more than one sheet holds: 500 cards, and 50 pages', () => {
    expect(sheetMaxCards(10)).toBe(500);
    expect(sheetMaxCards(40)).toBe(500);
    expect(sheetMaxCards(2)).toBe(100);
    expect(requestedRange(5000, 10, 501, 1000)).toEqual({ from: 501, to: 1000 });
    expect(failure(() => requestedRange(5000, 10))).toEqual([
      400,
      'a sheet holds at most 500 cards (500 cards, 50 pages at per_page 10); cards 1-5000 are 5000: ' +
        'print them in parts with from and to, e.g. from=1&to=500',
    ]);
    expect(failure(() => requestedRange(5000, 1, 101, 151))?.[1]).toContain('at most 50 cards');
  });
});

describe('printed ranges', () => {
  const printed = [
    { from: 11, to: 20, at: '2026-11-26T10:00:00.000Z' },
    { from: 31, to: 40, at: '2026-11-26T11:00:00.000Z' },
  ];

  it('names the printed ranges a request shares a card with', () => {
    expect(overlapText(printed, { from: 1, to: 10 })).toBe('');
    expect(overlapText(printed, { from: 21, to: 30 })).toBe('');
    expect(overlapText(printed, { from: 20, to: 20 })).toBe('11-20');
    expect(overlapText(printed, { from: 1, to: 50 })).toBe('11-20, 31-40');
  });

  it('keeps the ranges in card order and finds what is left', () => {
    const all = withPrinted(printed, { from: 1, to: 10, at: '2026-11-26T12:00:00.000Z' });
    expect(all.map((r) => r.from)).toEqual([1, 11, 31]);
    expect(unprintedRanges(50, all)).toEqual([
      { from: 21, to: 30 },
      { from: 41, to: 50 },
    ]);
    expect(unprintedRanges(40, all)).toEqual([{ from: 21, to: 30 }]);
    expect(unprintedRanges(5, [])).toEqual([{ from: 1, to: 5 }]);
  });

  it('blanks the PINs of a printed range, and leaves none once all are printed', () => {
    const pins = ['a', 'b', 'c', 'd'];
    expect(erasePins(pins, { from: 2, to: 3 })).toEqual(['a', '', '', 'd']);
    expect(erasePins(['', 'b', 'c', ''], { from: 2, to: 3 })).toBeNull();
    expect(pins).toEqual(['a', 'b', 'c', 'd']);
  });
});
