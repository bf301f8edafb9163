/** Invoice lines of a request in minor units of a currency (`moneyField`: the 400 names the line's field). */
import type { ItemInput } from '../../shared/domain/invoice-math';
import { moneyField } from '../../shared/money';
import type { ItemParam } from './invoice-schemas';

export function itemsInMinor(items: ItemParam[], currency: string): ItemInput[] {
  return items.map((it, i) => ({
    description: it.description,
    qty: it.qty,
    unitPrice: moneyField(it.unit_price, currency, `items[${i}].unit_price`),
  }));
}
