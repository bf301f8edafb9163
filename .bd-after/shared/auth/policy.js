"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.requireAdminOrReseller = exports.requireAdmin = exports.VIEW_ALL = void 0;
exports.requireAuth = requireAuth;
exports.hasPermission = hasPermission;
exports.requirePermission = requirePermission;
exports.requireRole = requireRole;
exports.scopeFor = scopeFor;
exports.inScope = inScope;
exports.scopePathPattern = scopePathPattern;
exports.resellerInScope = resellerInScope;
exports.assertRecordInScope = assertRecordInScope;
exports.targetReseller = targetReseller;
/**
 * The one place that decides who may do what, and over which reseller tree. Actions ask it; none
 * re-implements a role, permission or scope rule.
 *
 * - admin: every permission, every tree.
 * - reseller: the permissions in its token, over its own tree (itself and all descendants).
 * - user: the permissions in its token; over its reseller's tree when it has one, else over all
 *   (operator staff).
 * - `subscribers.view_all` widens reads to every tree; writes keep the caller's own tree.
 */
const drizzle_orm_1 = require("drizzle-orm");
const client_1 = require("../db/client");
const schema_1 = require("../db/schema");
const errors_1 = require("../errors");
exports.VIEW_ALL = 'subscribers.view_all';
function requireAuth(auth) {
    if (!auth)
        throw (0, errors_1.unauthorized)();
    return auth;
}
function hasPermission(auth, permission) {
    return auth.role === 'admin' || auth.permissions.includes(permission);
}
function requirePermission(auth, permission) {
    const a = requireAuth(auth);
    if (!hasPermission(a, permission))
        throw (0, errors_1.forbidden)(`permission ${permission} required`);
    return a;
}
function requireRole(auth, ...roles) {
    const a = requireAuth(auth);
    if (!roles.includes(a.role))
        throw (0, errors_1.forbidden)(`requires role ${roles.join(' or ')}`);
    return a;
}
const requireAdmin = (auth) => requireRole(auth, 'admin');
exports.requireAdmin = requireAdmin;
/** Writes on invoices and reseller-owned records: admin or reseller. */
const requireAdminOrReseller = (auth) => requireRole(auth, 'admin', 'reseller');
exports.requireAdminOrReseller = requireAdminOrReseller;
async function scopeFor(db, auth, access) {
    if (auth.role === 'admin')
        return { kind: 'all' };
    if (access === 'read' && auth.permissions.includes(exports.VIEW_ALL))
        return { kind: 'all' };
    if (auth.resellerId === null) {
        if (auth.role === 'user')
            return { kind: 'all' };
        throw (0, errors_1.forbidden)();
    }
    const found = await resellerPath(db, auth.resellerId);
    if (found === undefined)
        throw (0, errors_1.forbidden)('reseller of this token no longer exists');
    return { kind: 'tree', rootId: auth.resellerId, rootPath: found.path, treeGeneration: found.treeGeneration };
}
/**
 * Every request of a reseller caller reads its tree's path, and most reads of a record its reseller's: outside a transaction as one prepared
 * statement (building it through Drizzle and planning it anew cost more than the read itself).
 */
async function resellerPath(db, id) {
    if (!(0, client_1.isPoolDb)(db)) {
        const generation = (0, drizzle_orm_1.sql) `(select ${schema_1.resellerTreeGeneration.n} from ${schema_1.resellerTreeGeneration})`.mapWith(Number);
        return (await db.select({ path: schema_1.resellers.path, treeGeneration: generation }).from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, id)))[0];
    }
    const { rows } = await (0, client_1.pgPool)().query({
        name: 'policy_reseller_path',
        text: 'select path, (select n from reseller_tree_generation) as "treeGeneration" from resellers where id = $1',
        values: [id],
    });
    return rows[0] && { path: rows[0].path, treeGeneration: Number(rows[0].treeGeneration) };
}
/**
 * `column` belongs to a reseller of the scope's tree. `pathPattern` lets a statement cached by
 * shape take the tree's `like` pattern (see `scopePathPattern`) as a placeholder.
 */
function inScope(scope, column, pathPattern = scopePathPattern(scope)) {
    if (scope.kind === 'all')
        return (0, drizzle_orm_1.sql) `true`;
    return (0, drizzle_orm_1.sql) `${column} in (select ${schema_1.resellers.id} from ${schema_1.resellers} where ${schema_1.resellers.path} like ${pathPattern})`;
}
function scopePathPattern(scope) {
    return scope.kind === 'all' ? undefined : `${scope.rootPath}%`;
}
async function resellerInScope(db, scope, resellerId) {
    if (scope.kind === 'all')
        return true;
    const found = await resellerPath(db, resellerId);
    return found !== undefined && found.path.startsWith(scope.rootPath);
}
/**
 * The rule for one record: it exists (else 404 with `notFoundMessage`) and its reseller is in the
 * caller's scope (else 403). `resellerId` undefined means the record was not found.
 */
async function assertRecordInScope(db, auth, access, resellerId, notFoundMessage) {
    if (resellerId === undefined || resellerId === null)
        throw (0, errors_1.notFound)(notFoundMessage);
    const scope = await scopeFor(db, auth, access);
    if (!(await resellerInScope(db, scope, resellerId)))
        throw (0, errors_1.forbidden)();
    return scope;
}
/** The reseller a new record belongs to: the caller's own unless an admin (or an ancestor) names one in its tree. */
async function targetReseller(db, auth, requested) {
    if (requested === undefined) {
        if (auth.resellerId !== null)
            return auth.resellerId;
        throw (0, errors_1.forbidden)('reseller_id is required for a caller without a reseller');
    }
    const scope = await scopeFor(db, auth, 'write');
    const [row] = await db.select({ id: schema_1.resellers.id }).from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, requested));
    if (!row)
        throw (0, errors_1.badRequest)('reseller_id not found');
    if (!(await resellerInScope(db, scope, requested)))
        throw (0, errors_1.forbidden)();
    return requested;
}
//# sourceMappingURL=policy.js.map