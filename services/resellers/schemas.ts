/** Request schemas of the reseller routes. */
import { currencyCode } from '../../shared/http/schemas';

export const resellerFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  commission_rate: { type: 'number', minimum: 0, maximum: 100 },
  currency: currencyCode,
} as const;
