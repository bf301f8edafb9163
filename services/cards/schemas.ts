/** Request schemas of the card routes; each action's input type is inferred from its schema. */
import {
  idParams,
  idSchema,
  isoDate,
  moneyAmount,
  object,
  paginationProperties,
  type Infer,
} from '../../shared/http/schemas';
import { PAPER_NAMES } from '../../shared/paper';

export const MAX_BATCH = 100_000;

export const createBatchBody = object(
  {
    count: { type: 'integer', minimum: 1, maximum: MAX_BATCH },
    value: { ...moneyAmount, exclusiveMinimum: 0 },
    service_id: idSchema,
    reseller_id: idSchema,
    expires_at: isoDate,
    prefix: { type: 'string', pattern: '^[A-Z0-9]{0,10}$' },
  },
  ['count'],
);
export type CreateBatchInput = Infer<typeof createBatchBody>;

export const listBatchesQuery = object({ ...paginationProperties, reseller_id: idSchema });
export type ListBatchesInput = Infer<typeof listBatchesQuery>;

export const batchCardsQuery = object({
  ...paginationProperties,
  status: { type: 'string', enum: ['active', 'suspended', 'used'] },
});

export const cardPath = idParams('id');

export const redeemBody = object({ pin: { type: 'string', minLength: 1, maxLength: 40 } }, ['pin']);
export type RedeemInput = Infer<typeof redeemBody>;

export const liftBody = object({ subscriber_id: idSchema, address: { type: 'string', minLength: 1, maxLength: 64 } });
export type LiftInput = Infer<typeof liftBody>;

export const pdfQuery = object({
  paper: { type: 'string', enum: PAPER_NAMES },
  per_page: { type: 'integer', minimum: 1, maximum: 40 },
  language: { type: 'string', pattern: '^[a-z]{2}$' },
  /** Card numbers (the serial's last group): the sheet holds cards from..to of the batch. */
  from: { type: 'integer', minimum: 1, maximum: MAX_BATCH },
  to: { type: 'integer', minimum: 1, maximum: MAX_BATCH },
});
export type PdfQuery = Infer<typeof pdfQuery>;
