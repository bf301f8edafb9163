/** Request schema and error table of GET /api/transactions (declared on the action in ledger.service.ts). */
import { PAYMENT_METHODS } from '../../shared/billing/types';
import { formatProperty } from '../../shared/http/csv';
import { idSchema, isoDate, object, paginationProperties, type Infer } from '../../shared/http/schemas';
import { TRANSACTION_TYPES } from '../../shared/ledger';

export const TAG = 'transactions';

export const ledgerQuery = object({
  ...paginationProperties,
  type: { type: 'string', enum: [...TRANSACTION_TYPES] },
  method: { type: 'string', enum: [...PAYMENT_METHODS] },
  subscriber_id: idSchema,
  reseller_id: idSchema,
  manager_id: idSchema,
  from: isoDate,
  to: isoDate,
  order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
  ...formatProperty,
});
export type LedgerInput = Infer<typeof ledgerQuery>;

const money = { type: 'number' } as const;
const nullableId = { type: ['integer', 'null'] } as const;
const nullableText = { type: ['string', 'null'] } as const;

export const transactionRow = object({
  id: { type: 'integer' },
  type: { type: 'string', enum: [...TRANSACTION_TYPES] },
  amount: { ...money, description: 'signed: received or credited is positive, given back or debited negative' },
  currency: { type: 'string' },
  method: nullableText,
  reference: nullableText,
  notes: nullableText,
  invoice_id: nullableId,
  invoice_number: nullableText,
  subscriber_id: nullableId,
  subscriber_username: nullableText,
  reseller_id: nullableId,
  reseller_name: nullableText,
  manager_id: nullableId,
  manager_username: nullableText,
  created_at: { type: 'string', format: 'date-time' },
});
