"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.resellerFields = void 0;
/** Request schemas of the reseller routes. */
const schemas_1 = require("../../shared/http/schemas");
exports.resellerFields = {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    commission_rate: { type: 'number', minimum: 0, maximum: 100 },
    currency: schemas_1.currencyCode,
};
//# sourceMappingURL=schemas.js.map