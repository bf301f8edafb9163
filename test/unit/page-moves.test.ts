import { MAX_PAGE_MOVES, parseIntArray, planPageMove } from '../../services/billing/page-moves';

const desc = (offset: number, limit = 3) => ({ order: 'desc' as const, offset, limit });

describe('planPageMove', () => {
  it('puts new ids above page 1 into the page and counts them', () => {
    expect(planPageMove([9, 7, 5], desc(0), [12, 11])).toEqual({
      before: 0,
      after: 0,
      window: [12, 11, 9, 7, 5],
      skip: 0,
      net: 2,
    });
  });

  it('reads the nearest rows before a later page when rows were added before it, and skips when rows left', () => {
    expect(planPageMove([9, 7, 5], desc(3), [20])).toMatchObject({ before: 1, after: 0, skip: 0, net: 1 });
    expect(planPageMove([9, 7, 5], desc(3), [-20])).toMatchObject({
      before: 0,
      after: 1,
      window: [9, 7, 5],
      skip: 1,
      net: -1,
    });
  });

  it('applies changes inside the page and fills it from after its last id', () => {
    expect(planPageMove([9, 7, 5], desc(3), [-7, 8])).toEqual({
      before: 0,
      after: 0,
      window: [9, 8, 5],
      skip: 0,
      net: 0,
    });
    expect(planPageMove([9, 7, 5], desc(3), [-7])).toEqual({ before: 0, after: 1, window: [9, 5], skip: 0, net: -1 });
    // A version removed and added again (an update that stays in the list) changes nothing.
    expect(planPageMove([9, 7, 5], desc(3), [-7, 7, 2])).toEqual({
      before: 0,
      after: 0,
      window: [9, 7, 5],
      skip: 0,
      net: 1,
    });
  });

  it('takes rows added after a page that ended the list', () => {
    expect(planPageMove([5, 3], desc(3), [1])).toEqual({ before: 0, after: 0, window: [5, 3, 1], skip: 0, net: 1 });
    expect(planPageMove([3, 5], { order: 'asc', offset: 0, limit: 3 }, [9, 1])).toEqual({
      before: 0,
      after: 0,
      window: [1, 3, 5, 9],
      skip: 0,
      net: 2,
    });
  });

  it('refuses what the kept page cannot be: computed again instead', () => {
    expect(planPageMove([], desc(0), [4])).toBeUndefined();
    expect(planPageMove([9, 7, 5], desc(0), [0])).toBeUndefined();
    expect(planPageMove([9, 7, 5], desc(0), [7])).toBeUndefined();
    expect(planPageMove([9, 7, 5], desc(0), [-8])).toBeUndefined();
    expect(planPageMove([9, 7, 5], desc(0), [-20])).toBeUndefined();
    expect(planPageMove([9, 7, 5], desc(0), [4, 4])).toBeUndefined();
    expect(planPageMove([5, 3], desc(3), [-1])).toBeUndefined();
    expect(
      planPageMove(
        [9, 7, 5],
        desc(0),
        Array.from({ length: MAX_PAGE_MOVES + 1 }, (_, k) => 100 + k),
      ),
    ).toBeUndefined();
  });

  it('reads PostgreSQL array text', () => {
    expect(parseIntArray('{}')).toEqual([]);
    expect(parseIntArray('{3,2,1}')).toEqual([3, 2, 1]);
  });
});
