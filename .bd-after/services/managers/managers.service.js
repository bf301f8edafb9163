"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.managersService = void 0;
const drizzle_orm_1 = require("drizzle-orm");
const passwords_1 = require("../../shared/auth/passwords");
const policy_1 = require("../../shared/auth/policy");
const config_1 = require("../../shared/config");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const schemas_1 = require("../../shared/http/schemas");
const errors_2 = require("../../shared/db/errors");
const schemas_2 = require("../../shared/http/schemas");
const schemas_3 = require("./schemas");
function view(m) {
    return {
        id: m.id,
        username: m.username,
        role: m.role,
        reseller_id: m.resellerId,
        permissions: m.permissions,
        active: m.active,
        created_at: (0, schemas_1.isoTimestamp)(m.createdAt),
    };
}
/** Every gateway drops its cached row of this manager at once (services/gateway/identities.ts). */
function announceChange(ctx, id) {
    return ctx.broadcast('manager.changed', { id });
}
/** What an update changes that the audit log should say: enable/disable, password, role, scope. */
function auditedChanges(current, next) {
    const changes = {};
    if (current.active !== next.active)
        changes.active = next.active;
    if (current.tokenVersion !== next.tokenVersion)
        changes.password = 'changed';
    if (current.role !== next.role)
        changes.role = next.role;
    if (current.resellerId !== next.resellerId)
        changes.reseller_id = next.resellerId;
    if (JSON.stringify(current.permissions) !== JSON.stringify(next.permissions))
        changes.permissions = next.permissions;
    if (current.username !== next.username)
        changes.username = next.username;
    return changes;
}
async function checkRoleAndReseller(role, resellerId) {
    if (role === 'reseller' && !resellerId)
        throw (0, errors_1.badRequest)('reseller_id is required for role reseller');
    if (role === 'admin' && resellerId)
        throw (0, errors_1.badRequest)('reseller_id must be empty for role admin');
    if (resellerId) {
        const [r] = await (0, client_1.db)().select({ id: schema_1.resellers.id }).from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, resellerId));
        if (!r)
            throw (0, errors_1.badRequest)('reseller_id not found');
    }
}
/** The first admin, from ADMIN_USERNAME / ADMIN_PASSWORD, created once when no admin exists. */
async function ensureFirstAdmin(log) {
    const cfg = (0, config_1.config)();
    const [{ admins }] = await (0, client_1.db)().select({ admins: (0, drizzle_orm_1.count)() }).from(schema_1.managers).where((0, drizzle_orm_1.eq)(schema_1.managers.role, 'admin'));
    if (admins > 0)
        return;
    if (!cfg.adminPassword) {
        log('no admin manager exists: set ADMIN_PASSWORD (and ADMIN_USERNAME) to create one, or use `npm run token`');
        return;
    }
    await (0, client_1.db)()
        .insert(schema_1.managers)
        .values({ username: cfg.adminUsername, passwordHash: await (0, passwords_1.hashPassword)(cfg.adminPassword), role: 'admin', permissions: [] })
        .onConflictDoNothing();
    log(`created the first admin manager "${cfg.adminUsername}"`);
}
exports.managersService = {
    name: 'managers',
    async started() {
        await ensureFirstAdmin((m) => this.logger.info(m));
    },
    actions: {
        create: {
            rest: 'POST /api/managers',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Create a manager (admin, reseller or user account)',
                tag: 'managers',
                success: 201,
                body: (0, schemas_2.object)(schemas_3.managerFields, ['username', 'password', 'role']),
                errors: { ...schemas_2.adminErrors, 409: 'username already exists' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const p = ctx.params;
                const role = p.role;
                await checkRoleAndReseller(role, p.reseller_id);
                return (0, errors_2.conflictOnDuplicate)('username already exists', async () => {
                    const [row] = await (0, client_1.db)()
                        .insert(schema_1.managers)
                        .values({
                        username: p.username,
                        passwordHash: await (0, passwords_1.hashPassword)(p.password),
                        role,
                        resellerId: p.reseller_id ?? null,
                        permissions: p.permissions ?? [],
                        active: p.active ?? true,
                    })
                        .returning();
                    return { data: view(row) };
                });
            },
        },
        list: {
            rest: 'GET /api/managers',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'List managers',
                tag: 'managers',
                query: (0, schemas_2.object)(schemas_2.paginationProperties),
                errors: schemas_2.adminErrors,
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const { page, limit, offset } = (0, context_1.pageOf)(ctx.params);
                const rows = await (0, client_1.db)().select().from(schema_1.managers).orderBy(schema_1.managers.id).limit(limit).offset(offset);
                const [{ total }] = await (0, client_1.db)().select({ total: (0, drizzle_orm_1.count)() }).from(schema_1.managers);
                return { data: rows.map(view), pagination: { page, limit, total } };
            },
        },
        update: {
            rest: 'PUT /api/managers/:id',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Update a manager',
                tag: 'managers',
                params: (0, schemas_2.idParams)(),
                body: { ...(0, schemas_2.object)(schemas_3.managerFields), minProperties: 1 },
                errors: { ...schemas_2.adminErrors, 404: 'manager not found', 409: 'username already exists, or cannot demote the last admin' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const p = ctx.params;
                const [current] = await (0, client_1.db)().select().from(schema_1.managers).where((0, drizzle_orm_1.eq)(schema_1.managers.id, p.id));
                if (!current)
                    throw (0, errors_1.notFound)('manager not found');
                const role = (p.role ?? current.role);
                const resellerId = p.reseller_id === undefined ? current.resellerId : p.reseller_id;
                await checkRoleAndReseller(role, resellerId);
                const active = p.active ?? current.active;
                if (current.role === 'admin' && role !== 'admin')
                    await assertAnotherAdmin(current.id, 'cannot demote the last admin');
                if (current.role === 'admin' && current.active && !active)
                    await assertAnotherAdmin(current.id, 'cannot disable the last admin');
                const row = await (0, errors_2.conflictOnDuplicate)('username already exists', async () => (0, client_1.db)().transaction(async (tx) => {
                    const [updated] = await tx
                        .update(schema_1.managers)
                        .set({
                        username: p.username ?? current.username,
                        passwordHash: p.password ? await (0, passwords_1.hashPassword)(p.password) : current.passwordHash,
                        // A new password ends every token issued under the old one.
                        tokenVersion: p.password ? (0, drizzle_orm_1.sql) `${schema_1.managers.tokenVersion} + 1` : current.tokenVersion,
                        role,
                        resellerId: role === 'admin' ? null : resellerId,
                        permissions: p.permissions ?? current.permissions,
                        active,
                        updatedAt: (0, drizzle_orm_1.sql) `now()`,
                    })
                        .where((0, drizzle_orm_1.eq)(schema_1.managers.id, p.id))
                        .returning();
                    const changes = auditedChanges(current, updated);
                    const action = changes.active === undefined ? 'manager.update' : active ? 'manager.enable' : 'manager.disable';
                    await tx.insert(schema_1.auditLog).values({ managerId: (0, context_1.authOf)(ctx).managerId, action, entity: 'manager', entityId: p.id, details: changes });
                    return updated;
                }));
                await announceChange(ctx, p.id);
                return { data: view(row) };
            },
        },
        remove: {
            rest: 'DELETE /api/managers/:id',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Delete a manager',
                tag: 'managers',
                params: (0, schemas_2.idParams)(),
                errors: { ...schemas_2.adminErrors, 404: 'manager not found', 409: 'cannot delete the last admin' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const [current] = await (0, client_1.db)().select().from(schema_1.managers).where((0, drizzle_orm_1.eq)(schema_1.managers.id, ctx.params.id));
                if (!current)
                    throw (0, errors_1.notFound)('manager not found');
                if (current.role === 'admin')
                    await assertAnotherAdmin(current.id, 'cannot delete the last admin');
                await (0, client_1.db)().transaction(async (tx) => {
                    await tx.delete(schema_1.managers).where((0, drizzle_orm_1.eq)(schema_1.managers.id, ctx.params.id));
                    await tx.insert(schema_1.auditLog).values({
                        managerId: (0, context_1.authOf)(ctx).managerId, action: 'manager.delete', entity: 'manager', entityId: current.id, details: { username: current.username },
                    });
                });
                await announceChange(ctx, current.id);
                return { data: { id: current.id, deleted: true } };
            },
        },
    },
};
async function assertAnotherAdmin(exceptId, message) {
    const [{ others }] = await (0, client_1.db)()
        .select({ others: (0, drizzle_orm_1.count)() })
        .from(schema_1.managers)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.managers.role, 'admin'), (0, drizzle_orm_1.eq)(schema_1.managers.active, true), (0, drizzle_orm_1.ne)(schema_1.managers.id, exceptId)));
    if (others === 0)
        throw (0, errors_1.conflict)(message);
}
//# sourceMappingURL=managers.service.js.map