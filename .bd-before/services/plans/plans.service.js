"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.plansService = void 0;
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const errors_1 = require("../../shared/db/errors");
const schema_1 = require("../../shared/db/schema");
const errors_2 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const money_1 = require("../../shared/money");
const radius_1 = require("../../shared/radius");
const settings_1 = require("../../shared/settings");
const views_1 = require("../../shared/views");
const schemas_1 = require("../../shared/http/schemas");
const schemas_2 = require("./schemas");
function checkTiers(tiers) {
    if (!tiers)
        return;
    const levels = tiers.map((t) => t.level);
    if (new Set(levels).size !== levels.length)
        throw (0, errors_2.badRequest)('fup_tiers levels must be distinct');
}
function priceMinor(price, currency) {
    try {
        return (0, money_1.toMinor)(price, currency);
    }
    catch {
        throw (0, errors_2.badRequest)(`price has more decimal places than ${currency} allows`);
    }
}
async function loadPlan(id) {
    const [row] = await (0, client_1.db)().select().from(schema_1.services).where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.services.id, id), (0, drizzle_orm_1.isNull)(schema_1.services.deletedAt)));
    if (!row)
        throw (0, errors_2.notFound)('service not found');
    return row;
}
exports.plansService = {
    name: 'plans',
    actions: {
        create: {
            rest: 'POST /api/services',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Create a plan',
                tag: 'plans',
                success: 201,
                body: (0, schemas_1.object)(schemas_2.planFields, ['name', 'price', 'duration_days']),
                errors: { ...schemas_1.adminErrors, 409: 'service name already exists' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const p = ctx.params;
                const currency = p.currency ?? (await (0, settings_1.loadSettings)((0, client_1.db)(), ['currency'])).currency;
                if (!(0, money_1.isCurrency)(currency))
                    throw (0, errors_2.badRequest)('currency must be an ISO 4217 code');
                checkTiers(p.fup_tiers);
                return (0, errors_1.conflictOnDuplicate)('service name already exists', async () => {
                    const row = await (0, client_1.db)().transaction(async (tx) => {
                        const [inserted] = await tx
                            .insert(schema_1.services)
                            .values({
                            name: p.name,
                            price: priceMinor(p.price, currency),
                            currency,
                            durationDays: p.duration_days,
                            dailyQuotaGb: p.daily_quota_gb == null ? null : String(p.daily_quota_gb),
                            monthlyQuotaGb: p.monthly_quota_gb == null ? null : String(p.monthly_quota_gb),
                            rateLimit: p.rate_limit ?? null,
                            fupTiers: p.fup_tiers ?? [],
                            poolName: p.pool_name || null,
                            macBinding: p.mac_binding ?? false,
                        })
                            .returning();
                        await (0, radius_1.writePlanGroupReply)(tx, inserted.id, inserted);
                        return inserted;
                    });
                    return { data: (0, views_1.planView)(row) };
                });
            },
        },
        list: {
            rest: 'GET /api/services',
            http: {
                auth: 'jwt',
                access: 'any authenticated',
                summary: 'List plans',
                tag: 'plans',
                query: (0, schemas_1.object)(schemas_1.paginationProperties),
            },
            async handler(ctx) {
                (0, context_1.authOf)(ctx);
                const { page, limit, offset } = (0, context_1.pageOf)(ctx.params);
                const rows = await (0, client_1.db)().select().from(schema_1.services).where((0, drizzle_orm_1.isNull)(schema_1.services.deletedAt)).orderBy((0, drizzle_orm_1.asc)(schema_1.services.id)).limit(limit).offset(offset);
                const [{ total }] = await (0, client_1.db)().select({ total: (0, drizzle_orm_1.count)() }).from(schema_1.services).where((0, drizzle_orm_1.isNull)(schema_1.services.deletedAt));
                return { data: rows.map(views_1.planView), pagination: { page, limit, total } };
            },
        },
        get: {
            rest: 'GET /api/services/:id',
            http: {
                auth: 'jwt',
                access: 'any authenticated',
                summary: 'One plan',
                tag: 'plans',
                params: (0, schemas_1.idParams)(),
                errors: { 404: 'service not found' },
            },
            async handler(ctx) {
                (0, context_1.authOf)(ctx);
                return { data: (0, views_1.planView)(await loadPlan(ctx.params.id)) };
            },
        },
        update: {
            rest: 'PUT /api/services/:id',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Update a plan',
                tag: 'plans',
                params: (0, schemas_1.idParams)(),
                body: { ...(0, schemas_1.object)(schemas_2.planFields), minProperties: 1 },
                errors: { ...schemas_1.adminErrors, 404: 'service not found', 409: 'service name already exists' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const current = await loadPlan(ctx.params.id);
                const p = ctx.params;
                const currency = p.currency ?? current.currency;
                if (!(0, money_1.isCurrency)(currency))
                    throw (0, errors_2.badRequest)('currency must be an ISO 4217 code');
                checkTiers(p.fup_tiers);
                const opt = (v, fallback) => (v === undefined ? fallback : v);
                return (0, errors_1.conflictOnDuplicate)('service name already exists', async () => {
                    const row = await (0, client_1.db)().transaction(async (tx) => {
                        const [updated] = await tx
                            .update(schema_1.services)
                            .set({
                            name: p.name ?? current.name,
                            price: p.price === undefined ? current.price : priceMinor(p.price, currency),
                            currency,
                            durationDays: p.duration_days ?? current.durationDays,
                            dailyQuotaGb: p.daily_quota_gb === undefined ? current.dailyQuotaGb : p.daily_quota_gb === null ? null : String(p.daily_quota_gb),
                            monthlyQuotaGb: p.monthly_quota_gb === undefined ? current.monthlyQuotaGb : p.monthly_quota_gb === null ? null : String(p.monthly_quota_gb),
                            rateLimit: opt(p.rate_limit, current.rateLimit),
                            fupTiers: p.fup_tiers ?? current.fupTiers,
                            poolName: p.pool_name === undefined ? current.poolName : p.pool_name || null,
                            macBinding: p.mac_binding ?? current.macBinding,
                            updatedAt: (0, drizzle_orm_1.sql) `now()`,
                        })
                            .where((0, drizzle_orm_1.eq)(schema_1.services.id, current.id))
                            .returning();
                        await (0, radius_1.writePlanGroupReply)(tx, updated.id, updated);
                        if (updated.macBinding !== current.macBinding)
                            await (0, radius_1.syncPlanMacRows)(tx, updated.id);
                        return updated;
                    });
                    return { data: (0, views_1.planView)(row) };
                });
            },
        },
        remove: {
            rest: 'DELETE /api/services/:id',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Retire a plan (soft delete; refused while subscribers use it)',
                tag: 'plans',
                params: (0, schemas_1.idParams)(),
                errors: { ...schemas_1.adminErrors, 404: 'service not found', 409: 'service is in use by subscribers' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const current = await loadPlan(ctx.params.id);
                const [{ users }] = await (0, client_1.db)()
                    .select({ users: (0, drizzle_orm_1.count)() })
                    .from(schema_1.subscribers)
                    .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.subscribers.serviceId, current.id), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)));
                if (users > 0)
                    throw (0, errors_2.conflict)('service is in use by subscribers');
                await (0, client_1.db)().update(schema_1.services).set({ deletedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.eq)(schema_1.services.id, current.id));
                return { data: { id: current.id, deleted: true } };
            },
        },
    },
};
//# sourceMappingURL=plans.service.js.map