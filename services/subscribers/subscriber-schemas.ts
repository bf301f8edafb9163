/** Request schemas of the subscriber routes, declared on their actions in subscribers.service.ts and bulk.service.ts. */
import {
  idParams,
  idSchema,
  isoDate,
  object,
  paginationProperties,
  subscriberPassword,
  type Infer,
} from '../../shared/http/schemas';
import type { JsonSchema } from '../../shared/http/route';

const text = (maxLength: number) => ({ type: ['string', 'null'], maxLength }) as const;

/** Fields of create and update. Username, MAC and address shapes are checked in the action, for messages that say what a valid one looks like. */
export const subscriberFields = {
  username: { type: 'string', minLength: 1, maxLength: 128 },
  password: subscriberPassword,
  service_id: idSchema,
  full_name: text(200),
  // Any common spelling ("0780 123 4507", "(0780) 123-4507", "+964..."): stored in E.164 (shared/phone.ts).
  phone: { type: ['string', 'null'], maxLength: 32, pattern: '^(\\+|\\()?[0-9][0-9 ().-]{2,30}$' },
  mac_address: text(32),
  static_ip: text(15),
  /** Framed-IPv6-Prefix: a prefix of /48 to /128 (an address alone is its /128); '' clears it. */
  ipv6_prefix: text(50),
  /** Delegated-IPv6-Prefix: the LAN prefix, /48 to /64; '' clears it. */
  delegated_ipv6_prefix: text(50),
  expiry_date: isoDate,
  reseller_id: idSchema,
  region: text(200),
  building: text(200),
  address: text(500),
  nationality: text(100),
  country: text(100),
  notes: text(4000),
  price: { type: ['number', 'null'], minimum: 0, maximum: 1e12 },
  override_price: { type: 'boolean' },
  /** Renewed from the wallet at expiry by the lifecycle sweep (docs/subscribers.md). */
  auto_renew: { type: 'boolean' },
} as const;

export const createBody = object(subscriberFields, ['username', 'password', 'service_id']);
export const updateBody = object(subscriberFields);

export type CreateSubscriberInput = Infer<typeof createBody>;
export type UpdateSubscriberInput = Infer<typeof updateBody>;

export const LIST_STATUSES = ['active', 'inactive', 'expired', 'expiring', 'online', 'offline'] as const;
export const LIST_SORTS = ['created_at', 'username', 'expiry_date', 'daily_quota_used'] as const;
/** Why access is blocked (`subscribers.blocked_reason`, kept by the system). */
export const BLOCKED_REASONS = ['expired', 'quota', 'overdue'] as const;

export const listQuery = object({
  ...paginationProperties,
  search: { type: 'string', minLength: 1, maxLength: 100 },
  status: { type: 'string', enum: [...LIST_STATUSES] },
  service_id: idSchema,
  reseller_id: idSchema,
  nas_id: idSchema,
  fup_level: { type: 'integer', minimum: 0, maximum: 3 },
  auto_renew: { type: 'boolean' },
  blocked: { type: 'boolean' },
  blocked_reason: { type: 'string', enum: [...BLOCKED_REASONS] },
  sort: { type: 'string', enum: [...LIST_SORTS], default: 'created_at' },
  order: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
});

/** Out-of-range quota and price values are clamped by the action (spec section 8), not refused. */
const clamped = { type: 'number', minimum: -1e12, maximum: 1e12 } as const;
const realm = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*$' } as const;

export const renameBody = object({ new_username: { type: 'string', minLength: 1, maxLength: 128 } }, ['new_username']);
export const addDaysBody = object(
  { days: { type: 'integer', minimum: 1, maximum: 3650 }, reason: { type: 'string', minLength: 1, maxLength: 500 } },
  ['days', 'reason'],
);
export const changeServiceBody = object(
  { service_id: idSchema, charge_difference: { type: 'boolean', default: false } },
  ['service_id'],
);
export const changePriceQuery = object({ service_id: idSchema }, ['service_id']);
export const topupBody = object({ gb: { type: 'number', exclusiveMinimum: 0, maximum: 10000 } }, ['gb']);
export const addBalanceBody = object({ amount: { type: 'number', exclusiveMinimum: 0, maximum: 1e12 } }, ['amount']);

