import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { FAILURES, fail } from '../../shared/failures';
import type { JsonSchema, RouteDef } from '../../shared/http/route';
import { NO_YEAR_ZERO, NOT_WRAPPED } from '../../shared/http/schemas';
import { RATE_LIMIT_PATTERN } from '../../shared/vendors/rate';

/**
 * Path and query arrive as strings, so their validator coerces ("7" -> 7) once the text is a
 * canonical decimal number (ajv alone would take "0x1", " 1" or "1e0" as 1); unknown query
 * parameters are dropped. A JSON body must carry the right types itself, and a field its schema
 * does not name is refused, except on routes that say `dropUnknown` (the spec's PUT
 * /api/subscribers/:id). Defaults are filled.
 */
const coercing = addFormats(
  new Ajv({ coerceTypes: true, removeAdditional: true, useDefaults: true, allErrors: false }),
);
const refusing = addFormats(
  new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false }),
);
const dropping = addFormats(
  new Ajv({ coerceTypes: false, removeAdditional: true, useDefaults: true, allErrors: false }),
);

export interface RequestInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

export interface RouteValidator {
  (input: RequestInput): RequestInput;
}

const noProperties: JsonSchema = { type: 'object', properties: {}, additionalProperties: false };

const CANONICAL_INTEGER = /^-?(0|[1-9]\d*)$/;
const CANONICAL_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?$/;
// Tab, line feed and carriage return are text; every other C0 control and DEL is not (PostgreSQL
// refuses NUL in text outright).
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose
const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

export function compileRoute(def: RouteDef): RouteValidator {
  const params = coercing.compile(def.params ?? noProperties);
  const query = coercing.compile(def.query ?? noProperties);
  const body = def.body ? (def.dropUnknown ? dropping : refusing).compile(def.body) : undefined;
  const numericParams = numericProperties(def.params);
  const numericQuery = numericProperties(def.query);
  return (input) => {
    checkText(input.params, '');
    checkCanonicalNumbers(input.params, numericParams);
    check(params, input.params);
    checkText(input.query, '');
    checkCanonicalNumbers(input.query, numericQuery);
    check(query, input.query);
    if (body) {
      checkText(input.body, '');
      check(body, input.body);
      if (def.method === 'PUT' && Object.keys(input.body).length === 0) throw fail('bodyEmpty');
    }
    return { params: input.params, query: input.query, body: def.body ? input.body : {} };
  };
}

/** `integer` or `number` properties of a path or query schema, which arrive as text. */
function numericProperties(schema: JsonSchema | undefined): Map<string, RegExp> {
  const out = new Map<string, RegExp>();
  for (const [name, prop] of Object.entries((schema?.properties ?? {}) as Record<string, JsonSchema>)) {
    const types = ([] as unknown[]).concat(prop.type ?? []);
    if (types.includes('integer')) out.set(name, CANONICAL_INTEGER);
    else if (types.includes('number')) out.set(name, CANONICAL_NUMBER);
  }
  return out;
}

function checkCanonicalNumbers(values: Record<string, unknown>, numeric: Map<string, RegExp>): void {
  for (const [name, pattern] of numeric) {
    const value = values[name];
    if (typeof value === 'string' && !pattern.test(value)) {
      throw fail('notPlainDigits', name, pattern === CANONICAL_INTEGER);
    }
  }
}

/** No string anywhere in the input may hold a control character; the message names the field. */
function checkText(value: unknown, field: string): void {
  if (typeof value === 'string') {
    if (CONTROL_CHARACTER.test(value)) throw fail('controlCharacters', field);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkText(v, `${field}[${i}]`));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      if (CONTROL_CHARACTER.test(key)) throw fail('controlCharactersInKey', field);
      checkText(v, field ? `${field}.${key}` : key);
    }
  }
}

/** Deepest nesting of arrays and objects a JSON body may have (docs/security.md). */
export const MAX_JSON_DEPTH = 64;

