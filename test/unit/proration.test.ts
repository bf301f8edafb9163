import fc from 'fast-check';
import { daysBetween, prorate } from '../../shared/domain/proration';
import { addDays } from '../../shared/billing/dates';

describe('prorate', () => {
  it('credit and charge each rounded once, half-up', () => {
    // 10 of 30 days left: credit 3000 x 10/30 = 1000, charge 4500 x 10/30 = 1500.
    expect(
      prorate({
        oldPrice: 3000,
        oldPeriodDays: 30,
        newPrice: 4500,
        newPeriodDays: 30,
        today: '2024-03-01',
        expiryDate: '2024-03-11',
      }),
    ).toEqual({ daysRemaining: 10, oldUnusedCredit: 1000, newServiceCharge: 1500, netAmountDue: 500 });
    // 1000 x 1/3 = 333.33 -> 333; 2000 x 1/3 = 666.67 -> 667.
    expect(
      prorate({
        oldPrice: 1000,
        oldPeriodDays: 3,
        newPrice: 2000,
        newPeriodDays: 3,
        today: '2024-03-01',
        expiryDate: '2024-03-02',
      }),
    ).toEqual({ daysRemaining: 1, oldUnusedCredit: 333, newServiceCharge: 667, netAmountDue: 334 });
  });

  it('an expired subscriber has nothing to credit or charge', () => {
    expect(
      prorate({
        oldPrice: 3000,
        oldPeriodDays: 30,
        newPrice: 4500,
        newPeriodDays: 30,
        today: '2024-03-10',
        expiryDate: '2024-03-01',
      }),
    ).toEqual({ daysRemaining: 0, oldUnusedCredit: 0, newServiceCharge: 0, netAmountDue: 0 });
  });

  it('refuses a non-positive period', () => {
    expect(() =>
      prorate({
        oldPrice: 1,
        oldPeriodDays: 0,
        newPrice: 1,
        newPeriodDays: 30,
        today: '2024-01-01',
        expiryDate: '2024-01-02',
      }),
    ).toThrow(RangeError);
  });

  it('property: integer days within the period; credit <= old price; charge <= new price x days / period; net = charge - credit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 366 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 366 }),
        fc.integer({ min: -50, max: 500 }),
        (oldPrice, oldPeriodDays, newPrice, newPeriodDays, offset) => {
          const today = '2024-02-20';
          const p = prorate({
            oldPrice,
            oldPeriodDays,
            newPrice,
            newPeriodDays,
            today,
            expiryDate: addDays(today, offset),
          });
          expect(Number.isInteger(p.daysRemaining)).toBe(true);
          expect(p.daysRemaining).toBe(Math.max(0, Math.min(offset, oldPeriodDays)));
          expect(p.oldUnusedCredit).toBeLessThanOrEqual(oldPrice);
          expect(Number.isSafeInteger(p.oldUnusedCredit) && Number.isSafeInteger(p.newServiceCharge)).toBe(true);
          // Rounded once: within half a minor unit of the exact quotient.
          expect(Math.abs(p.oldUnusedCredit * oldPeriodDays - oldPrice * p.daysRemaining)).toBeLessThanOrEqual(
            oldPeriodDays / 2,
          );
          expect(Math.abs(p.newServiceCharge * newPeriodDays - newPrice * p.daysRemaining)).toBeLessThanOrEqual(
            newPeriodDays / 2,
          );
          expect(p.netAmountDue).toBe(p.newServiceCharge - p.oldUnusedCredit);
        },
      ),
    );
  });

  it('daysBetween counts calendar days in UTC', () => {
    expect(daysBetween('2024-03-30', '2024-04-01')).toBe(2);
    expect(daysBetween('2024-01-01', '2025-01-01')).toBe(366);
  });
});
