/** Request schemas of /api/webhooks: ajv, the OpenAPI document and the input types come from these. */
import { idSchema, object, paginationProperties, type Infer } from '../../shared/http/schemas';
import { WEBHOOK_EVENTS } from './events';

const url = { type: 'string', minLength: 1, maxLength: 2000 } as const;
const events = {
  type: 'array',
  items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
  minItems: 1,
  uniqueItems: true,
} as const;
const description = { type: 'string', maxLength: 200 } as const;
/** Caller-chosen secrets must be long enough to resist guessing; omitted, one is generated. */
const secret = { type: 'string', minLength: 16, maxLength: 200 } as const;

export const createBody = object({ url, events, description, secret, enabled: { type: 'boolean' } }, ['url', 'events']);
export type CreateInput = Infer<typeof createBody>;

export const updateBody = {
  ...object({ url, events, description, secret, enabled: { type: 'boolean' } }),
  minProperties: 1,
} as const;
export type UpdateInput = Infer<typeof updateBody> & { id: number };

export const deliveriesQuery = object({
  ...paginationProperties,
  status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
  event: { type: 'string', enum: [...WEBHOOK_EVENTS] },
});
export type DeliveriesInput = Infer<typeof deliveriesQuery> & { id: number };

/** `delivery_id` is a bigserial: no int4 bound. */
export const deliveryParams = {
  type: 'object',
  properties: { id: idSchema, delivery_id: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
  required: ['id', 'delivery_id'],
} as const;
export type DeliveryPath = Infer<typeof deliveryParams>;
