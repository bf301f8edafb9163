import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { badRequest } from '../../shared/errors';
import type { JsonSchema, RouteDef } from '../../shared/http/route';

/**
 * Path and query arrive as strings, so their validator coerces ("7" -> 7); a JSON body must carry
 * the right types itself. Both drop properties that a schema closes with `additionalProperties:
 * false` (unknown fields are silently ignored, as the spec asks of PUT /api/subscribers/:id); a
 * schema that must refuse them instead says `additionalProperties: { not: {} }`. Defaults are filled.
 */
const coercing = addFormats(new Ajv({ coerceTypes: true, removeAdditional: true, useDefaults: true, allErrors: false }));
const strict = addFormats(new Ajv({ coerceTypes: false, removeAdditional: true, useDefaults: true, allErrors: false }));

export interface RequestInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

export interface RouteValidator {
  (input: RequestInput): RequestInput;
}

const noProperties: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

export function compileRoute(def: RouteDef): RouteValidator {
  const params = coercing.compile(def.params ?? noProperties);
  const query = coercing.compile(def.query ?? noProperties);
  const body = def.body ? strict.compile(def.body) : undefined;
  return (input) => {
    check(params, input.params, '');
    check(query, input.query, '');
    if (body) {
      if (typeof input.body !== 'object' || input.body === null || Array.isArray(input.body)) {
        throw badRequest('body must be a JSON object');
      }
      check(body, input.body, '');
    }
    return { params: input.params, query: input.query, body: def.body ? input.body : {} };
  };
}

function check(validate: ValidateFunction, value: unknown, prefix: string): void {
  if (!validate(value)) throw badRequest(describe(validate.errors?.[0], prefix));
}

/** `items[0].qty must be >= 0`, `amount is required`: the message always names the field. */
export function describe(error: ErrorObject | undefined, prefix = ''): string {
  if (!error) return 'invalid request';
  const path = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg}`))
    .join('')
    .replace(/^\./, '');
  const field = [prefix, path].filter(Boolean).join('.');
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return `${field ? field + '.' : ''}${missing} is required`;
  }
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    return `${field || 'value'} must be one of ${allowed.join(', ')}`;
  }
  if (error.keyword === 'format') {
    const format = (error.params as { format: string }).format;
    const hints: Record<string, string> = {
      date: 'an ISO date (YYYY-MM-DD)',
      'date-time': 'an ISO date-time',
      ipv4: 'an IPv4 address',
    };
    const hint = hints[format] ?? `in ${format} format`;
    return `${field || 'value'} must be ${hint}`;
  }
  if (error.keyword === 'not' && field) return `${field} is not allowed`;
  return `${field || 'body'} ${error.message ?? 'is invalid'}`;
}

