"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.subscriberView = subscriberView;
exports.plansById = plansById;
exports.renewalPrice = renewalPrice;
exports.viewsOf = viewsOf;
/** How a subscriber row is shown by the API, and the plan lookups the views and actions share. */
const drizzle_orm_1 = require("drizzle-orm");
const schema_1 = require("../../shared/db/schema");
const schemas_1 = require("../../shared/http/schemas");
const money_1 = require("../../shared/money");
const gb = (v) => (v === null ? null : Number(v));
/** `currency` is the plan's: a per-subscriber price is in the currency of the plan it replaces. */
function subscriberView(s, currency) {
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
        fup_level: s.fupLevel,
        daily_quota_used: s.dailyQuotaUsed,
        monthly_quota_used: s.monthlyQuotaUsed,
        daily_quota_gb: gb(s.dailyQuotaGb),
        monthly_quota_gb: gb(s.monthlyQuotaGb),
        extra_quota_bytes: s.extraQuotaBytes,
        wallet_balance: (0, money_1.fromMinor)(s.walletBalance, currency),
        price: s.price === null ? null : (0, money_1.fromMinor)(s.price, currency),
        override_price: s.overridePrice,
        currency,
        expiry_date: s.expiryDate,
        last_renewed_on: s.lastRenewedOn,
        region: s.region,
        building: s.building,
        address: s.address,
        nationality: s.nationality,
        country: s.country,
        notes: s.notes,
        created_at: (0, schemas_1.isoTimestamp)(s.createdAt),
        updated_at: (0, schemas_1.isoTimestamp)(s.updatedAt),
        deleted_at: (0, schemas_1.isoTimestamp)(s.deletedAt),
    };
}
/** Plans by id, including retired ones (a subscriber may still point at one). */
async function plansById(db, ids) {
    const unique = [...new Set(ids)];
    if (unique.length === 0)
        return new Map();
    const rows = await db.select().from(schema_1.services).where((0, drizzle_orm_1.inArray)(schema_1.services.id, unique));
    return new Map(rows.map((p) => [p.id, p]));
}
/** What a renewal costs: the per-subscriber price when it overrides the plan's. */
function renewalPrice(s, plan) {
    return s.overridePrice && s.price !== null ? s.price : plan.price;
}
async function viewsOf(db, rows, fallbackCurrency) {
    const plans = await plansById(db, rows.map((r) => r.serviceId));
    return rows.map((r) => subscriberView(r, plans.get(r.serviceId)?.currency ?? fallbackCurrency));
}
//# sourceMappingURL=subscriber-view.js.map