"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.managerFields = void 0;
/** Request schemas of the manager routes. */
const schemas_1 = require("../../shared/http/schemas");
const claims_1 = require("../../shared/auth/claims");
const permissionList = { type: 'array', items: { type: 'string', pattern: '^[a-z_]+\\.[a-z_]+$' }, maxItems: 100 };
exports.managerFields = {
    username: { type: 'string', minLength: 3, maxLength: 64, pattern: '^[A-Za-z0-9_.@-]+$' },
    password: { type: 'string', minLength: 8, maxLength: 200 },
    role: { type: 'string', enum: [...claims_1.ROLES] },
    reseller_id: { ...schemas_1.idSchema, type: ['integer', 'null'] },
    permissions: permissionList,
    active: { type: 'boolean' },
};
//# sourceMappingURL=schemas.js.map