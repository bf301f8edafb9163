/** Request schemas and error tables of the invoice routes (declared on the actions in invoices.service.ts). */
import {
  currencyCode,
  idSchema,
  isoDate,
  isoDateTime,
  object,
  paginationProperties,
  type Infer,
} from '../../shared/http/schemas';
import { INVOICE_STATUSES } from '../../shared/domain/invoice-state';
import { PAYMENT_METHODS, type PaymentMethod } from '../../shared/billing/types';
import { FAILURES } from '../../shared/failures';
import type { InvoicePermission } from '../../shared/auth/permissions';

export const TAG = 'invoices';
export const WRITE = 'admin or reseller (own tree)';
/** An invoice write's rule: its named permission (shared/auth/policy.ts, invoicePermissions). */
export function writeAccess<P extends InvoicePermission>(permission: P): `${P} (${string})` {
  return `${permission} (admin, or a reseller-role manager in its own tree that names it or no invoices.* at all)`;
}
export const READ = 'any authenticated (scope-filtered)';

/** Money the caller pays: strictly positive (decimals checked against the currency in the action). */
export const positiveAmount = { type: 'number', exclusiveMinimum: 0, maximum: 1e12 } as const;
export const item = object(
  {
    description: { type: 'string', minLength: 1, maxLength: 500 },
    qty: { type: 'number', exclusiveMinimum: 0, maximum: 1e6 },
    unit_price: { type: 'number', minimum: 0, maximum: 1e12 },
  },
  ['description', 'qty', 'unit_price'],
);
export const items = { type: 'array', items: item, minItems: 1, maxItems: 500 } as const;
export type ItemParam = Infer<typeof item>;
export const taxRate = { type: 'number', minimum: 0, maximum: 100 } as const;
export const notes = { type: 'string', maxLength: 4000 } as const;
export const reference = { type: 'string', maxLength: 200 } as const;
export const readErrors = { 403: "not authorized (outside the caller's tree)", 404: FAILURES.invoiceNotFound.message };
export const writeErrors = {
  403: "not authorized (role, or outside the caller's tree)",
  404: FAILURES.invoiceNotFound.message,
};

export const listQuery = object({
  ...paginationProperties,
  status: { type: 'string', enum: [...INVOICE_STATUSES] },
  subscriber_id: idSchema,
  reseller_id: idSchema,
  from: isoDate,
  to: isoDate,
  search: { type: 'string', minLength: 1, maxLength: 100 },
  order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
});
export const createBody = object(
  { subscriber_id: idSchema, items, tax_rate: taxRate, due_date: isoDate, notes, currency: currencyCode },
  ['subscriber_id', 'items'],
);
export const updateBody = {
  ...object({ items, tax_rate: taxRate, due_date: isoDate, notes: { type: ['string', 'null'], maxLength: 4000 } }),
  minProperties: 1,
};
export const payBody = object(
  {
    amount: positiveAmount,
    method: { type: 'string', enum: [...PAYMENT_METHODS] },
    reference,
    paid_at: isoDateTime,
    notes,
  },
  ['amount'],
);
/** Quick-pay credits any excess to the wallet, so it cannot draw on it. */
const notWallet = PAYMENT_METHODS.filter((m): m is Exclude<PaymentMethod, 'wallet'> => m !== 'wallet');
export const quickPayBody = object(
  { amount: positiveAmount, method: { type: 'string', enum: notWallet }, reference, notes },
  ['amount'],
);
export const consolidateBody = object({ notes });
export const commissionsQuery = object({
  reseller_id: idSchema,
  from: isoDate,
  to: isoDate,
  status: { type: 'string', enum: [...INVOICE_STATUSES] },
  currency: { type: 'string', minLength: 3, maxLength: 3 },
});
export const prorateBody = object({ subscriber_id: idSchema, new_service_id: idSchema }, [
  'subscriber_id',
  'new_service_id',
]);

export type ListInvoicesInput = Infer<typeof listQuery>;
export type CreateInvoiceInput = Infer<typeof createBody>;
export type UpdateInvoiceInput = Infer<typeof updateBody>;
export type PayInput = Infer<typeof payBody>;
export type QuickPayInput = Infer<typeof quickPayBody>;
export type ConsolidateInput = Infer<typeof consolidateBody>;
export type CommissionsInput = Infer<typeof commissionsQuery>;
export type ProrateInput = Infer<typeof prorateBody>;
