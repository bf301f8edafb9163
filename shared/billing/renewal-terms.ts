/**
 * The columns the renewal rule (`renewalCharge`, `walletCoversRenewal` in shared/domain/subscriber.ts)
 * reads, selected over a subscriber `s` joined to its plan `p`, and the two parties the rule takes,
 * built from them.
 */
import { sql } from 'drizzle-orm';

export const RENEWAL_COLUMNS = sql.raw(
  's.override_price, s.price as own_price, p.price as plan_price, p.currency as plan_currency, s.wallet_balance as wallet',
);

export type RenewalColumns = {
  override_price: boolean;
  own_price: string | number | null;
  plan_price: string | number;
  plan_currency: string;
  wallet: string | number;
};

export function renewalParties(r: RenewalColumns) {
  return {
    subscriber: {
      overridePrice: r.override_price,
      price: r.own_price === null ? null : Number(r.own_price),
      walletBalance: Number(r.wallet),
    },
    plan: { price: Number(r.plan_price), currency: r.plan_currency },
  };
}
