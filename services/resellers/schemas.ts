/** Request schemas of the reseller routes; each action's input type is inferred from its schema. */
import {
  currencyCode,
  idSchema,
  moneyAmount,
  object,
  paginationProperties,
  type Infer,
} from '../../shared/http/schemas';

export const resellerFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  commission_rate: { type: 'number', minimum: 0, maximum: 100 },
  currency: currencyCode,
} as const;

export const createResellerBody = object(
  { ...resellerFields, parent_id: { ...idSchema, type: ['integer', 'null'] }, balance: moneyAmount },
  ['name'],
);
export type CreateResellerInput = Infer<typeof createResellerBody>;

export const listResellersQuery = object({ ...paginationProperties, parent_id: idSchema });
export type ListResellersInput = Infer<typeof listResellersQuery>;

export const updateResellerBody = { ...object(resellerFields), minProperties: 1 } as const;
export type UpdateResellerInput = Infer<typeof updateResellerBody>;

export const adjustBalanceBody = object(
  { amount: { type: 'number', minimum: -1e12, maximum: 1e12 }, notes: { type: 'string', maxLength: 1000 } },
  ['amount'],
);
export type AdjustBalanceInput = Infer<typeof adjustBalanceBody>;

export const serviceLimitBody = object(
  { service_id: idSchema, max_subscribers: { type: ['integer', 'null'], minimum: 0, maximum: 10000000 } },
  ['service_id'],
);
export type ServiceLimitInput = Infer<typeof serviceLimitBody>;
