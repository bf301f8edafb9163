"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ROLES = void 0;
exports.ROLES = ['admin', 'reseller', 'user'];
//# sourceMappingURL=claims.js.map