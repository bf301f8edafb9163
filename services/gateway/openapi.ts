import type { JsonSchema, RouteDef } from '../../shared/http/route';

const envelopeError: JsonSchema = {
  type: 'object',
  properties: { success: { const: false }, message: { type: 'string' } },
  required: ['success', 'message'],
};

const envelopeSuccess: JsonSchema = {
  type: 'object',
  properties: {
    success: { const: true },
    data: {},
    pagination: {
      type: 'object',
      properties: { page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' } },
    },
  },
  required: ['success'],
};

const COMMON_ERRORS: Record<number, string> = {
  400: 'Validation failed; the message names the field',
  429: 'Rate limit exceeded; see Retry-After',
};
const JWT_ERRORS: Record<number, string> = { 401: 'Missing, invalid, expired or revoked token' };

function parameters(schema: JsonSchema | undefined, where: 'path' | 'query') {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema?.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: s,
  }));
}

const CSV_CONTENT = { 'text/csv': { schema: { type: 'string' } } };

function successContent(def: RouteDef) {
  return def.csv ? { ...jsonContent(def), ...CSV_CONTENT } : jsonContent(def);
}

function jsonContent(def: RouteDef) {
  if (def.produces === 'raw-json') return { 'application/json': { schema: { type: 'object' } } };
  if (def.produces === 'pdf') return { 'application/pdf': { schema: { type: 'string', format: 'binary' } } };
  if (def.produces === 'html') return { 'text/html': { schema: { type: 'string' } } };
  if (def.produces === 'text') return { 'text/plain': { schema: { type: 'string' } } };
  if (def.data)
    return {
      'application/json': {
        schema: { ...envelopeSuccess, properties: { ...(envelopeSuccess.properties as object), data: def.data } },
      },
    };
  return { 'application/json': { schema: envelopeSuccess } };
}

/** OpenAPI 3.1, built from the same route declarations and schemas the gateway validates with. */
export function buildOpenApi(routes: RouteDef[], serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of routes) {
    const oaPath = def.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const errors = { ...COMMON_ERRORS, ...(def.auth === 'public' ? {} : JWT_ERRORS), ...(def.errors ?? {}) };
    const responses: Record<string, unknown> = {
      [String(def.success ?? 200)]: { description: 'Success', content: successContent(def) },
    };
    for (const [status, description] of Object.entries(errors)) {
      responses[status] = { description, content: { 'application/json': { schema: envelopeError } } };
    }
    const op: Record<string, unknown> = {
      operationId: def.action,
      summary: def.summary,
      description: `Access: ${def.access}.`,
      tags: [def.tag],
      'x-permission': def.access,
      parameters: [...parameters(def.params, 'path'), ...parameters(def.query, 'query')],
      responses,
    };
    if (def.idempotent) {
      (op.parameters as unknown[]).push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', maxLength: 200 },
        description: 'A repeat with the same key and body returns the first response; another body is 409.',
      });
    }
    if (def.body) op.requestBody = { required: true, content: { 'application/json': { schema: def.body } } };
    if (def.auth === 'jwt') op.security = [{ bearer: [] }];
    else if (def.auth === 'subscriber') op.security = [{ subscriber: [] }];
    else op.security = [];
    (paths[oaPath] ??= {})[def.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'ISP subscriber billing API',
      version: '0.1.0',
      description: 'Envelope: { success, data, pagination? } or { success: false, message }.',
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        subscriber: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: "A subscriber's self-care token (POST /api/my/login); /api/my routes only",
        },
      },
    },
    paths,
  };
}
