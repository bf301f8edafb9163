/**
 * The HTTP edge: route table of the spec, JWT check, request validation, the envelope, error
 * mapping, rate limits, /metrics and /health. Every other service is reached through the broker.
 */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { gt, sql } from 'drizzle-orm';
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import ApiGateway from 'moleculer-web';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Auth } from '../../shared/auth/claims';
import { cachedVerifier } from '../../shared/auth/jwt';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { tokenBlacklist } from '../../shared/db/schema';
import { ApiError, unauthorized } from '../../shared/errors';
import { isRawJson, type ActionResult, type RouteDef } from '../../shared/http/route';
import { metricsMiddleware, registry, type RoutedRequest } from './metrics';
import { buildOpenApi } from './openapi';
import { RevocationList } from './revocations';
import { allRoutes } from './route-table';
import { compileRoute, type RouteValidator } from './validation';

interface GatewayRequest extends RoutedRequest {
  $ctx: Context<unknown, Record<string, unknown>>;
  $params: { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown };
  socket: RoutedRequest['socket'];
}

interface GatewayThis extends Service {
  revocations: RevocationList;
  verify: (token: string) => Auth;
  limiters: Record<'auth' | 'public', RateLimiterMemory>;
  openapi: Record<string, unknown>;
  pruneTimer?: NodeJS.Timeout;
  authenticate(req: GatewayRequest): Auth;
  handle(def: RouteDef, validate: RouteValidator, req: GatewayRequest, res: ServerResponse): Promise<void>;
  consumeRateLimit(limit: 'auth' | 'public', ip: string, res: ServerResponse): Promise<void>;
  loadRevocations(): Promise<void>;
  sendError(req: GatewayRequest, res: ServerResponse, err: unknown): void;
}

const CONTENT_TYPES = { pdf: 'application/pdf', html: 'text/html; charset=utf-8', text: 'text/plain; version=0.0.4' };

function clientIp(req: RoutedRequest): string {
  if (config().trustProxy) {
    const fwd = req.headers['x-forwarded-for'];
    const first = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim();
    if (first) return first;
  }
  return req.socket.remoteAddress ?? 'unknown';
}

/** Static segments sort before parameters so `/api/invoices/commissions` is not taken as an id. */
export function routeOrder(a: RouteDef, b: RouteDef): number {
  const sa = a.path.split('/');
  const sb = b.path.split('/');
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const pa = sa[i].startsWith(':');
    const pb = sb[i].startsWith(':');
    if (pa !== pb) return pa ? 1 : -1;
  }
  return sb.length - sa.length;
}

