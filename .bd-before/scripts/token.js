"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
/**
 * `npm run token -- [--manager 1] [--version 0] [--role admin|reseller|user] [--reseller 3] [--perm a.b,c.d] [--ttl 3600]`
 * prints a development JWT signed with JWT_SECRET for an existing manager. The gateway checks the
 * manager's row on every request: the manager must exist and be active, `--version` must equal its
 * token_version (raised by each password change), and its role, reseller and permissions come
 * from the row; the role, reseller and permission flags only fill the claims clients read.
 */
const node_util_1 = require("node:util");
const claims_1 = require("../shared/auth/claims");
const jwt_1 = require("../shared/auth/jwt");
const { values } = (0, node_util_1.parseArgs)({
    options: {
        manager: { type: 'string', default: '1' },
        version: { type: 'string', default: '0' },
        role: { type: 'string', default: 'admin' },
        reseller: { type: 'string' },
        perm: { type: 'string', default: '' },
        ttl: { type: 'string', default: '3600' },
    },
});
const secret = process.env.JWT_SECRET;
if (!secret) {
    console.error('JWT_SECRET is not set');
    process.exit(2);
}
if (!claims_1.ROLES.includes(values.role)) {
    console.error(`--role must be one of ${claims_1.ROLES.join(', ')}`);
    process.exit(2);
}
const { token } = (0, jwt_1.signToken)({
    managerId: Number(values.manager),
    role: values.role,
    resellerId: values.reseller ? Number(values.reseller) : null,
    permissions: values.perm ? values.perm.split(',') : [],
    tokenVersion: Number(values.version),
}, secret, Number(values.ttl));
console.log(token);
//# sourceMappingURL=token.js.map