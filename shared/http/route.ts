/**
 * A route of the public HTTP API, declared by the action that serves it (its `rest` and `http`).
 * The gateway builds its route table, its ajv validators and the OpenAPI document from these
 * declarations, so what is validated and what is documented cannot drift apart.
 */
import type { Permission } from '../auth/permissions';

export type JsonSchema = Record<string, unknown>;
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * What an action declares for the HTTP edge, beside its handler, next to Moleculer's own `rest`:
 *
 *   create: {
 *     rest: 'POST /api/invoices',
 *     http: { auth: 'jwt', access: 'admin or reseller', summary: '...', tag: 'invoices', body: ..., success: 201 },
 *     async handler(ctx) { ... },
 *   }
 *
 * `rest` is the full path (no service base path). The gateway reads both from the service
 * registry at run time, so a route is served and documented wherever its service runs.
 */
export interface HttpRoute {
  /**
   * `public`: no token. `jwt`: a valid, unrevoked token of an active manager. `subscriber`: a
   * subscriber's self-care token, on `/api/my/*` only (docs/self-care.md); no other token works there.
   */
  auth: 'public' | 'jwt' | 'subscriber';
  /** Who may call it, as the OpenAPI document states it (the action enforces it through policy). */
  access: RouteAccess;
  summary: string;
  tag: string;
  params?: JsonSchema;
  query?: JsonSchema;
  body?: JsonSchema;
  /** JSON Schema of the success envelope's `data` (documentation: the OpenAPI document shows it). */
  data?: JsonSchema;
  /** Status of success (default 200) and the documented error statuses with their meaning. */
  success?: number;
  errors?: Record<number, string>;
  /**
   * What the success body is: the JSON envelope (default), bare JSON (documents such as OpenAPI),
   * a PDF stream, HTML or text.
   */
  produces?: 'json' | 'raw-json' | 'pdf' | 'html' | 'text';
  /**
   * A JSON route that also answers as CSV (`?format=csv` or `Accept: text/csv`): the action gets the
   * request's Accept header (`ctx.meta.accept`) and may answer with a stream, which the gateway pipes
   * with the headers the action set (shared/http/csv.ts).
   */
  csv?: boolean;
  /** Which rate limit applies: the authenticated one (default), the public one, or none (probes). */
  rateLimit?: 'auth' | 'public' | 'none';
  /**
   * A request whose body array `field` is long costs more of the rate limit: one unit per `per`
   * items (at least one), so 10,000 ids weigh what 100 requests of 100 ids do (docs/security.md).
   */
  rateCost?: { field: string; per: number };
  /** Honour an `Idempotency-Key` header (create, payment, quick-pay). */
  idempotent?: boolean;
  /**
   * Hand the action the request's body as received (`ctx.meta.rawBody`, UTF-8) and its headers
   * (`ctx.meta.headers`), unvalidated: a webhook's signature covers the exact bytes (docs/payments.md).
   */
  rawBody?: boolean;
  /**
   * Open to a token that may only set up two-factor sign-in (setting require_two_factor,
   * docs/two-factor.md); every other route refuses such a token with 403.
   */
  enrolment?: boolean;
  /** Drop body fields the schema does not name instead of refusing them (the spec's PUT /api/subscribers/:id). */
  dropUnknown?: boolean;
}

/**
 * A permission by its name (checked against shared/auth/permissions), or a rule of roles in words.
 * Permissions named inside the words are written as `${Permission}` placeholders, so they are checked too.
 */
export type RouteAccess =
  | Permission
  | `${Permission} (${string})`
  | `admin${string}`
  | `any authenticated${string}`
  | `none${string}`
  | `subscriber${string}`;

// Every action's `http` is typed where it is declared, so a misspelled permission fails to compile.
declare module 'moleculer' {
  interface ActionSchema {
    http?: HttpRoute;
  }
}

/** A route as the gateway serves it: an action's `rest` split into method and path, plus its `http`. */
export interface RouteDef extends HttpRoute {
  method: HttpMethod;
  /** Express-style path, e.g. `/api/invoices/:id`. */
  path: string;
  /** The broker action that serves it. It receives path, query and body merged (path wins). */
  action: string;
}

/** What an action hands back to the gateway: spread into `{ success: true, ... }`. */
export interface ActionResult {
  data?: unknown;
  pagination?: { page: number; limit: number; total: number };
  [extra: string]: unknown;
}

/**
 * A success body the action already serialised (PostgreSQL built the JSON of a hot read): the
 * gateway sends the text as it is. A plain object, so it crosses the transporter like any result.
 */
// A type alias (not an interface) so that it is assignable to ActionResult's index signature.
export type RawJsonResult = { $rawJson: string };

/** `{ "success": true, "data": <dataJson>, ...rest }` without parsing `dataJson`. */
export function rawJsonEnvelope(dataJson: string, rest: Record<string, unknown> = {}): RawJsonResult {
  let body = `{"success":true,"data":${dataJson}`;
  for (const [key, value] of Object.entries(rest)) body += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return { $rawJson: `${body}}` };
}

export function isRawJson(result: unknown): result is RawJsonResult {
  return typeof (result as RawJsonResult | null)?.$rawJson === 'string';
}