/**
 * Refuses a JSON text nested deeper than `max` before it is parsed: the recursive walks after the
 * parser (control characters, ajv) would otherwise overflow the stack on `[[[[...` 5,000 deep and
 * answer 500. Brackets inside strings do not count.
 */
export function checkJsonDepth(buf: Buffer, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) throw fail('bodyTooDeep', max);
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
}

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i;

/**
 * The JSON object of a request to a route that takes a body: 415 for any other content type, 400
 * for `null`, an array, a scalar or a key given twice (JSON.parse would keep the last silently).
 * No body at all is an empty object, which the route's schema then judges.
 */
export function jsonBody(
  headers: Record<string, string | string[] | undefined>,
  parsed: unknown,
  raw: Buffer | undefined,
): Record<string, unknown> {
  const hasBody = Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;
  if (!hasBody) return {};
  const type = headers['content-type'];
  if (typeof type !== 'string' || !JSON_TYPE.test(type)) throw fail('notJson');
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw fail('bodyNotObject');
  if (raw) {
    const duplicate = duplicateKey(raw);
    if (duplicate !== null) throw fail('duplicateKey', duplicate);
  }
  return parsed as Record<string, unknown>;
}

/**
 * The first key repeated within one JSON object, or null, for a text that JSON.parse accepted. One
 * pass over the bytes, decoding only keys: a 5,000-id bulk body took 2 to 6 ms through a general
 * JSON visitor (jsonc-parser) on a quiet host, up to 110 ms on a loaded one, on the event loop
 * before the job started; this scan 0.1 ms. In valid JSON a string is a key when it opens an
 * object or follows a comma inside one; a key with an escape is decoded by JSON.parse, so `"a"`
 * and `"\u0061"` are the same key, as they are to the parser.
 */
export function duplicateKey(buf: Buffer): string | null {
  // Per open container: the keys seen so far in an object, null for an array.
  const open: (Set<string> | null)[] = [];
  let keyNext = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c === 0x22) {
      const start = i;
      // The closing quote: the next one not escaped (preceded by an even run of backslashes).
      for (;;) {
        i = buf.indexOf(0x22, i + 1);
        let backslashes = 0;
        while (buf[i - 1 - backslashes] === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      if (keyNext) {
        keyNext = false;
        const key = buf.subarray(start + 1, i).includes(0x5c)
          ? (JSON.parse(buf.toString('utf8', start, i + 1)) as string)
          : buf.toString('utf8', start + 1, i);
        const keys = open[open.length - 1] as Set<string>;
        if (keys.has(key)) return key;
        keys.add(key);
      }
    } else if (c === 0x7b) {
      open.push(new Set());
      keyNext = true;
    } else if (c === 0x5b) {
      open.push(null);
    } else if (c === 0x7d || c === 0x5d) {
      open.pop();
      keyNext = false;
    } else if (c === 0x2c) {
      keyNext = open[open.length - 1] !== null;
    }
  }
  return null;
}

function check(validate: ValidateFunction, value: unknown): void {
  if (!validate(value)) throw fail('invalidRequest', describe(validate.errors?.[0]));
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
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return `${field ? field + '.' : ''}${extra} is not a known field`;
  }
  if (error.keyword === 'minProperties' && !field) return FAILURES.bodyEmpty.message;
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
  const pattern = error.keyword === 'pattern' ? (error.params as { pattern: string }).pattern : null;
  if (pattern === NO_YEAR_ZERO) return `${field || 'value'} must be a date from year 0001 on`;
  if (pattern === RATE_LIMIT_PATTERN)
    return `${field || 'value'} must be a rate such as 10M/20M (rx/tx, k, M or G, then MikroTik's burst fields), with no backtick or %{`;
  if (pattern === NOT_WRAPPED) return `${field || 'value'} must not start and end with the same quote or backtick`;
  if (error.keyword === 'not' && field) return `${field} is not allowed`;
  return `${field || 'body'} ${error.message ?? 'is invalid'}`;
}
