/** Decimal amounts of a request in minor units of a currency, with the 400 that names the field. */
import type { ItemInput } from '../../shared/domain/invoice-math';
import { fail } from '../../shared/failures';
import { toMinor } from '../../shared/money';

export interface ItemParam {
  description: string;
  qty: number;
  unit_price: number;
}

export function minor(value: number, currency: string, field: string): number {
  try {
    return toMinor(value, currency);
  } catch {
    throw fail('tooManyDecimals', field, currency);
  }
}

export function itemsInMinor(items: ItemParam[], currency: string): ItemInput[] {
  return items.map((it, i) => ({ description: it.description, qty: it.qty, unitPrice: minor(it.unit_price, currency, `items[${i}].unit_price`) }));
}
