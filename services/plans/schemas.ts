/** Request schemas of the plan routes (`/api/services`). */
import { currencyCode, moneyAmount, object, type Infer } from '../../shared/http/schemas';
import { VENDORS } from '../../shared/vendors/profiles';
import { RATE_LIMIT_PATTERN } from '../../shared/vendors/rate';

const rateLimitText = { type: 'string', pattern: RATE_LIMIT_PATTERN, maxLength: 200 } as const;
const fupTier = object(
  {
    level: { type: 'integer', minimum: 1, maximum: 3 },
    threshold_gb: { type: 'number', minimum: 0, maximum: 10000 },
    rate_limit: rateLimitText,
  },
  ['level', 'threshold_gb', 'rate_limit'],
);
const quotaGb = { type: ['number', 'null'], minimum: 0, maximum: 10000 } as const;

export const planFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  price: moneyAmount,
  duration_days: { type: 'integer', minimum: 1, maximum: 3660 },
  currency: currencyCode,
  daily_quota_gb: quotaGb,
  monthly_quota_gb: quotaGb,
  rate_limit: { ...rateLimitText, type: ['string', 'null'] },
  pool_name: { type: ['string', 'null'], maxLength: 64, pattern: '^[A-Za-z0-9_.-]*$' },
  /** One of our IPv6 pools (GET /api/ipv6-pools: prefixes handed out by us), or the NAS's own pool name. */
  framed_ipv6_pool: { type: ['string', 'null'], maxLength: 64, pattern: '^[A-Za-z0-9_.-]*$' },
  delegated_ipv6_pool: { type: ['string', 'null'], maxLength: 64, pattern: '^[A-Za-z0-9_.-]*$' },
  mac_binding: { type: 'boolean' },
  /** Subscribers may move to it themselves in self-care (docs/self-care.md). */
  self_service: { type: 'boolean' },
  fup_tiers: { type: 'array', items: fupTier, maxItems: 3 },
  /** Extra reply pairs per NAS vendor, one `Attribute op "value"` a line (checked against the dictionary). */
  vendor_attributes: {
    type: 'object',
    properties: Object.fromEntries(VENDORS.map((v) => [v, { type: 'string', maxLength: 4000 }])) as Record<
      string,
      { type: 'string'; maxLength: number }
    >,
    additionalProperties: false,
  },
} as const;

export const planCreateBody = object(planFields, ['name', 'price', 'duration_days']);
export const planUpdateBody = { ...object(planFields), minProperties: 1 };
export type PlanInput = Infer<typeof planUpdateBody>;
export type NewPlanInput = Infer<typeof planCreateBody>;
