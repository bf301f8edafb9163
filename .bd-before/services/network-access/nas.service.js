"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.nasService = void 0;
exports.nasView = nasView;
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const secrets_1 = require("../../shared/auth/secrets");
const client_1 = require("../../shared/db/client");
const errors_1 = require("../../shared/db/errors");
const schema_1 = require("../../shared/db/schema");
const errors_2 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const schemas_1 = require("../../shared/http/schemas");
const schemas_2 = require("../../shared/http/schemas");
const nas_schemas_1 = require("./nas-schemas");
/** Secrets (RADIUS shared secret, API password) are write-only. */
function nasView(n) {
    return {
        id: n.id,
        name: n.shortname,
        ip_address: n.nasname,
        type: n.type,
        coa_port: n.coaPort,
        api_port: n.apiPort,
        api_username: n.apiUsername,
        has_api_password: !!n.apiPasswordEnc,
        description: n.description,
        created_at: (0, schemas_1.isoTimestamp)(n.createdAt),
    };
}
function columns(p) {
    const out = {};
    if (p.name !== undefined)
        out.shortname = p.name;
    if (p.ip_address !== undefined)
        out.nasname = p.ip_address;
    if (p.secret !== undefined)
        out.secret = p.secret;
    if (p.coa_port !== undefined)
        out.coaPort = p.coa_port;
    if (p.type !== undefined)
        out.type = p.type;
    if (p.api_port !== undefined)
        out.apiPort = p.api_port;
    if (p.api_username !== undefined)
        out.apiUsername = p.api_username;
    if (p.api_password !== undefined)
        out.apiPasswordEnc = p.api_password ? (0, secrets_1.encrypt)(p.api_password) : null;
    if (p.description !== undefined)
        out.description = p.description;
    return out;
}
const uniqueIp = (write) => (0, errors_1.conflictOnDuplicate)('nas ip_address already exists', write);
exports.nasService = {
    name: 'nas',
    actions: {
        create: {
            rest: 'POST /api/nas',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Register an access server (written to the FreeRADIUS nas table)',
                tag: 'nas',
                success: 201,
                body: (0, schemas_2.object)(nas_schemas_1.nasFields, ['name', 'ip_address', 'secret']),
                errors: { ...schemas_2.adminErrors, 409: 'nas ip_address already exists' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const values = { type: 'mikrotik', ...columns(ctx.params) };
                const [row] = await uniqueIp(() => (0, client_1.db)().insert(schema_1.nas).values(values).returning());
                return { data: nasView(row) };
            },
        },
        list: {
            rest: 'GET /api/nas',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'List access servers (secrets never returned)',
                tag: 'nas',
                query: (0, schemas_2.object)(schemas_2.paginationProperties),
                errors: schemas_2.adminErrors,
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const { page, limit, offset } = (0, context_1.pageOf)(ctx.params);
                const rows = await (0, client_1.db)().select().from(schema_1.nas).orderBy((0, drizzle_orm_1.asc)(schema_1.nas.id)).limit(limit).offset(offset);
                const [{ total }] = await (0, client_1.db)().select({ total: (0, drizzle_orm_1.count)() }).from(schema_1.nas);
                return { data: rows.map(nasView), pagination: { page, limit, total } };
            },
        },
        update: {
            rest: 'PUT /api/nas/:id',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Update an access server',
                tag: 'nas',
                params: (0, schemas_2.idParams)(),
                body: { ...(0, schemas_2.object)(nas_schemas_1.nasFields), minProperties: 1 },
                errors: { ...schemas_2.adminErrors, 404: 'nas not found', 409: 'nas ip_address already exists' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const { id, ...input } = ctx.params;
                const [row] = await uniqueIp(() => (0, client_1.db)().update(schema_1.nas).set(columns(input)).where((0, drizzle_orm_1.eq)(schema_1.nas.id, id)).returning());
                if (!row)
                    throw (0, errors_2.notFound)('nas not found');
                return { data: nasView(row) };
            },
        },
        remove: {
            rest: 'DELETE /api/nas/:id',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Remove an access server',
                tag: 'nas',
                params: (0, schemas_2.idParams)(),
                errors: { ...schemas_2.adminErrors, 404: 'nas not found' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                const [row] = await (0, client_1.db)().delete(schema_1.nas).where((0, drizzle_orm_1.eq)(schema_1.nas.id, ctx.params.id)).returning({ id: schema_1.nas.id });
                if (!row)
                    throw (0, errors_2.notFound)('nas not found');
                return { data: { id: row.id, deleted: true } };
            },
        },
    },
};
//# sourceMappingURL=nas.service.js.map