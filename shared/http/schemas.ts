/**
 * JSON Schema building blocks reused by the route declarations of every service. They keep their
 * literal types (`as const`, `const` type parameters), so `Infer<typeof schema>` gives the
 * action's input type from the same declaration that ajv validates and OpenAPI documents.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * What a schema accepts, as TypeScript. Defaulted properties count as present: the gateway's ajv
 * fills them in (`useDefaults`) before the action runs.
 */
export type Infer<S extends JSONSchema> = FromSchema<S>;

export const MAX_INT4 = 2147483647;

export const idSchema = { type: 'integer', minimum: 1, maximum: MAX_INT4 } as const;

type IdParamsSchema<N extends string> = {
  readonly type: 'object';
  readonly properties: { readonly [K in N]: typeof idSchema };
  readonly required: readonly N[];
};

/** Path parameters that are ids: `id` unless named. */
export function idParams(): IdParamsSchema<'id'>;
export function idParams<N extends string>(...names: N[]): IdParamsSchema<N>;
export function idParams(...names: string[]): IdParamsSchema<string> {
  const list = names.length ? names : ['id'];
  return {
    type: 'object',
    properties: Object.fromEntries(list.map((n) => [n, idSchema])),
    required: list,
  };
}

/** The most common path: `/:id`. */
export const idPath = idParams();
export type IdPath = Infer<typeof idPath>;

/** The largest page a list returns (spec: `limit` max 500). */
export const MAX_PAGE_LIMIT = 500;

export const paginationProperties = {
  page: { type: 'integer', minimum: 1, maximum: MAX_INT4, default: 1 },
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: 50 },
} as const;

/** PostgreSQL's dates start at year 1: year 0000 is a valid ISO date it refuses (a 500 before). */
export const NO_YEAR_ZERO = '^(?!0000-)';
export const isoDate = { type: 'string', format: 'date', pattern: NO_YEAR_ZERO } as const;
export const isoDateTime = { type: 'string', format: 'date-time' } as const;
export const currencyCode = { type: 'string', pattern: '^[A-Z]{3}$' } as const;
/** A money amount in the API: a decimal number (checked against the currency's digits later). */
/**
 * Not a field of the record: the caller's proof, in the same request, of its own two-factor sign-in
 * for a step that makes lasting access (docs/two-factor.md); `when` says which.
 */
export const freshCodeProperty = <const W extends string>(when: W) =>
  ({
    type: 'string',
    minLength: 1,
    maxLength: 64,
    description: `a current TOTP or recovery code of the caller's own two-factor sign-in; required, when the caller has it on, ${when}`,
  }) as const;

/** A subscriber's PPPoE password, as POST /api/subscribers and self-care's password change take it. */
/**
 * A password wrapped whole in one quote character or backtick: in the cleartext password mode its
 * radcheck row would be unwrapped, or run as an expansion, by FreeRADIUS (docs/freeradius.md).
 */
export const NOT_WRAPPED = '^(?!([`\'"])[\\s\\S]*\\1$)';
export const subscriberPassword = { type: 'string', minLength: 1, maxLength: 128, pattern: NOT_WRAPPED } as const;

export const moneyAmount = { type: 'number', minimum: 0, maximum: 1e12 } as const;

/** A closed object schema; its literal type keeps the property schemas and the required names. */
export function object<const P extends Record<string, JSONSchema>, const R extends readonly (keyof P & string)[] = []>(
  properties: P,
  required?: R,
): { readonly type: 'object'; readonly properties: P; readonly required: R; readonly additionalProperties: false } {
  return { type: 'object', properties, required: (required ?? []) as R, additionalProperties: false };
}

/** `?page=&limit=` of a list; ajv fills the defaults. */
export const pageQuery = object(paginationProperties);
export type PageQuery = Infer<typeof pageQuery>;

export const emptyBody = { type: 'object', properties: {}, additionalProperties: false } as const;

/** The shape of `Date` text the database hands back, as the API's ISO strings. */
export function isoTimestamp(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** The error table of admin-only routes. */
export const adminErrors = { 403: 'Not an admin' };
