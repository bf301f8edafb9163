"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.resellersService = void 0;
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const ledger_1 = require("../../shared/ledger");
const money_1 = require("../../shared/money");
const settings_1 = require("../../shared/settings");
const views_1 = require("../../shared/views");
const schemas_1 = require("../../shared/http/schemas");
const schemas_2 = require("./schemas");
function minorOrBadRequest(value, currency, field) {
    try {
        return (0, money_1.toMinor)(value, currency);
    }
    catch {
        throw (0, errors_1.badRequest)(`${field} has more decimal places than ${currency} allows`);
    }
}
async function loadInScope(auth, id, access) {
    const [row] = await (0, client_1.db)().select().from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, id));
    if (!row)
        throw (0, errors_1.notFound)('reseller not found');
    const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, access);
    if (!(await (0, policy_1.resellerInScope)((0, client_1.db)(), scope, id)))
        throw (0, errors_1.forbidden)();
    return row;
}
/** Writes on a reseller come from an admin or from a strict ancestor: a reseller never edits itself. */
async function loadForAncestorWrite(auth, id) {
    (0, policy_1.requireAdminOrReseller)(auth);
    const row = await loadInScope(auth, id, 'write');
    if (auth.role !== 'admin' && auth.resellerId === id)
        throw (0, errors_1.forbidden)('a reseller cannot change its own account');
    return row;
}
async function lockResellers(tx, ids) {
    const sorted = [...new Set(ids)].sort((a, b) => a - b);
    const rows = await tx.select().from(schema_1.resellers).where((0, drizzle_orm_1.inArray)(schema_1.resellers.id, sorted)).orderBy((0, drizzle_orm_1.asc)(schema_1.resellers.id)).for('update');
    return new Map(rows.map((r) => [r.id, r]));
}
exports.resellersService = {
    name: 'resellers',
    actions: {
        create: {
            rest: 'POST /api/resellers',
            http: {
                auth: 'jwt',
                access: 'admin, or a reseller inside its own tree',
                summary: 'Create a reseller (a reseller creates sub-resellers under itself)',
                tag: 'resellers',
                success: 201,
                body: (0, schemas_1.object)({ ...schemas_2.resellerFields, parent_id: { ...schemas_1.idSchema, type: ['integer', 'null'] }, balance: schemas_1.moneyAmount }, ['name']),
                errors: { 403: 'Parent outside the caller\'s tree, or a reseller setting an opening balance' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const p = ctx.params;
                let parentId = p.parent_id ?? null;
                if (auth.role !== 'admin') {
                    parentId ??= auth.resellerId;
                    if (p.balance)
                        throw (0, errors_1.forbidden)('only an admin can give an opening balance; transfer with POST /api/resellers/:id/balance');
                }
                let parent;
                if (parentId !== null) {
                    [parent] = await (0, client_1.db)().select().from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, parentId));
                    if (!parent)
                        throw (0, errors_1.badRequest)('parent_id not found');
                    const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'write');
                    if (!(await (0, policy_1.resellerInScope)((0, client_1.db)(), scope, parentId)))
                        throw (0, errors_1.forbidden)();
                }
                const currency = p.currency ?? parent?.currency ?? (await (0, settings_1.loadSettings)((0, client_1.db)(), ['currency'])).currency;
                if (!(0, money_1.isCurrency)(currency))
                    throw (0, errors_1.badRequest)('currency must be an ISO 4217 code');
                const opening = p.balance ? minorOrBadRequest(p.balance, currency, 'balance') : 0;
                const row = await (0, client_1.db)().transaction(async (tx) => {
                    const [inserted] = await tx
                        .insert(schema_1.resellers)
                        .values({
                        name: p.name,
                        parentId,
                        path: '',
                        balance: opening,
                        commissionRate: String(p.commission_rate ?? 0),
                        currency,
                    })
                        .returning();
                    const [withPath] = await tx
                        .update(schema_1.resellers)
                        .set({ path: `${parent?.path ?? '/'}${inserted.id}/` })
                        .where((0, drizzle_orm_1.eq)(schema_1.resellers.id, inserted.id))
                        .returning();
                    if (opening > 0) {
                        await (0, ledger_1.recordTransaction)(tx, {
                            type: 'reseller_credit', amount: opening, currency, resellerId: inserted.id,
                            notes: 'opening balance', createdBy: auth.managerId,
                        });
                    }
                    return withPath;
                });
                return { data: (0, views_1.resellerView)(row) };
            },
        },
        list: {
            rest: 'GET /api/resellers',
            http: {
                auth: 'jwt',
                access: 'admin, or a reseller (its own tree)',
                summary: 'List resellers in scope',
                tag: 'resellers',
                query: (0, schemas_1.object)({ ...schemas_1.paginationProperties, parent_id: schemas_1.idSchema }),
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const { page, limit, offset } = (0, context_1.pageOf)(ctx.params);
                const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'read');
                const where = (0, drizzle_orm_1.and)((0, policy_1.inScope)(scope, schema_1.resellers.id), ctx.params.parent_id ? (0, drizzle_orm_1.eq)(schema_1.resellers.parentId, ctx.params.parent_id) : undefined);
                const rows = await (0, client_1.db)().select().from(schema_1.resellers).where(where).orderBy((0, drizzle_orm_1.asc)(schema_1.resellers.id)).limit(limit).offset(offset);
                const [{ total }] = await (0, client_1.db)().select({ total: (0, drizzle_orm_1.count)() }).from(schema_1.resellers).where(where);
                return { data: rows.map(views_1.resellerView), pagination: { page, limit, total } };
            },
        },
        get: {
            rest: 'GET /api/resellers/:id',
            http: {
                auth: 'jwt',
                access: 'admin, or a reseller (its own tree)',
                summary: 'One reseller',
                tag: 'resellers',
                params: (0, schemas_1.idParams)(),
                errors: { 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                return { data: (0, views_1.resellerView)(await loadInScope(auth, ctx.params.id, 'read')) };
            },
        },
        update: {
            rest: 'PUT /api/resellers/:id',
            http: {
                auth: 'jwt',
                access: 'admin, or an ancestor reseller',
                summary: 'Update name, commission rate or currency',
                tag: 'resellers',
                params: (0, schemas_1.idParams)(),
                body: { ...(0, schemas_1.object)(schemas_2.resellerFields), minProperties: 1 },
                errors: { 403: 'Outside the caller\'s tree, or a reseller editing itself', 404: 'reseller not found' },
            },
            async handler(ctx) {
                const current = await loadForAncestorWrite((0, context_1.authOf)(ctx), ctx.params.id);
                const p = ctx.params;
                if (p.currency && p.currency !== current.currency) {
                    if (!(0, money_1.isCurrency)(p.currency))
                        throw (0, errors_1.badRequest)('currency must be an ISO 4217 code');
                    if (current.balance !== 0)
                        throw (0, errors_1.badRequest)('currency can change only while the balance is 0');
                }
                const [row] = await (0, client_1.db)()
                    .update(schema_1.resellers)
                    .set({
                    name: p.name ?? current.name,
                    commissionRate: p.commission_rate === undefined ? current.commissionRate : String(p.commission_rate),
                    currency: p.currency ?? current.currency,
                    updatedAt: (0, drizzle_orm_1.sql) `now()`,
                })
                    .where((0, drizzle_orm_1.eq)(schema_1.resellers.id, current.id))
                    .returning();
                return { data: (0, views_1.resellerView)(row) };
            },
        },
        adjustBalance: {
            rest: 'POST /api/resellers/:id/balance',
            http: {
                auth: 'jwt',
                access: 'admin (credit or debit), or an ancestor reseller (transfer from its own balance)',
                summary: 'Credit (positive) or debit (negative) a reseller balance through the ledger',
                tag: 'resellers',
                params: (0, schemas_1.idParams)(),
                body: (0, schemas_1.object)({ amount: { type: 'number', minimum: -1e12, maximum: 1e12 }, notes: { type: 'string', maxLength: 1000 } }, ['amount']),
                errors: { 402: 'Insufficient balance (debit below zero, or a transfer the caller cannot fund)', 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
            },
            async handler(ctx) {
                const auth = (0, context_1.authOf)(ctx);
                const target = await loadForAncestorWrite(auth, ctx.params.id);
                if (ctx.params.amount === 0)
                    throw (0, errors_1.badRequest)('amount must not be 0');
                const amount = minorOrBadRequest(ctx.params.amount, target.currency, 'amount');
                // An ancestor reseller moves money between its own balance and the child's; an admin creates it.
                const source = auth.role === 'admin' ? null : auth.resellerId;
                const row = await (0, client_1.db)().transaction(async (tx) => {
                    const locked = await lockResellers(tx, source === null ? [target.id] : [target.id, source]);
                    const t = locked.get(target.id);
                    if (t.balance + amount < 0)
                        throw (0, errors_1.paymentRequired)('insufficient reseller balance');
                    if (source !== null) {
                        const s = locked.get(source);
                        if (s.currency !== t.currency)
                            throw (0, errors_1.badRequest)('a transfer needs both resellers in the same currency');
                        if (s.balance - amount < 0)
                            throw (0, errors_1.paymentRequired)('insufficient reseller balance');
                        await tx.update(schema_1.resellers).set({ balance: s.balance - amount, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, s.id));
                        await (0, ledger_1.recordTransaction)(tx, {
                            type: amount > 0 ? 'reseller_debit' : 'reseller_credit', amount: -amount, currency: s.currency,
                            resellerId: s.id, notes: ctx.params.notes ?? `transfer to reseller ${t.id}`, createdBy: auth.managerId,
                        });
                    }
                    const [updated] = await tx
                        .update(schema_1.resellers)
                        .set({ balance: t.balance + amount, updatedAt: (0, drizzle_orm_1.sql) `now()` })
                        .where((0, drizzle_orm_1.eq)(schema_1.resellers.id, t.id))
                        .returning();
                    const transactionId = await (0, ledger_1.recordTransaction)(tx, {
                        type: amount > 0 ? 'reseller_credit' : 'reseller_debit', amount, currency: t.currency,
                        resellerId: t.id, notes: ctx.params.notes ?? null, createdBy: auth.managerId,
                    });
                    return { reseller: updated, transactionId };
                });
                return { data: { ...(0, views_1.resellerView)(row.reseller), transaction_id: row.transactionId } };
            },
        },
        setServiceLimit: {
            rest: 'POST /api/resellers/:id/service-limits',
            http: {
                auth: 'jwt',
                access: 'admin, or an ancestor reseller for plans it holds itself',
                summary: 'Allow a plan for a reseller, optionally capping its subscribers on it',
                tag: 'resellers',
                params: (0, schemas_1.idParams)(),
                body: (0, schemas_1.object)({ service_id: schemas_1.idSchema, max_subscribers: { type: ['integer', 'null'], minimum: 0, maximum: 10000000 } }, ['service_id']),
                errors: { 400: 'service_id not found', 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
            },
            async handler(ctx) {
                const auth = (0, context_1.authOf)(ctx);
                const target = await loadForAncestorWrite(auth, ctx.params.id);
                const [plan] = await (0, client_1.db)().select({ id: schema_1.services.id }).from(schema_1.services)
                    .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.services.id, ctx.params.service_id), (0, drizzle_orm_1.sql) `${schema_1.services.deletedAt} is null`));
                if (!plan)
                    throw (0, errors_1.badRequest)('service_id not found');
                if (auth.role !== 'admin') {
                    const [own] = await (0, client_1.db)().select({ id: schema_1.resellerServiceLimits.id }).from(schema_1.resellerServiceLimits)
                        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.resellerServiceLimits.resellerId, auth.resellerId), (0, drizzle_orm_1.eq)(schema_1.resellerServiceLimits.serviceId, plan.id)));
                    if (!own)
                        throw (0, errors_1.forbidden)('a reseller can pass on only plans it holds itself');
                }
                const [row] = await (0, client_1.db)()
                    .insert(schema_1.resellerServiceLimits)
                    .values({ resellerId: target.id, serviceId: plan.id, maxSubscribers: ctx.params.max_subscribers ?? null })
                    .onConflictDoUpdate({
                    target: [schema_1.resellerServiceLimits.resellerId, schema_1.resellerServiceLimits.serviceId],
                    set: { maxSubscribers: ctx.params.max_subscribers ?? null },
                })
                    .returning();
                return { data: { reseller_id: row.resellerId, service_id: row.serviceId, max_subscribers: row.maxSubscribers } };
            },
        },
        listServiceLimits: {
            rest: 'GET /api/resellers/:id/service-limits',
            http: {
                auth: 'jwt',
                access: 'admin, or a reseller (its own tree)',
                summary: 'Plans allowed for a reseller',
                tag: 'resellers',
                params: (0, schemas_1.idParams)(),
                errors: { 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const target = await loadInScope(auth, ctx.params.id, 'read');
                const rows = await (0, client_1.db)()
                    .select({ serviceId: schema_1.resellerServiceLimits.serviceId, maxSubscribers: schema_1.resellerServiceLimits.maxSubscribers, name: schema_1.services.name })
                    .from(schema_1.resellerServiceLimits)
                    .innerJoin(schema_1.services, (0, drizzle_orm_1.eq)(schema_1.services.id, schema_1.resellerServiceLimits.serviceId))
                    .where((0, drizzle_orm_1.eq)(schema_1.resellerServiceLimits.resellerId, target.id))
                    .orderBy((0, drizzle_orm_1.asc)(schema_1.resellerServiceLimits.serviceId));
                return {
                    data: rows.map((r) => ({ reseller_id: target.id, service_id: r.serviceId, service_name: r.name, max_subscribers: r.maxSubscribers })),
                };
            },
        },
    },
};
//# sourceMappingURL=resellers.service.js.map