import { addDays } from '../../shared/billing/dates';
import { usageCover, type UsageCover } from '../../services/reports/usage-cover';

/** The days a cover adds up to, each with its multiplicity (a day read twice, or taken away, shows). */
function coveredDays(cover: UsageCover): Map<string, number> {
  const days = new Map<string, number>();
  const add = (from: string, to: string, sign: number) => {
    for (let d = from; d <= to; d = addDays(d, 1)) days.set(d, (days.get(d) ?? 0) + sign);
  };
  for (const m of cover.months) add(m, addDays(`${addDays(m, 31).slice(0, 7)}-01`, -1), 1);
  for (const r of cover.plus) add(r.from, r.to, 1);
  for (const r of cover.minus) add(r.from, r.to, -1);
  for (const [d, n] of days) if (n === 0) days.delete(d);
  return days;
}

describe('usageCover', () => {
  it('reads whole months at the month grain and a short partial month by its days', () => {
    expect(usageCover({ from: '2026-01-01', to: '2026-03-31' })).toEqual({
      months: ['2026-01-01', '2026-02-01', '2026-03-01'],
      plus: [],
      minus: [],
    });
    expect(usageCover({ from: '2026-01-30', to: '2026-02-03' })).toEqual({
      months: [],
      plus: [
        { from: '2026-01-30', to: '2026-01-31' },
        { from: '2026-02-01', to: '2026-02-03' },
      ],
      minus: [],
    });
  });

  it('reads most of a month as the month less its days outside the range', () => {
    // A year to the 29th of a 30-day month: that month whole, less its 30th.
    expect(usageCover({ from: '2025-11-29', to: '2026-11-29' })).toEqual({
      months: [
        '2025-12-01',
        '2026-01-01',
        '2026-02-01',
        '2026-03-01',
        '2026-04-01',
        '2026-05-01',
        '2026-06-01',
        '2026-07-01',
        '2026-08-01',
        '2026-09-01',
        '2026-10-01',
        '2026-11-01',
      ],
      plus: [{ from: '2025-11-29', to: '2025-11-30' }],
      minus: [{ from: '2026-11-30', to: '2026-11-30' }],
    });
    expect(usageCover({ from: '2026-02-02', to: '2026-02-27' })).toEqual({
      months: ['2026-02-01'],
      plus: [],
      minus: [
        { from: '2026-02-01', to: '2026-02-01' },
        { from: '2026-02-28', to: '2026-02-28' },
      ],
    });
  });

  it('reaches the last representable month without running past it', () => {
    expect(usageCover({ from: '9999-12-30', to: '9999-12-31' })).toEqual({
      months: [],
      plus: [{ from: '9999-12-30', to: '9999-12-31' }],
      minus: [],
    });
  });

  it('covers every day of any range exactly once', () => {
    const start = '2024-01-01';
    for (let i = 0; i < 120; i++) {
      const from = addDays(start, (i * 37) % 800);
      const to = addDays(from, (i * 53) % 420);
      const days = coveredDays(usageCover({ from, to }));
      const expected = new Map<string, number>();
      for (let d = from; d <= to; d = addDays(d, 1)) expected.set(d, 1);
      expect(days).toEqual(expected);
    }
  });
});
