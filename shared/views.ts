/** The API shape of rows that more than one service returns (a plan, a reseller). */
import type { resellers, services } from './db/schema';
import { isoTimestamp } from './http/schemas';
import { fromMinor } from './money';

type PlanRow = typeof services.$inferSelect;
type ResellerRow = typeof resellers.$inferSelect;

const gbOrNull = (v: string | null) => (v === null ? null : Number(v));

export function planView(p: PlanRow) {
  return {
    id: p.id,
    name: p.name,
    price: fromMinor(p.price, p.currency),
    currency: p.currency,
    duration_days: p.durationDays,
    daily_quota_gb: gbOrNull(p.dailyQuotaGb),
    monthly_quota_gb: gbOrNull(p.monthlyQuotaGb),
    rate_limit: p.rateLimit,
    fup_tiers: p.fupTiers,
    pool_name: p.poolName,
    framed_ipv6_pool: p.framedIpv6Pool,
    delegated_ipv6_pool: p.delegatedIpv6Pool,
    mac_binding: p.macBinding,
    vendor_attributes: p.vendorAttributes,
    self_service: p.selfService,
    created_at: isoTimestamp(p.createdAt),
  };
}

export function resellerView(r: ResellerRow) {
  return {
    id: r.id,
    name: r.name,
    parent_id: r.parentId,
    balance: fromMinor(r.balance, r.currency),
    commission_rate: Number(r.commissionRate),
    currency: r.currency,
    created_at: isoTimestamp(r.createdAt),
  };
}