// ---- bandwidth rules

const hhmm = { type: ['string', 'null'], pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' } as const;
export const bandwidthRuleFields = {
  direction: { type: 'string', enum: ['upload', 'download', 'both'] },
  rate_kbps: { type: 'integer', minimum: 1, maximum: 100_000_000 },
  start_time: hhmm,
  end_time: hhmm,
  days: { type: ['array', 'null'], items: { type: 'integer', minimum: 0, maximum: 6 }, uniqueItems: true, maxItems: 7 },
  priority: { type: 'integer', minimum: 1, maximum: 8 },
} as const;
export const ruleCreateBody = object(bandwidthRuleFields, ['direction', 'rate_kbps']);
export const ruleUpdateBody = {
  ...object({ ...bandwidthRuleFields, rule_id: idSchema }, ['rule_id']),
  minProperties: 2,
};
export const ruleDeleteBody = object({ rule_id: idSchema }, ['rule_id']);
export const ruleParams = idParams('id', 'rule_id');

// ---- bulk

/** Payload of each bulk action; the key order is the spec's table order. */
export const BULK_PAYLOADS = {
  renew: object({}),
  disconnect: object({}),
  enable: object({}),
  disable: object({}),
  reset_fup: object({}),
  delete: object({}),
  set_service: object({ service_id: idSchema, charge_difference: { type: 'boolean', default: false } }, ['service_id']),
  set_reseller: object({ reseller_id: idSchema }, ['reseller_id']),
  set_static_ip: {
    ...object({ ip: { type: 'string', format: 'ipv4' }, pool_name: { type: 'string', minLength: 1, maxLength: 64 } }),
    oneOf: [{ required: ['ip'] }, { required: ['pool_name'] }],
  },
  set_static_ipv6: {
    ...object(
      {
        field: { type: 'string', enum: ['ipv6_prefix', 'delegated_ipv6_prefix'] },
        prefix: { type: 'string', minLength: 2, maxLength: 50 },
        pool_name: { type: 'string', minLength: 1, maxLength: 64 },
      },
      ['field'],
    ),
    oneOf: [{ required: ['prefix'] }, { required: ['pool_name'] }],
  },
  set_daily_quota: object({ gb: clamped }, ['gb']),
  set_monthly_quota: object({ gb: clamped }, ['gb']),
  set_price: object({ price: clamped, override_price: { type: 'boolean', default: true } }, ['price']),
  rename: object({ old_realm: realm, new_realm: realm }, ['old_realm', 'new_realm']),
  reset_mac: object({}),
  refill: object({}),
  set_auto_renew: object({ auto_renew: { type: 'boolean' } }, ['auto_renew']),
} as const;
export type BulkAction = keyof typeof BULK_PAYLOADS;
/** An action's payload after validation (the handler picks the action's schema by name). */
export type BulkPayload<A extends BulkAction> = Infer<(typeof BULK_PAYLOADS)[A]>;
export const BULK_ACTIONS = Object.keys(BULK_PAYLOADS) as BulkAction[];

/**
 * Most ids one bulk request may name (docs/subscribers.md, docs/security.md): more is a 400
 * naming `ids`. Larger sets go in several requests, each weighing on the rate limit by its size
 * (BULK_IDS_PER_RATE_UNIT per unit).
 */
export const MAX_BULK_IDS = 10_000;
export const BULK_IDS_PER_RATE_UNIT = 100;

/** The request as the handler reads it; bulkBody adds each action's payload schema. */
const bulkRequest = object(
  {
    ids: { type: 'array', items: idSchema, minItems: 1, maxItems: MAX_BULK_IDS },
    action: { type: 'string', enum: BULK_ACTIONS },
    payload: { type: 'object', default: {} },
  },
  ['ids', 'action'],
);
export type BulkRequest = Infer<typeof bulkRequest>;

export const bulkBody: JsonSchema = {
  ...bulkRequest,
  allOf: BULK_ACTIONS.map((action) => ({
    if: { properties: { action: { const: action } }, required: ['action'] },
    // The default here, not only on the outer `payload`: ajv judges this branch before it fills the
    // outer one, so a request without `payload` would skip the action's required fields.
    then: { properties: { payload: { ...BULK_PAYLOADS[action], default: {} } } },
  })),
};
