"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.adminErrors = exports.emptyBody = exports.moneyAmount = exports.currencyCode = exports.isoDateTime = exports.isoDate = exports.paginationProperties = exports.MAX_PAGE_LIMIT = exports.idSchema = exports.MAX_INT4 = void 0;
exports.idParams = idParams;
exports.object = object;
exports.isoTimestamp = isoTimestamp;
exports.MAX_INT4 = 2147483647;
exports.idSchema = { type: 'integer', minimum: 1, maximum: exports.MAX_INT4 };
function idParams(...names) {
    const list = names.length ? names : ['id'];
    return {
        type: 'object',
        properties: Object.fromEntries(list.map((n) => [n, exports.idSchema])),
        required: list,
    };
}
/** The largest page a list returns (spec: `limit` max 500). */
exports.MAX_PAGE_LIMIT = 500;
exports.paginationProperties = {
    page: { type: 'integer', minimum: 1, maximum: exports.MAX_INT4, default: 1 },
    limit: { type: 'integer', minimum: 1, maximum: exports.MAX_PAGE_LIMIT, default: 50 },
};
exports.isoDate = { type: 'string', format: 'date' };
exports.isoDateTime = { type: 'string', format: 'date-time' };
exports.currencyCode = { type: 'string', pattern: '^[A-Z]{3}$' };
/** A money amount in the API: a decimal number (checked against the currency's digits later). */
exports.moneyAmount = { type: 'number', minimum: 0, maximum: 1e12 };
function object(properties, required = []) {
    return { type: 'object', properties, required, additionalProperties: false };
}
exports.emptyBody = { type: 'object', properties: {}, additionalProperties: false };
/** The shape of `Date` text the database hands back, as the API's ISO strings. */
function isoTimestamp(value) {
    if (value === null || value === undefined)
        return null;
    return (value instanceof Date ? value : new Date(value)).toISOString();
}
/** The error table of admin-only routes. */
exports.adminErrors = { 403: 'Not an admin' };
//# sourceMappingURL=schemas.js.map