/** HTTP status and message of any error: ours carry the spec's; others are named, never leaked. */
export function toHttpError(err: unknown): { status: number; message: string } {
  const e = err as { code?: unknown; status?: unknown; type?: unknown; message?: string; name?: string };
  if (err instanceof ApiError || e.type === 'API_ERROR') return { status: Number(e.code), message: e.message ?? '' };
  if (e.type === 'entity.too.large') return { status: 413, message: 'request body too large (limit 1 MB)' };
  if (e.type === 'entity.parse.failed') return { status: 400, message: 'malformed JSON body' };
  // A unit no process runs: Moleculer says 404 ServiceNotFound, which for HTTP is a 503.
  if (e.name === 'ServiceNotAvailableError' || e.name === 'ServiceNotFoundError') {
    return { status: 503, message: 'service unavailable' };
  }
  const status = Number(e.code ?? e.status);
  if (status === 404) return { status, message: 'not found' };
  if (status === 429) return { status, message: 'too many requests' };
  if (status === 503) return { status, message: 'service unavailable' };
  if (e.name === 'RequestTimeoutError') return { status: 504, message: 'upstream timeout' };
  if (Number.isInteger(status) && status >= 400 && status < 500) return { status, message: e.message ?? 'bad request' };
  return { status: 500, message: 'internal server error' };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

function sendJsonText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export function createGatewayService(): ServiceSchema {
  const cfg = config();
  const defs = [...allRoutes()].sort(routeOrder);
  const aliases: Record<string, unknown> = {};
  for (const def of defs) {
    const validate = compileRoute(def);
    aliases[`${def.method} ${def.path}`] = function (this: GatewayThis, req: GatewayRequest, res: ServerResponse) {
      return this.handle(def, validate, req, res);
    };
  }

  const schema: ServiceSchema<ServiceSettingSchema, GatewayThis> = {
    name: 'gateway',
    mixins: [ApiGateway as unknown as ServiceSchema],
    settings: {
      port: cfg.port,
      ip: process.env.HOST || '0.0.0.0',
      optimizeOrder: false,
      log4XXResponses: false,
      logRequest: null,
      logResponse: null,
      use: [metricsMiddleware],
      routes: [
        {
          path: '',
          mappingPolicy: 'restrict',
          mergeParams: false,
          bodyParsers: { json: { strict: false, limit: '1MB' }, urlencoded: false },
          aliases,
        },
      ],
      onError(this: GatewayThis, req: GatewayRequest, res: ServerResponse, err: unknown) {
        const { status, message } = toHttpError(err);
        if (status >= 500) this.logger.error('request failed', req.method, req.url, err);
        if (res.headersSent) {
          res.destroy();
          return;
        }
        sendJson(res, status, { success: false, message });
      },
    },

    events: {
      'auth.revoked'(this: GatewayThis, ctx: Context<{ jti: string; exp: number }>) {
        this.revocations.add(ctx.params.jti, ctx.params.exp);
      },
    },

    actions: {
      health: {
        visibility: 'public',
        async handler(this: GatewayThis): Promise<ActionResult> {
          // The gateway listens before its sibling services finish starting (the first admin,
          // warm browsers): it is ready when the whole broker is.
          if (!this.broker.started) throw new ApiError(503, 'starting');
          try {
            await db().execute(sql`select 1`);
          } catch {
            throw new ApiError(503, 'database unreachable');
          }
          return { data: { status: 'ok' } };
        },
      },
      metrics: {
        visibility: 'public',
        handler: () => registry.metrics(),
      },
      openapi: {
        visibility: 'public',
        handler(this: GatewayThis) {
          return this.openapi;
        },
      },
    },

    methods: {
      authenticate(this: GatewayThis, req: GatewayRequest): Auth {
        const header = req.headers.authorization;
        const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
        if (!match) throw unauthorized('missing bearer token');
        let auth: Auth;
        try {
          auth = this.verify(match[1]);
        } catch (err) {
          throw unauthorized((err as Error).name === 'TokenExpiredError' ? 'token expired' : 'invalid token');
        }
        if (this.revocations.has(auth.jti)) throw unauthorized('token revoked');
        return auth;
      },

      async handle(this: GatewayThis, def: RouteDef, validate: RouteValidator, req: GatewayRequest, res: ServerResponse) {
        req.routeTemplate = def.path;
        try {
          const limit = def.rateLimit ?? 'auth';
          if (limit !== 'none') await this.consumeRateLimit(limit, clientIp(req), res);
          const auth = def.auth === 'jwt' ? this.authenticate(req) : undefined;
          const input = validate({
            params: { ...(req.$params.params ?? {}) },
            query: { ...(req.$params.query ?? {}) },
            body: (req.$params.body ?? {}) as Record<string, unknown>,
          });
          const idempotencyKey = def.idempotent ? req.headers['idempotency-key'] : undefined;
          const ctx = req.$ctx;
          ctx.meta.auth = auth;
          ctx.meta.ip = clientIp(req);
          ctx.meta.route = `${def.method} ${def.path}`;
          if (typeof idempotencyKey === 'string' && idempotencyKey) ctx.meta.idempotencyKey = idempotencyKey;
          const local = def.action.startsWith('gateway.') ? { nodeID: this.broker.nodeID } : {};
          const result = await ctx.call(def.action, { ...input.query, ...input.body, ...input.params }, local);
          const status = Number(ctx.meta.$statusCode ?? def.success ?? 200);
          const headers = (ctx.meta.$responseHeaders ?? {}) as Record<string, string>;
          for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
          const produces = def.produces ?? 'json';
          if (produces === 'json' && isRawJson(result)) {
            sendJsonText(res, status, result.$rawJson);
            return;
          }
          if (produces === 'json' || produces === 'raw-json') {
            sendJson(res, status, produces === 'json' ? { success: true, ...(result as ActionResult) } : result);
            return;
          }
          res.statusCode = status;
          res.setHeader('Content-Type', CONTENT_TYPES[produces]);
          if (result instanceof Readable) {
            result.on('error', (err) => this.sendError(req, res, err));
            result.pipe(res);
          } else {
            res.end(Buffer.isBuffer(result) ? result : String(result));
          }
        } catch (err) {
          this.sendError(req, res, err);
        }
      },

      /** Fixed one-minute windows per client IP; beyond the limit 429 with Retry-After. */
      async consumeRateLimit(this: GatewayThis, limit: 'auth' | 'public', ip: string, res: ServerResponse) {
        try {
          await this.limiters[limit].consume(ip);
        } catch (rejection) {
          if (!(rejection instanceof RateLimiterRes)) throw rejection;
          res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
          throw new ApiError(429, 'too many requests');
        }
      },

      async loadRevocations(this: GatewayThis) {
        const rows = await db()
          .select({ jti: tokenBlacklist.jti, expiresAt: tokenBlacklist.expiresAt })
          .from(tokenBlacklist)
          .where(gt(tokenBlacklist.expiresAt, sql`now()`));
        for (const r of rows) this.revocations.add(r.jti, Math.floor(r.expiresAt.getTime() / 1000));
        this.revocations.prune();
      },
    },

    created(this: GatewayThis) {
      this.revocations = new RevocationList();
      this.verify = cachedVerifier(cfg.jwtSecret);
      this.limiters = {
        auth: new RateLimiterMemory({ points: cfg.rateLimitPerMin, duration: 60 }),
        public: new RateLimiterMemory({ points: cfg.publicRateLimitPerMin, duration: 60 }),
      };
      this.openapi = buildOpenApi(defs, cfg.publicBaseUrl);
    },

    async started(this: GatewayThis) {
      await this.loadRevocations();
      this.pruneTimer = setInterval(() => {
        this.loadRevocations().catch((err) => this.logger.warn('revocation refresh failed', err));
      }, 30_000);
      this.pruneTimer.unref();
    },

    stopped(this: GatewayThis) {
      if (this.pruneTimer) clearInterval(this.pruneTimer);
    },
  };
  return schema as ServiceSchema;
}
