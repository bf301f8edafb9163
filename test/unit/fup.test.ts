import fc from 'fast-check';
import {
  effectiveQuotaGb,
  fupLevel,
  GIB,
  tierRate,
  TIERLESS_DAILY_LEVEL,
  TIERLESS_MONTHLY_LEVEL,
  type Tier,
} from '../../shared/domain/fup';

const tiers: Tier[] = [
  { level: 1, threshold_gb: 100, rate_limit: '10M/10M' },
  { level: 2, threshold_gb: 200, rate_limit: '4M/4M' },
  { level: 3, threshold_gb: 300, rate_limit: '1M/1M' },
];
const usage = (dailyGb: number, monthlyGb: number, extraGb = 0) => ({
  dailyUsedBytes: dailyGb * GIB,
  monthlyUsedBytes: monthlyGb * GIB,
  extraBytes: extraGb * GIB,
});
const limits = (
  extra: Partial<{ dailyQuotaGb: number | null; monthlyQuotaGb: number | null; tiers: Tier[] }> = {},
) => ({
  dailyQuotaGb: null,
  monthlyQuotaGb: null,
  tiers,
  ...extra,
});

describe('fupLevel', () => {
  it('is 0 below every threshold and quota', () => {
    expect(fupLevel(usage(5, 99.9), limits({ dailyQuotaGb: 10, monthlyQuotaGb: 500 }))).toBe(0);
  });

  it('climbs the monthly tiers as usage passes each threshold (threshold reached = in the tier)', () => {
    expect(fupLevel(usage(0, 100), limits())).toBe(1);
    expect(fupLevel(usage(0, 250), limits())).toBe(2);
    expect(fupLevel(usage(0, 300), limits())).toBe(3);
  });

  it('top-up data moves every threshold and the monthly quota up by its size', () => {
    expect(fupLevel(usage(0, 150, 60), limits())).toBe(0);
    expect(fupLevel(usage(0, 250, 60), limits())).toBe(1);
    expect(fupLevel(usage(0, 90, 10), limits({ monthlyQuotaGb: 90, tiers: [tiers[0]] }))).toBe(0);
    expect(fupLevel(usage(0, 100, 10), limits({ monthlyQuotaGb: 90, tiers: [tiers[0]] }))).toBe(1);
  });

  it('a used-up daily quota drops to the first tier; a used-up monthly quota to the last', () => {
    expect(fupLevel(usage(10, 10), limits({ dailyQuotaGb: 10 }))).toBe(1);
    expect(fupLevel(usage(1, 50), limits({ monthlyQuotaGb: 50 }))).toBe(3);
    const upper = [tiers[1], tiers[2]];
    expect(fupLevel(usage(10, 10), limits({ dailyQuotaGb: 10, tiers: upper }))).toBe(2);
  });

  it('0 or null quotas and thresholds are no limit', () => {
    expect(
      fupLevel(
        usage(1000, 9000),
        limits({ dailyQuotaGb: 0, monthlyQuotaGb: null, tiers: [{ level: 1, threshold_gb: 0, rate_limit: '1M' }] }),
      ),
    ).toBe(0);
    expect(fupLevel(usage(1000, 9000), limits({ dailyQuotaGb: 0, monthlyQuotaGb: null, tiers: [] }))).toBe(0);
  });

  it('without tiers the level reports the quota state: 1 for the daily quota, 3 for the monthly one', () => {
    const tierless = (d: number | null, m: number | null) => limits({ dailyQuotaGb: d, monthlyQuotaGb: m, tiers: [] });
    expect(fupLevel(usage(0.5, 0.5), tierless(1, 10))).toBe(0);
    expect(fupLevel(usage(1, 1), tierless(1, 10))).toBe(1);
    expect(fupLevel(usage(1, 10), tierless(1, 10))).toBe(3);
    expect(fupLevel(usage(0, 10), tierless(null, 10))).toBe(3);
    // Top-up data sits on top of the monthly quota here too.
    expect(fupLevel(usage(0, 10, 5), tierless(null, 10))).toBe(0);
  });

  it('ignores tiers with a level outside 1..3', () => {
    expect(fupLevel(usage(0, 500), limits({ tiers: [{ level: 7, threshold_gb: 1, rate_limit: 'x' }] }))).toBe(0);
  });

  const tierArb = fc.uniqueArray(
    fc.record({
      level: fc.integer({ min: 1, max: 3 }),
      threshold_gb: fc.double({ min: 0, max: 10_000, noNaN: true }),
      rate_limit: fc.constant('1M/1M'),
    }),
    { selector: (t) => t.level, maxLength: 3 },
  );
  const quotaArb = fc.option(fc.double({ min: 0, max: 10_000, noNaN: true }), { nil: null });
  const bytesArb = fc.integer({ min: 0, max: 20_000 * GIB });

  it("property: the level is 0 or one of the plan's tier levels (1 or 3 without tiers)", () => {
    fc.assert(
      fc.property(tierArb, quotaArb, quotaArb, bytesArb, bytesArb, bytesArb, (ts, d, m, du, mu, ex) => {
        const level = fupLevel(
          { dailyUsedBytes: du, monthlyUsedBytes: mu, extraBytes: ex },
          { dailyQuotaGb: d, monthlyQuotaGb: m, tiers: ts },
        );
        const allowed = ts.length ? ts.map((t) => t.level) : [TIERLESS_DAILY_LEVEL, TIERLESS_MONTHLY_LEVEL];
        expect(level === 0 || allowed.includes(level)).toBe(true);
      }),
    );
  });

  it('property: more usage never lowers the level; more top-up never raises it', () => {
    fc.assert(
      fc.property(tierArb, quotaArb, quotaArb, bytesArb, bytesArb, bytesArb, bytesArb, (ts, d, m, du, mu, ex, more) => {
        const l = { dailyQuotaGb: d, monthlyQuotaGb: m, tiers: ts };
        const base = fupLevel({ dailyUsedBytes: du, monthlyUsedBytes: mu, extraBytes: ex }, l);
        expect(
          fupLevel({ dailyUsedBytes: du + more, monthlyUsedBytes: mu + more, extraBytes: ex }, l),
        ).toBeGreaterThanOrEqual(base);
        expect(fupLevel({ dailyUsedBytes: du, monthlyUsedBytes: mu, extraBytes: ex + more }, l)).toBeLessThanOrEqual(
          base,
        );
      }),
    );
  });

  it('property: no usage, no throttle', () => {
    fc.assert(
      fc.property(tierArb, quotaArb, quotaArb, (ts, d, m) => {
        expect(
          fupLevel(
            { dailyUsedBytes: 0, monthlyUsedBytes: 0, extraBytes: 0 },
            { dailyQuotaGb: d, monthlyQuotaGb: m, tiers: ts },
          ),
        ).toBe(0);
      }),
    );
  });
});

describe('tierRate and effectiveQuotaGb', () => {
  it("gives the tier's rate, null at level 0 or for a level the plan lacks", () => {
    expect(tierRate(tiers, 2)).toBe('4M/4M');
    expect(tierRate(tiers, 0)).toBeNull();
    expect(tierRate([tiers[0]], 3)).toBeNull();
  });

  it('takes the subscriber override over the plan, numeric strings as numbers', () => {
    expect(effectiveQuotaGb('5.000', '10.000')).toBe(5);
    expect(effectiveQuotaGb(null, '10.000')).toBe(10);
    expect(effectiveQuotaGb(null, null)).toBeNull();
  });
});
