"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.KEY_TTL_HOURS = void 0;
exports.requestHash = requestHash;
exports.idempotentWrite = idempotentWrite;
exports.pruneIdempotencyKeys = pruneIdempotencyKeys;
/**
 * Idempotency-Key on create, payment and quick-pay. The key row is inserted in the same transaction
 * as the write and completed with the response before commit, so:
 * - a repeat after commit finds the row and gets the stored response (status and body), nothing written;
 * - a concurrent repeat blocks on the unique key until the first commits, then does the same;
 * - when the first fails, its rollback removes the key too, and a repeat simply runs again;
 * - the same key with another route or body is 409.
 * Keys are per manager (the JWT's `sub`) and kept for 24 hours (the overdue job prunes them).
 */
const node_crypto_1 = __importDefault(require("node:crypto"));
const drizzle_orm_1 = require("drizzle-orm");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
exports.KEY_TTL_HOURS = 24;
const MAX_KEY_LENGTH = 200;
/** JSON with sorted object keys, so the same body hashes the same whatever its key order. */
function canonical(value) {
    if (Array.isArray(value))
        return `[${value.map(canonical).join(',')}]`;
    if (value && typeof value === 'object') {
        const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
        return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
    }
    return JSON.stringify(value);
}
function requestHash(route, params) {
    return node_crypto_1.default.createHash('sha256').update(route).update('\n').update(canonical(params)).digest('hex');
}
/** Runs `work` in one transaction, honouring the request's Idempotency-Key when it has one. */
async function idempotentWrite(ctx, successStatus, work) {
    const key = ctx.meta.idempotencyKey;
    if (!key)
        return (0, client_1.db)().transaction(work);
    if (key.length > MAX_KEY_LENGTH)
        throw (0, errors_1.badRequest)(`Idempotency-Key must be at most ${MAX_KEY_LENGTH} characters`);
    const managerId = (0, context_1.authOf)(ctx).managerId;
    const route = ctx.meta.route ?? ctx.action?.name ?? '';
    const hash = requestHash(route, ctx.params);
    return (0, client_1.db)().transaction(async (tx) => {
        const inserted = await tx
            .insert(schema_1.idempotencyKeys)
            .values({ managerId, key, route, requestHash: hash })
            .onConflictDoNothing()
            .returning({ key: schema_1.idempotencyKeys.key });
        if (inserted.length === 0) {
            const [first] = await tx
                .select()
                .from(schema_1.idempotencyKeys)
                .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.idempotencyKeys.managerId, managerId), (0, drizzle_orm_1.eq)(schema_1.idempotencyKeys.key, key)));
            if (first.route !== route || first.requestHash !== hash) {
                throw (0, errors_1.conflict)('Idempotency-Key was already used with a different request');
            }
            ctx.meta.$statusCode = first.statusCode ?? successStatus;
            return first.response;
        }
        const result = await work(tx);
        await tx
            .update(schema_1.idempotencyKeys)
            .set({ statusCode: successStatus, response: result })
            .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.idempotencyKeys.managerId, managerId), (0, drizzle_orm_1.eq)(schema_1.idempotencyKeys.key, key)));
        return result;
    });
}
async function pruneIdempotencyKeys() {
    const res = await (0, client_1.db)().delete(schema_1.idempotencyKeys).where((0, drizzle_orm_1.sql) `${schema_1.idempotencyKeys.createdAt} < now() - make_interval(hours => ${exports.KEY_TTL_HOURS})`);
    return res.rowCount ?? 0;
}
//# sourceMappingURL=idempotency.js.map