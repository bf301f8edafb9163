/** How a subscriber row is shown by the API, and the plan lookups the views and actions share. */
import { inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../shared/db/client';
import { services, subscribers } from '../../shared/db/schema';
import { isoTimestamp } from '../../shared/http/schemas';
import { renewalCharge } from '../../shared/domain/subscriber';
import { fromMinor } from '../../shared/money';

export type SubscriberRow = typeof subscribers.$inferSelect;
export type PlanRow = typeof services.$inferSelect;

const gb = (v: string | null) => (v === null ? null : Number(v));

/** `currency` is the plan's: a per-subscriber price is in the currency of the plan it replaces. */
export function subscriberView(s: SubscriberRow, currency: string) {
  return {
    id: s.id,
    username: s.username,
    full_name: s.fullName,
    phone: s.phone,
    mac_address: s.macAddress,
    service_id: s.serviceId,
    reseller_id: s.resellerId,
    status: s.status,
    is_online: s.isOnline,
    ip_address: s.ipAddress,
    last_nas_id: s.lastNasId,
    static_ip: s.staticIp,
    ipv6_prefix: s.ipv6Prefix,
    delegated_ipv6_prefix: s.delegatedIpv6Prefix,
    fup_level: s.fupLevel,
    daily_quota_used: s.dailyQuotaUsed,
    monthly_quota_used: s.monthlyQuotaUsed,
    daily_quota_gb: gb(s.dailyQuotaGb),
    monthly_quota_gb: gb(s.monthlyQuotaGb),
    extra_quota_bytes: s.extraQuotaBytes,
    wallet_balance: fromMinor(s.walletBalance, currency),
    price: s.price === null ? null : fromMinor(s.price, currency),
    override_price: s.overridePrice,
    currency,
    expiry_date: s.expiryDate,
    last_renewed_on: s.lastRenewedOn,
    auto_renew: s.autoRenew,
    blocked_reason: s.blockedReason,
    region: s.region,
    building: s.building,
    address: s.address,
    nationality: s.nationality,
    country: s.country,
    notes: s.notes,
    created_at: isoTimestamp(s.createdAt),
    updated_at: isoTimestamp(s.updatedAt),
    deleted_at: isoTimestamp(s.deletedAt),
  };
}

/**
 * What renewing costs, in the plan's currency: `total` is what the renewal invoice will ask (price
 * plus the default tax), `price` what the reseller balance is debited. The console's renew
 * confirmations state it, since a reseller cannot read the tax setting.
 */
export function renewalView(s: SubscriberRow, plan: PlanRow, taxRate: number) {
  const c = renewalCharge(s, plan, taxRate);
  return {
    price: fromMinor(c.price, plan.currency),
    tax_rate: taxRate,
    tax_amount: fromMinor(c.taxAmount, plan.currency),
    total: fromMinor(c.total, plan.currency),
  };
}

/** Plans by id, including retired ones (a subscriber may still point at one). */
export async function plansById(db: DbOrTx, ids: number[]): Promise<Map<number, PlanRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await db.select().from(services).where(inArray(services.id, unique));
  return new Map(rows.map((p) => [p.id, p]));
}

/** List rows, each with its `renewal` (null only if its plan row is gone). */
export async function viewsOf(db: DbOrTx, rows: SubscriberRow[], fallbackCurrency: string, taxRate: number) {
  const plans = await plansById(
    db,
    rows.map((r) => r.serviceId),
  );
  return rows.map((r) => {
    const plan = plans.get(r.serviceId);
    return {
      ...subscriberView(r, plan?.currency ?? fallbackCurrency),
      renewal: plan ? renewalView(r, plan, taxRate) : null,
    };
  });
}
