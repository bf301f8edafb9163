"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.planFields = void 0;
/** Request schemas of the plan routes (`/api/services`). */
const schemas_1 = require("../../shared/http/schemas");
const rateLimitText = { type: 'string', pattern: '^\\d+[kKmMgG]?(/\\d+[kKmMgG]?)?( .*)?$', maxLength: 200 };
const fupTier = (0, schemas_1.object)({
    level: { type: 'integer', minimum: 1, maximum: 3 },
    threshold_gb: { type: 'number', minimum: 0, maximum: 10000 },
    rate_limit: rateLimitText,
}, ['level', 'threshold_gb', 'rate_limit']);
const quotaGb = { type: ['number', 'null'], minimum: 0, maximum: 10000 };
exports.planFields = {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    price: schemas_1.moneyAmount,
    duration_days: { type: 'integer', minimum: 1, maximum: 3660 },
    currency: schemas_1.currencyCode,
    daily_quota_gb: quotaGb,
    monthly_quota_gb: quotaGb,
    rate_limit: { ...rateLimitText, type: ['string', 'null'] },
    pool_name: { type: ['string', 'null'], maxLength: 64, pattern: '^[A-Za-z0-9_.-]*$' },
    mac_binding: { type: 'boolean' },
    fup_tiers: { type: 'array', items: fupTier, maxItems: 3 },
};
//# sourceMappingURL=schemas.js.map