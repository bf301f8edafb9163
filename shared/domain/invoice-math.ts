/**
 * Invoice arithmetic (ARCHITECTURE section 3), pure and in integer minor units:
 *   line amount = qty x unit_price, rounded half-up once per line;
 *   amount = sum of lines; tax_amount = amount x tax_rate / 100 half-up; total = amount + tax;
 *   commission_amount = amount x commission_rate / 100 half-up (on the amount before tax).
 * Quantities and rates are decimals (number or decimal string) and go through BigInt, never floats.
 */
import { divRoundHalfUp, parseDecimal, percentOf } from '../money';

export interface ItemInput {
  description: string;
  /** Decimal quantity, at most 3 decimal places (the column is numeric(14,3)). */
  qty: number | string;
  /** Minor units. */
  unitPrice: number;
}

export interface PricedItem extends ItemInput {
  amount: number;
}

export interface InvoiceTotals {
  items: PricedItem[];
  amount: number;
  taxAmount: number;
  total: number;
  commissionAmount: number;
}

/** Totals above this are refused: minor units must stay exact as JS numbers (2^53). */
export const MAX_TOTAL_MINOR = 1e15;

export function lineAmount(qty: number | string, unitPrice: number): number {
  const q = parseDecimal(qty);
  return Number(divRoundHalfUp(q.digits * BigInt(unitPrice), 10n ** BigInt(q.scale)));
}

/** Throws RangeError when the result would not be exact (callers turn that into a 400). */
export function invoiceTotals(
  items: ItemInput[],
  taxRate: number | string,
  commissionRate: number | string,
): InvoiceTotals {
  const priced = items.map((it) => ({ ...it, amount: lineAmount(it.qty, it.unitPrice) }));
  const amount = priced.reduce((sum, it) => sum + BigInt(it.amount), 0n);
  if (amount > BigInt(MAX_TOTAL_MINOR)) throw new RangeError('invoice total too large');
  const a = Number(amount);
  const taxAmount = percentOf(a, taxRate);
  return { items: priced, amount: a, taxAmount, total: a + taxAmount, commissionAmount: percentOf(a, commissionRate) };
}
