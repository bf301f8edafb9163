/**
 * Day-based proration of a plan change, shared by POST /api/invoices/prorate and the
 * subscribers' change-service price calculation:
 *   credit = old price x unused days / period days
 *   charge = new price x remaining days / period days
 * each rounded once, half-up, to the minor unit. Pure: dates are ISO `YYYY-MM-DD` strings.
 */
import { divRoundHalfUp } from '../money';

export interface ProrationInput {
  /** Price of the current plan for one period, minor units. */
  oldPrice: number;
  oldPeriodDays: number;
  /** Price of the new plan for one of its periods, minor units. */
  newPrice: number;
  newPeriodDays: number;
  /** Today and the subscriber's current expiry date. */
  today: string;
  expiryDate: string;
}

export interface Proration {
  daysRemaining: number;
  oldUnusedCredit: number;
  newServiceCharge: number;
  /** charge - credit; negative means the subscriber is owed money. */
  netAmountDue: number;
}

const DAY_MS = 86_400_000;

export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

export function prorate(input: ProrationInput): Proration {
  if (input.oldPeriodDays <= 0 || input.newPeriodDays <= 0) throw new RangeError('period days must be positive');
  // Remaining days cannot exceed the period the subscriber paid for (an expiry pushed far out by
  // add-days is credited at most one period).
  const daysRemaining = Math.max(0, Math.min(daysBetween(input.today, input.expiryDate), input.oldPeriodDays));
  const oldUnusedCredit = Number(
    divRoundHalfUp(BigInt(input.oldPrice) * BigInt(daysRemaining), BigInt(input.oldPeriodDays)),
  );
  const newServiceCharge = Number(
    divRoundHalfUp(BigInt(input.newPrice) * BigInt(daysRemaining), BigInt(input.newPeriodDays)),
  );
  return { daysRemaining, oldUnusedCredit, newServiceCharge, netAmountDue: newServiceCharge - oldUnusedCredit };
}
