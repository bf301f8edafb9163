"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.listSubscribers = listSubscribers;
/**
 * GET /api/subscribers. Every filter reads an indexed column of `subscribers` (is_online, ip and
 * last NAS are kept there by the radacct trigger), search uses the trigram indexes through ILIKE,
 * and the default and expiry sorts have (column, id) indexes over live rows, so a page stays fast
 * on a million rows. `total` is exact up to EXACT_TOTAL_CAP matches, an estimate above it (shared/pagination).
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const subscriber_1 = require("../../shared/domain/subscriber");
const errors_1 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const total_1 = require("../../shared/pagination/total");
const settings_1 = require("../../shared/settings");
const subscriber_view_1 = require("./subscriber-view");
const SORT_COLUMNS = {
    created_at: schema_1.subscribers.createdAt,
    username: schema_1.subscribers.username,
    expiry_date: schema_1.subscribers.expiryDate,
    daily_quota_used: schema_1.subscribers.dailyQuotaUsed,
};
/** Exact up to EXACT_TOTAL_CAP matches, the planner's estimate above (shared/pagination/total.ts). */
async function totalOf(where) {
    // A builder, not a value: .limit() would change it in place, so each statement gets its own.
    const matches = () => (0, client_1.db)().select({ one: (0, drizzle_orm_1.sql) `1` }).from(schema_1.subscribers).where(where);
    const [{ n }] = await (0, client_1.db)().select({ n: (0, drizzle_orm_1.count)() }).from(matches().limit(total_1.EXACT_TOTAL_CAP + 1).as('capped'));
    return (0, total_1.totalFromCappedCount)(n, async () => {
        // Planning alone is under a millisecond.
        const res = await (0, client_1.db)().execute((0, drizzle_orm_1.sql) `explain (format json) ${matches()}`);
        return (0, total_1.planRows)(res.rows[0]['QUERY PLAN']);
    });
}
async function statusCondition(status, today) {
    switch (status) {
        case 'active':
        case 'inactive':
            return (0, drizzle_orm_1.eq)(schema_1.subscribers.status, status);
        case 'expired':
            return (0, drizzle_orm_1.lt)(schema_1.subscribers.expiryDate, today);
        case 'expiring': {
            const { expiring_days: days } = await (0, settings_1.loadSettings)((0, client_1.db)(), ['expiring_days']);
            return (0, drizzle_orm_1.and)((0, drizzle_orm_1.gte)(schema_1.subscribers.expiryDate, today), (0, drizzle_orm_1.lte)(schema_1.subscribers.expiryDate, (0, subscriber_1.addDays)(today, days)));
        }
        case 'online':
            return (0, drizzle_orm_1.eq)(schema_1.subscribers.isOnline, true);
        case 'offline':
            return (0, drizzle_orm_1.eq)(schema_1.subscribers.isOnline, false);
        default:
            return undefined;
    }
}
async function listSubscribers(auth, p) {
    const { page, limit, offset } = (0, context_1.pageOf)(p);
    const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'read');
    // reseller_id narrows the caller's own view: an admin names any reseller, others one in their tree.
    if (p.reseller_id !== undefined && !(await (0, policy_1.resellerInScope)((0, client_1.db)(), scope, p.reseller_id)))
        throw (0, errors_1.forbidden)();
    const pattern = p.search ? (0, subscriber_1.likePattern)(p.search) : undefined;
    const where = (0, drizzle_orm_1.and)((0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt), (0, policy_1.inScope)(scope, schema_1.subscribers.resellerId), await statusCondition(p.status, (0, subscriber_1.todayIso)()), p.service_id !== undefined ? (0, drizzle_orm_1.eq)(schema_1.subscribers.serviceId, p.service_id) : undefined, p.reseller_id !== undefined ? (0, drizzle_orm_1.eq)(schema_1.subscribers.resellerId, p.reseller_id) : undefined, p.nas_id !== undefined ? (0, drizzle_orm_1.eq)(schema_1.subscribers.lastNasId, p.nas_id) : undefined, p.fup_level !== undefined ? (0, drizzle_orm_1.eq)(schema_1.subscribers.fupLevel, p.fup_level) : undefined, pattern
        ? (0, drizzle_orm_1.or)((0, drizzle_orm_1.ilike)(schema_1.subscribers.username, pattern), (0, drizzle_orm_1.ilike)(schema_1.subscribers.fullName, pattern), (0, drizzle_orm_1.ilike)(schema_1.subscribers.phone, pattern), (0, drizzle_orm_1.ilike)(schema_1.subscribers.macAddress, pattern))
        : undefined);
    const dir = p.order === 'asc' ? drizzle_orm_1.asc : drizzle_orm_1.desc;
    const [rows, { currency }] = await Promise.all([
        (0, client_1.db)().select().from(schema_1.subscribers).where(where)
            .orderBy(dir(SORT_COLUMNS[p.sort ?? 'created_at']), dir(schema_1.subscribers.id))
            .limit(limit).offset(offset),
        (0, settings_1.loadSettings)((0, client_1.db)(), ['currency']),
    ]);
    // A short page settles the total without a second pass over the matches (a search is one query).
    const total = (0, total_1.totalFromPage)(offset, limit, rows.length) ?? (await totalOf(where));
    return { data: await (0, subscriber_view_1.viewsOf)((0, client_1.db)(), rows, currency), pagination: { page, limit, total } };
}
//# sourceMappingURL=subscriber-list.js.map