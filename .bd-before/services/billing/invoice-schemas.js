"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.writeErrors = exports.readErrors = exports.reference = exports.notes = exports.taxRate = exports.items = exports.item = exports.positiveAmount = exports.READ = exports.WRITE = exports.TAG = void 0;
const schemas_1 = require("../../shared/http/schemas");
exports.TAG = 'invoices';
exports.WRITE = 'admin or reseller (own tree)';
exports.READ = 'any authenticated (scope-filtered)';
/** Money the caller pays: strictly positive (decimals checked against the currency in the action). */
exports.positiveAmount = { type: 'number', exclusiveMinimum: 0, maximum: 1e12 };
exports.item = (0, schemas_1.object)({
    description: { type: 'string', minLength: 1, maxLength: 500 },
    qty: { type: 'number', exclusiveMinimum: 0, maximum: 1e6 },
    unit_price: { type: 'number', minimum: 0, maximum: 1e12 },
}, ['description', 'qty', 'unit_price']);
exports.items = { type: 'array', items: exports.item, minItems: 1, maxItems: 500 };
exports.taxRate = { type: 'number', minimum: 0, maximum: 100 };
exports.notes = { type: 'string', maxLength: 4000 };
exports.reference = { type: 'string', maxLength: 200 };
exports.readErrors = { 403: 'not authorized (outside the caller\'s tree)', 404: 'invoice not found' };
exports.writeErrors = { 403: 'not authorized (role, or outside the caller\'s tree)', 404: 'invoice not found' };
//# sourceMappingURL=invoice-schemas.js.map