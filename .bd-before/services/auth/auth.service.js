"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.authService = void 0;
const drizzle_orm_1 = require("drizzle-orm");
const passwords_1 = require("../../shared/auth/passwords");
const jwt_1 = require("../../shared/auth/jwt");
const config_1 = require("../../shared/config");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const schemas_1 = require("../../shared/http/schemas");
exports.authService = {
    name: 'auth',
    actions: {
        login: {
            rest: 'POST /api/auth/login',
            http: {
                auth: 'public',
                access: 'none',
                summary: 'Exchange manager credentials for a JWT',
                tag: 'auth',
                body: (0, schemas_1.object)({ username: { type: 'string', minLength: 1, maxLength: 200 }, password: { type: 'string', minLength: 1, maxLength: 200 } }, ['username', 'password']),
                errors: { 401: 'Wrong username or password' },
            },
            async handler(ctx) {
                const [manager] = await (0, client_1.db)().select().from(schema_1.managers).where((0, drizzle_orm_1.eq)(schema_1.managers.username, ctx.params.username));
                const ok = await (0, passwords_1.verifyPassword)(ctx.params.password, manager?.passwordHash);
                if (!manager || !ok)
                    throw (0, errors_1.unauthorized)('invalid username or password');
                if (!manager.active)
                    throw (0, errors_1.unauthorized)('manager is disabled');
                const cfg = (0, config_1.config)();
                const { token, expiresAt } = (0, jwt_1.signToken)({
                    managerId: manager.id,
                    role: manager.role,
                    resellerId: manager.resellerId,
                    permissions: manager.permissions,
                    tokenVersion: manager.tokenVersion,
                }, cfg.jwtSecret, cfg.jwtTtlSeconds);
                return { data: { token, expires_at: expiresAt.toISOString() } };
            },
        },
        logout: {
            rest: 'POST /api/auth/logout',
            http: {
                auth: 'jwt',
                access: 'any authenticated',
                summary: 'Revoke the calling token (its jti is blacklisted)',
                tag: 'auth',
                body: schemas_1.emptyBody,
            },
            async handler(ctx) {
                const auth = (0, context_1.authOf)(ctx);
                await (0, client_1.db)()
                    .insert(schema_1.tokenBlacklist)
                    .values({ jti: auth.jti, expiresAt: new Date(auth.exp * 1000) })
                    .onConflictDoNothing();
                await ctx.broadcast('auth.revoked', { jti: auth.jti, exp: auth.exp });
                return { data: { revoked: true } };
            },
        },
    },
};
//# sourceMappingURL=auth.service.js.map