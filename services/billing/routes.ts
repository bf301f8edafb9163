/** Routes served by the billing unit: invoices, payments, quick-pay, consolidation, commissions, proration. */
import type { JsonSchema, RouteDef } from '../../shared/http/route';
import { currencyCode, idParams, idSchema, isoDate, isoDateTime, object, paginationProperties } from '../../shared/http/schemas';
import { INVOICE_STATUSES } from '../../shared/domain/invoice-state';
import { PAYMENT_METHODS } from '../../shared/billing/types';

const TAG = 'invoices';
const WRITE = 'admin or reseller (own tree)';
const READ = 'any authenticated (scope-filtered)';

/** Money the caller pays: strictly positive (decimals checked against the currency in the action). */
const positiveAmount: JsonSchema = { type: 'number', exclusiveMinimum: 0, maximum: 1e12 };
const item = object(
  {
    description: { type: 'string', minLength: 1, maxLength: 500 },
    qty: { type: 'number', exclusiveMinimum: 0, maximum: 1e6 },
    unit_price: { type: 'number', minimum: 0, maximum: 1e12 },
  },
  ['description', 'qty', 'unit_price'],
);
const items: JsonSchema = { type: 'array', items: item, minItems: 1, maxItems: 500 };
const taxRate: JsonSchema = { type: 'number', minimum: 0, maximum: 100 };
const notes: JsonSchema = { type: 'string', maxLength: 4000 };
const reference: JsonSchema = { type: 'string', maxLength: 200 };
const readErrors = { 403: 'not authorized (outside the caller\'s tree)', 404: 'invoice not found' };
const writeErrors = { 403: 'not authorized (role, or outside the caller\'s tree)', 404: 'invoice not found' };

export const routes: RouteDef[] = [
  {
    method: 'GET', path: '/api/invoices', action: 'billing.list', auth: 'jwt', access: READ,
    summary: 'List invoices, newest first', tag: TAG,
    query: object({
      ...paginationProperties,
      status: { type: 'string', enum: [...INVOICE_STATUSES] },
      subscriber_id: idSchema,
      reseller_id: idSchema,
      from: isoDate,
      to: isoDate,
      search: { type: 'string', minLength: 1, maxLength: 100 },
      order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
    }),
    errors: { 403: 'reseller_id outside the caller\'s tree' },
  },
  {
    method: 'GET', path: '/api/invoices/commissions', action: 'billing.commissions', auth: 'jwt', access: 'any authenticated (reseller_id: admin scope, or a reseller inside its tree)',
    summary: 'Monthly commission breakdown of a reseller', tag: TAG,
    query: object({ reseller_id: idSchema, from: isoDate, to: isoDate, status: { type: 'string', enum: [...INVOICE_STATUSES] } }),
    errors: { 403: 'reseller_id outside the caller\'s tree' },
  },
  {
    method: 'POST', path: '/api/invoices/prorate', action: 'billing.prorate', auth: 'jwt', access: WRITE,
    summary: 'Pre-compute a prorated change of plan (nothing is written)', tag: TAG,
    body: object({ subscriber_id: idSchema, new_service_id: idSchema }, ['subscriber_id', 'new_service_id']),
    errors: { 400: 'new_service_id not found', 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'POST', path: '/api/invoices/quick-pay/:subscriber_id', action: 'billing.quickPay', auth: 'jwt', access: WRITE,
    summary: 'Pay the subscriber\'s open invoices oldest first; the excess goes to the wallet', tag: TAG,
    params: idParams('subscriber_id'), idempotent: true,
    body: object({ amount: positiveAmount, method: { type: 'string', enum: PAYMENT_METHODS.filter((m) => m !== 'wallet') }, reference, notes }, ['amount']),
    errors: { 403: 'not authorized', 404: 'subscriber not found', 409: 'Idempotency-Key reused with another request' },
  },
  {
    method: 'POST', path: '/api/invoices/consolidate/:subscriber_id', action: 'billing.consolidate', auth: 'jwt', access: WRITE,
    summary: 'Merge the subscriber\'s pending invoices into one new pending invoice and void them', tag: TAG,
    params: idParams('subscriber_id'), body: object({ notes }),
    errors: { 403: 'not authorized', 404: 'subscriber not found', 409: 'fewer than two pending invoices, or mixed currencies or tax rates' },
  },
  {
    method: 'GET', path: '/api/invoices/:id', action: 'billing.get', auth: 'jwt', access: READ,
    summary: 'One invoice with its lines, payment history and public link', tag: TAG, params: idParams(), errors: readErrors,
  },
  {
    method: 'POST', path: '/api/invoices', action: 'billing.create', auth: 'jwt', access: WRITE,
    summary: 'Create an invoice manually', tag: TAG, success: 201, idempotent: true,
    body: object({ subscriber_id: idSchema, items, tax_rate: taxRate, due_date: isoDate, notes, currency: currencyCode }, ['subscriber_id', 'items']),
    errors: { 400: 'validation (the message names the field), subscriber_id not found', 403: 'not authorized', 409: 'Idempotency-Key reused with another request' },
  },
  {
    method: 'PUT', path: '/api/invoices/:id', action: 'billing.update', auth: 'jwt', access: WRITE,
    summary: 'Edit a pending invoice (items, tax_rate, due_date, notes); totals are recomputed', tag: TAG, params: idParams(),
    body: { ...object({ items, tax_rate: taxRate, due_date: isoDate, notes: { type: ['string', 'null'], maxLength: 4000 } }), minProperties: 1 },
    errors: { ...writeErrors, 409: 'the invoice is not pending' },
  },
  {
    method: 'DELETE', path: '/api/invoices/:id', action: 'billing.remove', auth: 'jwt', access: 'admin',
    summary: 'Hard-delete an invoice without payments', tag: TAG, params: idParams(),
    errors: { 403: 'not an admin', 404: 'invoice not found', 409: 'cannot delete paid invoice' },
  },
  {
    method: 'POST', path: '/api/invoices/:id/payment', action: 'billing.pay', auth: 'jwt', access: WRITE,
    summary: 'Add a payment (ledger row and payment row in one transaction)', tag: TAG, params: idParams(), idempotent: true,
    body: object({ amount: positiveAmount, method: { type: 'string', enum: [...PAYMENT_METHODS] }, reference, paid_at: isoDateTime, notes }, ['amount']),
    errors: { 400: 'amount exceeds balance', ...writeErrors, 409: 'invoice is void, or Idempotency-Key reused with another request' },
  },
  {
    method: 'GET', path: '/api/invoices/:id/payments', action: 'billing.payments', auth: 'jwt', access: READ,
    summary: 'Payment rows of an invoice', tag: TAG, params: idParams(), errors: readErrors,
  },
];
