/**
 * What the self-care writes need to know before they call the operators' actions (docs/self-care.md):
 * whether the wallet covers a price, which plans are open to self-service, the data top-ups offered.
 * Bound to the signed-in subscriber's id like the reads.
 */
import { sql } from 'drizzle-orm';
import { blockingBalances } from '../../shared/access/blocked';
import { RENEWAL_COLUMNS, renewalParties, type RenewalColumns } from '../../shared/billing';
import { db } from '../../shared/db/client';
import { todayIso, walletCoversRenewal } from '../../shared/domain/subscriber';
import { fail } from '../../shared/failures';
import { fromMinor, toMinor } from '../../shared/money';
import type { Settings } from '../../shared/settings';

const num = (v: unknown) => Number(v);

/**
 * Whether the wallet (system currency) pays the renewal invoice whole (`walletCoversRenewal`) after
 * what the invoices that block access still owe (paid first by the renewal), as read now: the
 * renewal itself decides again under the row lock. Renewed today already is 409 here, before any
 * checkout: a payment for a renewal that cannot happen would only sit in the wallet.
 */
export async function renewalCovered(
  subscriberId: number,
  s: Pick<Settings, 'default_tax_rate' | 'currency'>,
): Promise<boolean> {
  const { rows } = await db().execute<RenewalColumns & { renewed: boolean }>(sql`
    select ${RENEWAL_COLUMNS}, s.last_renewed_on is not distinct from ${todayIso()}::date as renewed
      from subscribers s join services p on p.id = s.service_id
     where s.id = ${subscriberId} and s.deleted_at is null`);
  const r = rows[0];
  if (!r) throw fail('subscriberNotFound');
  if (r.renewed) throw fail('renewedToday');
  const { subscriber, plan } = renewalParties(r);
  const owed = (await blockingBalances(db(), [subscriberId], s.currency)).get(subscriberId) ?? 0;
  return walletCoversRenewal({ ...subscriber, walletBalance: subscriber.walletBalance - owed }, plan, s);
}

/** The operator's offer for `gb`, priced in minor units of the system currency. */
export function topupOffer(
  s: Pick<Settings, 'self_care_data_topups' | 'currency'>,
  gb: number,
): { gb: number; priceMinor: number } {
  const offer = s.self_care_data_topups.find((o) => o.gb === gb);
  if (!offer) throw fail('topupNotOffered');
  return { gb, priceMinor: toMinor(offer.price, s.currency) };
}

export interface SelfServicePlan {
  id: number;
  name: string;
  price: number;
  currency: string;
  duration_days: number;
  daily_quota_gb: number | null;
  monthly_quota_gb: number | null;
  rate_limit: string | null;
  current: boolean;
}

/** Plans marked self_service (live), and the subscriber's own plan marked `current`. */
export async function selfServicePlans(subscriberId: number): Promise<SelfServicePlan[]> {
  const { rows } = await db().execute<{
    id: number;
    name: string;
    price: string;
    currency: string;
    duration_days: number;
    daily_quota_gb: string | null;
    monthly_quota_gb: string | null;
    rate_limit: string | null;
    current: boolean;
  }>(sql`
    select p.id, p.name, p.price, p.currency, p.duration_days, p.daily_quota_gb, p.monthly_quota_gb, p.rate_limit,
           p.id = s.service_id as current
      from services p, subscribers s
     where s.id = ${subscriberId} and s.deleted_at is null and p.deleted_at is null
       and (p.self_service or p.id = s.service_id)
     order by p.price, p.id`);
  return rows.map((p) => ({
    id: num(p.id),
    name: p.name,
    price: fromMinor(num(p.price), p.currency),
    currency: p.currency,
    duration_days: num(p.duration_days),
    daily_quota_gb: p.daily_quota_gb === null ? null : Number(p.daily_quota_gb),
    monthly_quota_gb: p.monthly_quota_gb === null ? null : Number(p.monthly_quota_gb),
    rate_limit: p.rate_limit,
    current: p.current,
  }));
}

/**
 * A plan the subscriber may move to: live, self-service, not the current one (403 otherwise); and
 * no price of its own set by the operator (409): the move keeps it, so a discount given on one plan
 * would renew the plan chosen here at that price.
 */
export async function requireSelfServicePlan(subscriberId: number, planId: number): Promise<SelfServicePlan> {
  const [plans, own] = await Promise.all([
    selfServicePlans(subscriberId),
    db().execute(sql`select 1 from subscribers where id = ${subscriberId} and override_price and price is not null`),
  ]);
  const plan = plans.find((p) => p.id === planId && !p.current);
  if (!plan) throw fail('planNotSelfService');
  if (own.rows.length > 0) throw fail('ownPriceNoSelfService');
  return plan;
}
