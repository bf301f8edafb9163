/**
 * The HTTP edge: route table of the spec, JWT check, request validation, the envelope, error
 * mapping, rate limits, /metrics and /health. Every other service is reached through the broker.
 */
import type { Server, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import { gt, sql } from 'drizzle-orm';
import type { Context, Endpoint, Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Auth } from '../../shared/auth/claims';
import { cachedVerifier, type VerifiedToken } from '../../shared/auth/jwt';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { tokenBlacklist } from '../../shared/db/schema';
import { ApiError } from '../../shared/errors';
import { fail, failure, type Failure } from '../../shared/failures';
import { isRawJson, type ActionResult } from '../../shared/http/route';
import { registerDatabaseGauges } from '../../shared/metrics';
import { clusterMetrics } from './cluster-metrics';
import { metricsMiddleware, reportInFlight, type RoutedRequest } from './metrics';
import { HttpDrain, LIVENESS_PATH } from './readiness';
import { HttpFront, type RequestInput } from './http-front';
import { buildOpenApi } from './openapi';
import { IdentityCache, loadIdentity } from './identities';
import { ApiKeyCache, keyAuth } from './api-key-auth';
import { apiKeyLookup, isApiKey } from '../../shared/auth/api-keys';
import { RevocationList } from './revocations';
import { RouteTable, routesOf, type RegisteredAction, type ServedRoute } from './route-registry';
import { jsonBody } from './validation';
import { authenticateSubscriber } from './subscriber-auth';

interface GatewayThis extends Service {
  front: HttpFront;
  server: Server;
  routeTable: RouteTable;
  revocations: RevocationList;
  verify: (token: string) => VerifiedToken;
  identities: IdentityCache;
  apiKeys: ApiKeyCache;
  keyLimiter: RateLimiterMemory;
  limiters: Record<'auth' | 'public', RateLimiterMemory>;
  openapi: Record<string, unknown>;
  pruneTimer?: NodeJS.Timeout;
  stopReportingInFlight: () => void;
  authenticate(req: RoutedRequest, ip: string, res: ServerResponse): Promise<Auth>;
  handle(route: ServedRoute, req: RoutedRequest, res: ServerResponse, input: RequestInput): Promise<void>;
  consumeRateLimit(limit: 'auth' | 'public', ip: string, res: ServerResponse, points?: number): Promise<void>;
  loadRevocations(): Promise<void>;
  refreshRoutes(): void;
  sendError(req: RoutedRequest, res: ServerResponse, err: unknown): void;
  streamBody(req: RoutedRequest, res: ServerResponse, body: Readable): void;
  drainHttp(timeoutMs: number): Promise<number>;
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

/** Spends `points` of `key`'s window in `limiter`, or answers 429 with Retry-After. */
async function consumeOrRefuse(limiter: RateLimiterMemory, key: string, res: ServerResponse, points = 1) {
  try {
    if (points > 1) {
      // A large request that does not fit is refused without spending what is left.
      const used = await limiter.get(key);
      if (used && used.consumedPoints + points > limiter.points) throw used;
    }
    await limiter.consume(key, points);
  } catch (rejection) {
    if (!(rejection instanceof RateLimiterRes)) throw rejection;
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
    throw fail('tooManyRequests');
  }
}

/** HTTP status and message of any error: ours carry the spec's; others are named, never leaked. */
export function toHttpError(err: unknown): Failure {
  const e = err as { code?: unknown; status?: unknown; type?: unknown; message?: string; name?: string };
  if (err instanceof ApiError || e.type === 'API_ERROR') return { status: Number(e.code), message: e.message ?? '' };
  if (e.type === 'entity.too.large') return failure('requestTooLarge');
  if (e.type === 'entity.parse.failed') return failure('malformedJson');
  // A unit no process runs: Moleculer says 404 ServiceNotFound, which for HTTP is a 503.
  if (e.name === 'ServiceNotAvailableError' || e.name === 'ServiceNotFoundError') {
    return failure('serviceUnavailable');
  }
  const status = Number(e.code ?? e.status);
  if (status === 404) return failure('notFound');
  if (status === 429) return failure('tooManyRequests');
  if (status === 503) return failure('serviceUnavailable');
  if (e.name === 'RequestTimeoutError') return failure('upstreamTimeout');
  if (Number.isInteger(status) && status >= 400 && status < 500) return { status, message: e.message ?? 'bad request' };
  return failure('internal');
}

/**
 * /metrics on the public port: only with `Authorization: Bearer <METRICS_TOKEN>`; without the
 * variable it is not served here at all (404; each process's own figures are on OPS_PORT).
 */
function requireMetricsToken(req: RoutedRequest, expected: string | undefined): void {
  if (!expected) throw fail('notFound');
  const header = req.headers.authorization;
  const given = typeof header === 'string' ? (/^Bearer\s+(\S+)$/i.exec(header)?.[1] ?? '') : '';
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  if (!given || !timingSafeEqual(a, b)) throw fail('unauthorized');
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

/** A body no parser read (not JSON), for routes declaring `rawBody`: up to the 1 MB request limit. */
async function unparsedBody(req: AsyncIterable<Buffer | string> & { readableEnded?: boolean }): Promise<string> {
  if (req.readableEnded) return '';
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req) {
    const buf = Buffer.isBuffer(part) ? part : Buffer.from(part);
    size += buf.length;
    if (size > 1024 * 1024) throw fail('requestTooLarge');
    parts.push(buf);
  }
  return Buffer.concat(parts).toString('utf8');
}

export function createGatewayService(): ServiceSchema {
  const cfg = config();
  const drain = new HttpDrain();

  const schema: ServiceSchema<ServiceSettingSchema, GatewayThis> = {
    name: 'gateway',
    events: {
      // Local or remote services came or went: learn the routes they declare. Synchronous and
      // cheap (validators are compiled only for new or changed declarations).
      '$services.changed'(this: GatewayThis) {
        this.refreshRoutes();
      },
      'manager.changed'(this: GatewayThis, ctx: Context<{ id: number }>) {
        this.identities.invalidate(ctx.params.id);
        this.apiKeys.clear();
      },
      'apikey.changed'(this: GatewayThis) {
        this.apiKeys.clear();
      },
      'auth.revoked'(this: GatewayThis, ctx: Context<{ jti: string; exp: number }>) {
        this.revocations.add(ctx.params.jti, ctx.params.exp);
      },
    },

    actions: {
      health: {
        rest: 'GET /health',
        http: {
          auth: 'public',
          access: 'none',
          summary: 'Liveness and readiness: 200 when the gateway and the database answer, else 503',
          tag: 'operations',
          rateLimit: 'none',
          errors: { 503: 'Still starting, or the database is unreachable' },
        },
        visibility: 'public',
        async handler(this: GatewayThis): Promise<ActionResult> {
          // The gateway listens before its sibling services finish starting (the first admin,
          // warm browsers): it is ready when the whole broker is.
          if (!this.broker.started) throw fail('starting');
          try {
            await db().execute(sql`select 1`);
          } catch {
            throw fail('databaseUnreachable');
          }
          return { data: { status: 'ok' } };
        },
      },
      live: {
        rest: `GET ${LIVENESS_PATH}`,
        http: {
          auth: 'public',
          access: 'none',
          summary: 'Liveness: 200 while the process serves HTTP, even while it drains or the database is down',
          tag: 'operations',
          rateLimit: 'none',
        },
        visibility: 'public',
        handler: (): ActionResult => ({ data: { status: 'ok' } }),
      },
      metrics: {
        rest: 'GET /metrics',
        http: {
          auth: 'public',
          access: 'none',
          summary:
            'Prometheus metrics (process, HTTP request counts and latency by route and status); needs Bearer METRICS_TOKEN',
          tag: 'operations',
          rateLimit: 'none',
          errors: { 401: 'Missing or wrong METRICS_TOKEN', 404: 'METRICS_TOKEN is not set: scrape OPS_PORT' },
          produces: 'text',
        },
        visibility: 'public',
        handler(this: GatewayThis) {
          return clusterMetrics(this.broker);
        },
      },
      openapi: {
        rest: 'GET /api/openapi.json',
        http: {
          auth: 'public',
          access: 'none',
          summary: 'This OpenAPI 3.1 document',
          tag: 'operations',
          rateLimit: 'none',
          produces: 'raw-json',
        },
        visibility: 'public',
        handler(this: GatewayThis) {
          return this.openapi;
        },
      },
    },

    methods: {
      /** Graceful shutdown, step 1 (runtime/shutdown.ts): readiness 503, no new requests, in-flight ones finish. */
      drainHttp(this: GatewayThis, timeoutMs: number): Promise<number> {
        this.logger.info(`draining: ${drain.requestsInFlight} HTTP request(s) in flight`);
        return drain.drain(this.server, timeoutMs);
      },
      refreshRoutes(this: GatewayThis) {
        // An action whose every node has left stays listed, without its definition: its route was
        // learned and stays (503 until a node is back); reading it would throw and learn nothing.
        const actions = this.broker.registry
          .getActionList({ skipInternal: true, withEndpoints: false })
          .flatMap((item) => (item as unknown as { action?: RegisteredAction }).action ?? []);
        if (!this.routeTable.learn(routesOf(actions, (msg) => this.logger.warn(msg)))) return;
        const served = this.routeTable.list();
        this.front.serve(served);
        this.openapi = buildOpenApi(
          served.map((r) => r.def),
          cfg.publicBaseUrl,
        );
      },

      /**
       * The token proves who is calling; the manager's row, as it is now, says whether it still may
       * and what it may do (issue: trust the database, not the token).
       */
      async authenticate(this: GatewayThis, req: RoutedRequest, ip: string, res: ServerResponse): Promise<Auth> {
        const header = req.headers.authorization;
        const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
        if (!match) throw fail('bearerMissing');
        if (isApiKey(match[1])) {
          // An API key (docs/security.md): its own row, its manager's row as it is now, its own rate limit.
          const lookup = apiKeyLookup(match[1]);
          const key = lookup ? await this.apiKeys.get(lookup) : null;
          const auth = keyAuth(match[1], key, key ? await this.identities.get(key.managerId) : null, ip);
          await consumeOrRefuse(this.keyLimiter, String(auth.keyId), res);
          this.apiKeys.touch(auth.keyId as number, ip, (err) => this.logger.warn('api key last use not recorded', err));
          return auth;
        }
        let token: VerifiedToken;
        try {
          token = this.verify(match[1]);
        } catch (err) {
          throw fail((err as Error).name === 'TokenExpiredError' ? 'tokenExpired' : 'tokenInvalid');
        }
        if (this.revocations.has(token.jti)) throw fail('tokenRevoked');
        const manager = await this.identities.get(token.managerId);
        if (!manager) throw fail('managerGone');
        if (!manager.active) throw fail('managerDisabled');
        if (manager.tokenVersion !== token.tokenVersion) throw fail('tokenRevoked');
        return {
          managerId: manager.id,
          role: manager.role,
          resellerId: manager.resellerId,
          permissions: manager.permissions,
          jti: token.jti,
          exp: token.exp,
          ...(token.amr ? { amr: token.amr } : {}),
          ...(token.enrolOnly ? { enrolOnly: true } : {}),
        };
      },

      async handle(
        this: GatewayThis,
        route: ServedRoute,
        req: RoutedRequest,
        res: ServerResponse,
        input: RequestInput,
      ) {
        const { def, validate } = route;
        req.routeTemplate = def.path;
        let ctxOfRequest: Context<unknown, Record<string, unknown>> | undefined;
        try {
          const ip = clientIp(req);
          const limit = def.rateLimit ?? 'auth';
          if (limit !== 'none') await this.consumeRateLimit(limit, ip, res);
          if (def.action === 'gateway.metrics') requireMetricsToken(req, cfg.metricsToken);
          const verified = def.auth === 'jwt' ? await this.authenticate(req, ip, res) : undefined;
          // Self-care routes take a subscriber's token and nothing else (docs/self-care.md).
          const subscriber =
            def.auth === 'subscriber'
              ? await authenticateSubscriber(req.headers.authorization, cfg.jwtSecret, (jti) =>
                  this.revocations.has(jti),
                )
              : undefined;
          // require_two_factor: a manager without it got a token that can only set it up (docs/two-factor.md).
          if (verified?.enrolOnly && !def.enrolment) throw fail('twoFactorEnrolmentRequired');
          const auth = verified && { ...verified, ip };
          const valid = validate({
            params: { ...input.params },
            query: { ...input.query },
            body: def.body ? jsonBody(req.headers, input.body, input.rawBody) : {},
          });
          if (def.rateCost && limit !== 'none') {
            // A large request pays for its size: the first unit was taken above.
            const items = (valid.body as Record<string, unknown>)[def.rateCost.field];
            const units = Array.isArray(items) ? Math.ceil(items.length / def.rateCost.per) : 1;
            if (units > 1) await this.consumeRateLimit(limit, ip, res, units - 1);
          }
          const idempotencyKey = def.idempotent ? req.headers['idempotency-key'] : undefined;
          // A root context, so what the action puts in its meta (status, headers) comes back to us.
          // Moleculer's types want an endpoint, but a root context has none.
          const ctx: Context<unknown, Record<string, unknown>> = this.broker.ContextFactory.create(
            this.broker,
            null as unknown as Endpoint,
            {},
            {},
          );
          ctxOfRequest = ctx;
          ctx.meta.auth = auth;
          if (subscriber) ctx.meta.subscriber = subscriber;
          ctx.meta.ip = ip;
          ctx.meta.route = route.key;
          if (def.rawBody) {
            // JSON was read by the body parser; anything else (a form) is still in the stream.
            ctx.meta.rawBody = input.rawBody?.toString('utf8') ?? (await unparsedBody(req));
            ctx.meta.headers = Object.fromEntries(
              Object.entries(req.headers).filter(
                (e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'authorization' && e[0] !== 'cookie',
              ),
            );
          }
          if (typeof idempotencyKey === 'string' && idempotencyKey) ctx.meta.idempotencyKey = idempotencyKey;
          if (def.csv && req.headers.accept) ctx.meta.accept = req.headers.accept;
          const local = def.action.startsWith('gateway.') ? { nodeID: this.broker.nodeID } : {};
          const result = await ctx.call(def.action, { ...valid.query, ...valid.body, ...valid.params }, local);
          const status = Number(ctx.meta.$statusCode ?? def.success ?? 200);
          const headers = (ctx.meta.$responseHeaders ?? {}) as Record<string, string>;
          for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
          const produces = def.produces ?? 'json';
          if (produces === 'json' && def.csv && result instanceof Readable) {
            // The route's CSV answer (`http.csv`): the action named its type and file.
            res.statusCode = status;
            this.streamBody(req, res, result);
            return;
          }
          if (produces === 'json' && isRawJson(result)) {
            sendJsonText(res, status, result.$rawJson);
            return;
          }
          if (produces === 'json' || produces === 'raw-json') {
            sendJson(res, status, produces === 'json' ? { success: true, ...(result as ActionResult) } : result);
            return;
          }
          res.statusCode = status;
          // An action serving files (the console's assets) names its own type.
          if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', CONTENT_TYPES[produces]);
          if (result instanceof Readable) {
            this.streamBody(req, res, result);
          } else {
            res.end(Buffer.isBuffer(result) ? result : String(result));
          }
        } catch (err) {
          // A refusal may say when to come back (a sign-in lockout's Retry-After).
          const retryAfter = (ctxOfRequest?.meta.$responseHeaders as Record<string, string> | undefined)?.[
            'Retry-After'
          ];
          if (retryAfter && !res.headersSent) res.setHeader('Retry-After', retryAfter);
          this.sendError(req, res, err);
        }
      },

      /** Every failure leaves as the API's envelope; a response already under way is cut. */
      /**
       * Pipes an action's stream to the client. A client gone before the end ends the stream too:
       * `pipe` alone leaves it paused for good, and an export's database connection with it (about
       * twenty cancelled downloads emptied the pool and hung every request).
       */
      streamBody(this: GatewayThis, req: RoutedRequest, res: ServerResponse, body: Readable) {
        body.on('error', (err) => this.sendError(req, res, err));
        res.on('close', () => {
          if (!res.writableFinished) body.destroy();
        });
        body.pipe(res);
      },

      sendError(this: GatewayThis, req: RoutedRequest, res: ServerResponse, err: unknown) {
        const { status, message } = toHttpError(err);
        // A 5xx the API chose (503 while starting or with a unit away, 504 at a deadline) is one line;
        // anything else is a fault worth its stack.
        if (status >= 500 && err instanceof ApiError)
          this.logger.warn('request answered', status, req.method, req.url, message);
        else if (status >= 500) this.logger.error('request failed', req.method, req.url, err);
        if (res.headersSent) {
          res.destroy();
          return;
        }
        sendJson(res, status, { success: false, message });
      },

      /** Fixed one-minute windows per client IP; beyond the limit 429 with Retry-After. */
      async consumeRateLimit(this: GatewayThis, limit: 'auth' | 'public', ip: string, res: ServerResponse, points = 1) {
        await consumeOrRefuse(this.limiters[limit], ip, res, points);
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
      this.identities = new IdentityCache(loadIdentity, cfg.identityCacheMs);
      this.apiKeys = new ApiKeyCache(cfg.identityCacheMs);
      this.keyLimiter = new RateLimiterMemory({ points: cfg.apiKeyRateLimitPerMin, duration: 60 });
      this.limiters = {
        auth: new RateLimiterMemory({ points: cfg.rateLimitPerMin, duration: 60 }),
        public: new RateLimiterMemory({ points: cfg.publicRateLimitPerMin, duration: 60 }),
      };
      this.routeTable = new RouteTable();
      this.front = new HttpFront(
        [metricsMiddleware, drain.middleware],
        (route, req, res, input) => void this.handle(route, req, res, input),
        (req, res, err) => this.sendError(req, res, err),
        { headersTimeoutMs: cfg.headersTimeoutMs, requestTimeoutMs: cfg.requestTimeoutMs },
      );
      this.server = this.front.server;
      this.stopReportingInFlight = reportInFlight(() => drain.requestsInFlight);
      this.openapi = buildOpenApi([], cfg.publicBaseUrl);
    },

    async started(this: GatewayThis) {
      registerDatabaseGauges(db);
      this.refreshRoutes();
      await this.front.listen(cfg.port, process.env.HOST || '0.0.0.0');
      this.logger.info(`HTTP on port ${(this.server.address() as { port: number }).port}`);
      await this.loadRevocations();
      this.pruneTimer = setInterval(() => {
        this.loadRevocations().catch((err) => this.logger.warn('revocation refresh failed', err));
      }, 30_000);
      this.pruneTimer.unref();
    },

    async stopped(this: GatewayThis) {
      if (this.pruneTimer) clearInterval(this.pruneTimer);
      this.stopReportingInFlight();
      await this.front.close();
    },
  };
  return schema as ServiceSchema;
}
