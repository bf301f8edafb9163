import fc from 'fast-check';
import { divRoundHalfUp, formatMinor, fromMinor, percentOf, toMinor } from '../../shared/money';

describe('money', () => {
  it('converts decimals to minor units by currency exponent', () => {
    expect(toMinor(10.05, 'USD')).toBe(1005);
    expect(toMinor(0.1, 'USD')).toBe(10);
    expect(toMinor(1.234, 'KWD')).toBe(1234);
    expect(toMinor(500, 'JPY')).toBe(500);
    expect(() => toMinor(1.005, 'USD')).toThrow(RangeError);
    expect(() => toMinor(1.5, 'JPY')).toThrow(RangeError);
  });

  it('round-trips every amount exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e13, max: 1e13 }), fc.constantFrom('USD', 'JPY', 'KWD'), (minor, currency) => {
        expect(toMinor(fromMinor(minor, currency), currency)).toBe(minor);
      }),
    );
  });

  it('rounds half away from zero', () => {
    expect(divRoundHalfUp(5n, 2n)).toBe(3n);
    expect(divRoundHalfUp(-5n, 2n)).toBe(-3n);
    expect(divRoundHalfUp(4n, 3n)).toBe(1n);
    expect(percentOf(1005, '7.5')).toBe(75);
    expect(percentOf(1010, 5)).toBe(51);
  });

  it('formats with separators', () => {
    expect(formatMinor(123456789, 'USD')).toBe('1,234,567.89');
    expect(formatMinor(-5, 'USD')).toBe('-0.05');
  });
});
