"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.authOf = authOf;
exports.pageOf = pageOf;
const policy_1 = require("../auth/policy");
function authOf(ctx) {
    return (0, policy_1.requireAuth)(ctx.meta.auth);
}
function pageOf(params) {
    const page = params.page ?? 1;
    const limit = params.limit ?? 50;
    return { page, limit, offset: (page - 1) * limit };
}
//# sourceMappingURL=context.js.map