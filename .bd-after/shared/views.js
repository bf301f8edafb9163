"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.planView = planView;
exports.resellerView = resellerView;
const schemas_1 = require("./http/schemas");
const money_1 = require("./money");
const gbOrNull = (v) => (v === null ? null : Number(v));
function planView(p) {
    return {
        id: p.id,
        name: p.name,
        price: (0, money_1.fromMinor)(p.price, p.currency),
        currency: p.currency,
        duration_days: p.durationDays,
        daily_quota_gb: gbOrNull(p.dailyQuotaGb),
        monthly_quota_gb: gbOrNull(p.monthlyQuotaGb),
        rate_limit: p.rateLimit,
        fup_tiers: p.fupTiers,
        pool_name: p.poolName,
        mac_binding: p.macBinding,
        created_at: (0, schemas_1.isoTimestamp)(p.createdAt),
    };
}
function resellerView(r) {
    return {
        id: r.id,
        name: r.name,
        parent_id: r.parentId,
        balance: (0, money_1.fromMinor)(r.balance, r.currency),
        commission_rate: Number(r.commissionRate),
        currency: r.currency,
        created_at: (0, schemas_1.isoTimestamp)(r.createdAt),
    };
}
//# sourceMappingURL=views.js.map