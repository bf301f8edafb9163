"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.isSerializationFailure = exports.isUniqueViolation = void 0;
exports.conflictOnDuplicate = conflictOnDuplicate;
const errors_1 = require("../errors");
/** PostgreSQL error codes the services turn into API errors. Drizzle wraps driver errors in `cause`. */
function pgCode(err) {
    let e = err;
    for (let i = 0; e && i < 4; i++) {
        if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))
            return e.code;
        e = e.cause;
    }
    return undefined;
}
const isUniqueViolation = (err) => pgCode(err) === '23505';
exports.isUniqueViolation = isUniqueViolation;
const isSerializationFailure = (err) => pgCode(err) === '40001' || pgCode(err) === '40P01';
exports.isSerializationFailure = isSerializationFailure;
/** Runs a write; a unique-index violation becomes 409 with `message` (e.g. `username already exists`). */
async function conflictOnDuplicate(message, write) {
    try {
        return await write();
    }
    catch (err) {
        if ((0, exports.isUniqueViolation)(err))
            throw new errors_1.ApiError(409, message);
        throw err;
    }
}
//# sourceMappingURL=errors.js.map