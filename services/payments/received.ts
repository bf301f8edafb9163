/**
 * What arrived against what a checkout asked (issue 43): a provider's event is believed about the
 * money only as far as it matches the checkout. Pure; settle.ts books the verdict.
 */
import { formatMoney } from '../../shared/format';

export interface Money {
  /** Minor units. */
  amount: number;
  currency: string;
}

export type Verdict =
  /** The price or more, in its currency: booked, and a renewal runs. */
  | { kind: 'full'; amount: number }
  /** Less than the price, in its currency: booked as received (a partial payment), no renewal. */
  | { kind: 'short'; amount: number; note: string }
  /** Another currency, or the event says no amount: nothing booked, the operator decides. */
  | { kind: 'mismatch'; note: string };

const shown = (m: Money) => formatMoney(m.amount, m.currency);

export function judgeReceived(asked: Money, received: { amount: number | null; currency: string | null }): Verdict {
  if (received.amount === null || received.currency === null)
    return {
      kind: 'mismatch',
      note: `the event names no amount or currency; ${shown(asked)} was asked: nothing booked`,
    };
  const got = { amount: received.amount, currency: received.currency };
  if (got.currency !== asked.currency)
    return { kind: 'mismatch', note: `${shown(got)} received for ${shown(asked)} asked: nothing booked` };
  if (got.amount < asked.amount)
    return { kind: 'short', amount: got.amount, note: `${shown(got)} of ${shown(asked)} received: booked as received` };
  return { kind: 'full', amount: got.amount };
}
