/** Request schemas and error tables of the invoice routes (declared on the actions in invoices.service.ts). */
import type { JsonSchema } from '../../shared/http/route';
import { object } from '../../shared/http/schemas';
import { FAILURES } from '../../shared/failures';

export const TAG = 'invoices';
export const WRITE = 'admin or reseller (own tree)';
export const READ = 'any authenticated (scope-filtered)';

/** Money the caller pays: strictly positive (decimals checked against the currency in the action). */
export const positiveAmount: JsonSchema = { type: 'number', exclusiveMinimum: 0, maximum: 1e12 };
export const item = object(
  {
    description: { type: 'string', minLength: 1, maxLength: 500 },
    qty: { type: 'number', exclusiveMinimum: 0, maximum: 1e6 },
    unit_price: { type: 'number', minimum: 0, maximum: 1e12 },
  },
  ['description', 'qty', 'unit_price'],
);
export const items: JsonSchema = { type: 'array', items: item, minItems: 1, maxItems: 500 };
export const taxRate: JsonSchema = { type: 'number', minimum: 0, maximum: 100 };
export const notes: JsonSchema = { type: 'string', maxLength: 4000 };
export const reference: JsonSchema = { type: 'string', maxLength: 200 };
export const readErrors = { 403: 'not authorized (outside the caller\'s tree)', 404: FAILURES.invoiceNotFound.message };
export const writeErrors = { 403: 'not authorized (role, or outside the caller\'s tree)', 404: FAILURES.invoiceNotFound.message };
