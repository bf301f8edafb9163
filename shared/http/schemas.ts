/** JSON Schema building blocks reused by the route declarations of every service. */
import type { JsonSchema } from './route';

export const MAX_INT4 = 2147483647;

export const idSchema: JsonSchema = { type: 'integer', minimum: 1, maximum: MAX_INT4 };

export function idParams(...names: string[]): JsonSchema {
  const list = names.length ? names : ['id'];
  return {
    type: 'object',
    properties: Object.fromEntries(list.map((n) => [n, idSchema])),
    required: list,
  };
}

/** The largest page a list returns (spec: `limit` max 500). */
export const MAX_PAGE_LIMIT = 500;

export const paginationProperties: Record<string, JsonSchema> = {
  page: { type: 'integer', minimum: 1, maximum: MAX_INT4, default: 1 },
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: 50 },
};

export const isoDate: JsonSchema = { type: 'string', format: 'date' };
export const isoDateTime: JsonSchema = { type: 'string', format: 'date-time' };
export const currencyCode: JsonSchema = { type: 'string', pattern: '^[A-Z]{3}$' };
/** A money amount in the API: a decimal number (checked against the currency's digits later). */
export const moneyAmount: JsonSchema = { type: 'number', minimum: 0, maximum: 1e12 };

export function object(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}

export const emptyBody: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

/** The shape of `Date` text the database hands back, as the API's ISO strings. */
export function isoTimestamp(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** The error table of admin-only routes. */
export const adminErrors = { 403: 'Not an admin' };
