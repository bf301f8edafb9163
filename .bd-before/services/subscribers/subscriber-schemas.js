"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.bulkBody = exports.BULK_ACTIONS = exports.BULK_PAYLOADS = exports.ruleParams = exports.ruleDeleteBody = exports.ruleUpdateBody = exports.ruleCreateBody = exports.bandwidthRuleFields = exports.addBalanceBody = exports.topupBody = exports.changePriceQuery = exports.changeServiceBody = exports.addDaysBody = exports.renameBody = exports.listQuery = exports.LIST_SORTS = exports.LIST_STATUSES = exports.updateBody = exports.createBody = exports.subscriberFields = void 0;
/** Request schemas of the subscriber routes (routes.ts), kept here so routes.ts stays a table. */
const schemas_1 = require("../../shared/http/schemas");
const text = (maxLength) => ({ type: ['string', 'null'], maxLength });
/** Fields of create and update. Username, MAC and address shapes are checked in the action, for messages that say what a valid one looks like. */
exports.subscriberFields = {
    username: { type: 'string', minLength: 1, maxLength: 128 },
    password: { type: 'string', minLength: 1, maxLength: 128 },
    service_id: schemas_1.idSchema,
    full_name: text(200),
    phone: { type: ['string', 'null'], maxLength: 32, pattern: '^\\+?[0-9][0-9 ().-]{2,30}$' },
    mac_address: text(32),
    static_ip: text(15),
    expiry_date: schemas_1.isoDate,
    reseller_id: schemas_1.idSchema,
    region: text(200),
    building: text(200),
    address: text(500),
    nationality: text(100),
    country: text(100),
    notes: text(4000),
    price: { type: ['number', 'null'], minimum: 0, maximum: 1e12 },
    override_price: { type: 'boolean' },
};
exports.createBody = (0, schemas_1.object)(exports.subscriberFields, ['username', 'password', 'service_id']);
exports.updateBody = (0, schemas_1.object)(exports.subscriberFields);
exports.LIST_STATUSES = ['active', 'inactive', 'expired', 'expiring', 'online', 'offline'];
exports.LIST_SORTS = ['created_at', 'username', 'expiry_date', 'daily_quota_used'];
exports.listQuery = (0, schemas_1.object)({
    ...schemas_1.paginationProperties,
    search: { type: 'string', minLength: 1, maxLength: 100 },
    status: { type: 'string', enum: [...exports.LIST_STATUSES] },
    service_id: schemas_1.idSchema,
    reseller_id: schemas_1.idSchema,
    nas_id: schemas_1.idSchema,
    fup_level: { type: 'integer', minimum: 0, maximum: 3 },
    sort: { type: 'string', enum: [...exports.LIST_SORTS], default: 'created_at' },
    order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
});
/** Out-of-range quota and price values are clamped by the action (spec section 8), not refused. */
const clamped = { type: 'number', minimum: -1e12, maximum: 1e12 };
const realm = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*$' };
exports.renameBody = (0, schemas_1.object)({ new_username: { type: 'string', minLength: 1, maxLength: 128 } }, ['new_username']);
exports.addDaysBody = (0, schemas_1.object)({ days: { type: 'integer', minimum: 1, maximum: 3650 }, reason: { type: 'string', minLength: 1, maxLength: 500 } }, ['days', 'reason']);
exports.changeServiceBody = (0, schemas_1.object)({ service_id: schemas_1.idSchema, charge_difference: { type: 'boolean', default: false } }, ['service_id']);
exports.changePriceQuery = (0, schemas_1.object)({ service_id: schemas_1.idSchema }, ['service_id']);
exports.topupBody = (0, schemas_1.object)({ gb: { type: 'number', exclusiveMinimum: 0, maximum: 10000 } }, ['gb']);
exports.addBalanceBody = (0, schemas_1.object)({ amount: { type: 'number', exclusiveMinimum: 0, maximum: 1e12 } }, ['amount']);
// ---- bandwidth rules
const hhmm = { type: ['string', 'null'], pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' };
exports.bandwidthRuleFields = {
    direction: { type: 'string', enum: ['upload', 'download', 'both'] },
    rate_kbps: { type: 'integer', minimum: 1, maximum: 100_000_000 },
    start_time: hhmm,
    end_time: hhmm,
    days: { type: ['array', 'null'], items: { type: 'integer', minimum: 0, maximum: 6 }, uniqueItems: true, maxItems: 7 },
    priority: { type: 'integer', minimum: 1, maximum: 8 },
};
exports.ruleCreateBody = (0, schemas_1.object)(exports.bandwidthRuleFields, ['direction', 'rate_kbps']);
exports.ruleUpdateBody = { ...(0, schemas_1.object)({ ...exports.bandwidthRuleFields, rule_id: schemas_1.idSchema }, ['rule_id']), minProperties: 2 };
exports.ruleDeleteBody = (0, schemas_1.object)({ rule_id: schemas_1.idSchema }, ['rule_id']);
exports.ruleParams = { type: 'object', properties: { id: schemas_1.idSchema, rule_id: schemas_1.idSchema }, required: ['id', 'rule_id'] };
// ---- bulk
/** Payload of each bulk action; the key order is the spec's table order. */
exports.BULK_PAYLOADS = {
    renew: (0, schemas_1.object)({}),
    disconnect: (0, schemas_1.object)({}),
    enable: (0, schemas_1.object)({}),
    disable: (0, schemas_1.object)({}),
    reset_fup: (0, schemas_1.object)({}),
    delete: (0, schemas_1.object)({}),
    set_service: (0, schemas_1.object)({ service_id: schemas_1.idSchema, charge_difference: { type: 'boolean', default: false } }, ['service_id']),
    set_reseller: (0, schemas_1.object)({ reseller_id: schemas_1.idSchema }, ['reseller_id']),
    set_static_ip: {
        ...(0, schemas_1.object)({ ip: { type: 'string', format: 'ipv4' }, pool_name: { type: 'string', minLength: 1, maxLength: 64 } }),
        oneOf: [{ required: ['ip'] }, { required: ['pool_name'] }],
    },
    set_daily_quota: (0, schemas_1.object)({ gb: clamped }, ['gb']),
    set_monthly_quota: (0, schemas_1.object)({ gb: clamped }, ['gb']),
    set_price: (0, schemas_1.object)({ price: clamped, override_price: { type: 'boolean', default: true } }, ['price']),
    rename: (0, schemas_1.object)({ old_realm: realm, new_realm: realm }, ['old_realm', 'new_realm']),
    reset_mac: (0, schemas_1.object)({}),
    refill: (0, schemas_1.object)({}),
};
exports.BULK_ACTIONS = Object.keys(exports.BULK_PAYLOADS);
exports.bulkBody = {
    ...(0, schemas_1.object)({
        ids: { type: 'array', items: schemas_1.idSchema, minItems: 1, maxItems: 100_000 },
        action: { type: 'string', enum: exports.BULK_ACTIONS },
        payload: { type: 'object', default: {} },
    }, ['ids', 'action']),
    allOf: exports.BULK_ACTIONS.map((action) => ({
        if: { properties: { action: { const: action } }, required: ['action'] },
        then: { properties: { payload: exports.BULK_PAYLOADS[action] } },
    })),
};
//# sourceMappingURL=subscriber-schemas.js.map