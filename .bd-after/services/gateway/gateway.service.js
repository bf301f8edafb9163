"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.toHttpError = toHttpError;
exports.createGatewayService = createGatewayService;
const node_stream_1 = require("node:stream");
const drizzle_orm_1 = require("drizzle-orm");
const rate_limiter_flexible_1 = require("rate-limiter-flexible");
const jwt_1 = require("../../shared/auth/jwt");
const config_1 = require("../../shared/config");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const route_1 = require("../../shared/http/route");
const metrics_1 = require("../../shared/metrics");
const cluster_metrics_1 = require("./cluster-metrics");
const metrics_2 = require("./metrics");
const readiness_1 = require("./readiness");
const http_front_1 = require("./http-front");
const openapi_1 = require("./openapi");
const identities_1 = require("./identities");
const revocations_1 = require("./revocations");
const route_registry_1 = require("./route-registry");
const validation_1 = require("./validation");
const CONTENT_TYPES = { pdf: 'application/pdf', html: 'text/html; charset=utf-8', text: 'text/plain; version=0.0.4' };
function clientIp(req) {
    if ((0, config_1.config)().trustProxy) {
        const fwd = req.headers['x-forwarded-for'];
        const first = (Array.isArray(fwd) ? fwd[0] : fwd)?.split(',')[0]?.trim();
        if (first)
            return first;
    }
    return req.socket.remoteAddress ?? 'unknown';
}
/** HTTP status and message of any error: ours carry the spec's; others are named, never leaked. */
function toHttpError(err) {
    const e = err;
    if (err instanceof errors_1.ApiError || e.type === 'API_ERROR')
        return { status: Number(e.code), message: e.message ?? '' };
    if (e.type === 'entity.too.large')
        return { status: 413, message: 'request body too large (limit 1 MB)' };
    if (e.type === 'entity.parse.failed')
        return { status: 400, message: 'malformed JSON body' };
    // A unit no process runs: Moleculer says 404 ServiceNotFound, which for HTTP is a 503.
    if (e.name === 'ServiceNotAvailableError' || e.name === 'ServiceNotFoundError') {
        return { status: 503, message: 'service unavailable' };
    }
    const status = Number(e.code ?? e.status);
    if (status === 404)
        return { status, message: 'not found' };
    if (status === 429)
        return { status, message: 'too many requests' };
    if (status === 503)
        return { status, message: 'service unavailable' };
    if (e.name === 'RequestTimeoutError')
        return { status: 504, message: 'upstream timeout' };
    if (Number.isInteger(status) && status >= 400 && status < 500)
        return { status, message: e.message ?? 'bad request' };
    return { status: 500, message: 'internal server error' };
}
function sendJson(res, status, body) {
    sendJsonText(res, status, JSON.stringify(body));
}
function sendJsonText(res, status, text) {
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
}
function createGatewayService() {
    const cfg = (0, config_1.config)();
    const drain = new readiness_1.HttpDrain();
    const schema = {
        name: 'gateway',
        events: {
            // Local or remote services came or went: learn the routes they declare. Synchronous and
            // cheap (validators are compiled only for new or changed declarations).
            '$services.changed'() {
                this.refreshRoutes();
            },
            'manager.changed'(ctx) {
                this.identities.invalidate(ctx.params.id);
            },
            'auth.revoked'(ctx) {
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
                async handler() {
                    // The gateway listens before its sibling services finish starting (the first admin,
                    // warm browsers): it is ready when the whole broker is.
                    if (!this.broker.started)
                        throw new errors_1.ApiError(503, 'starting');
                    try {
                        await (0, client_1.db)().execute((0, drizzle_orm_1.sql) `select 1`);
                    }
                    catch {
                        throw new errors_1.ApiError(503, 'database unreachable');
                    }
                    return { data: { status: 'ok' } };
                },
            },
            live: {
                rest: `GET ${readiness_1.LIVENESS_PATH}`,
                http: {
                    auth: 'public',
                    access: 'none',
                    summary: 'Liveness: 200 while the process serves HTTP, even while it drains or the database is down',
                    tag: 'operations',
                    rateLimit: 'none',
                },
                visibility: 'public',
                handler: () => ({ data: { status: 'ok' } }),
            },
            metrics: {
                rest: 'GET /metrics',
                http: {
                    auth: 'public',
                    access: 'none',
                    summary: 'Prometheus metrics (process, HTTP request counts and latency by route and status)',
                    tag: 'operations',
                    rateLimit: 'none',
                    produces: 'text',
                },
                visibility: 'public',
                handler() {
                    return (0, cluster_metrics_1.clusterMetrics)(this.broker);
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
                handler() {
                    return this.openapi;
                },
            },
        },
        methods: {
            /** Graceful shutdown, step 1 (runtime/shutdown.ts): readiness 503, no new requests, in-flight ones finish. */
            drainHttp(timeoutMs) {
                this.logger.info(`draining: ${drain.requestsInFlight} HTTP request(s) in flight`);
                return drain.drain(this.server, timeoutMs);
            },
            refreshRoutes() {
                const actions = this.broker.registry
                    .getActionList({ skipInternal: true, withEndpoints: false })
                    .map((item) => item.action);
                if (!this.routeTable.learn((0, route_registry_1.routesOf)(actions, (msg) => this.logger.warn(msg))))
                    return;
                const served = this.routeTable.list();
                this.front.serve(served);
                this.openapi = (0, openapi_1.buildOpenApi)(served.map((r) => r.def), cfg.publicBaseUrl);
            },
            /**
             * The token proves who is calling; the manager's row, as it is now, says whether it still may
             * and what it may do (issue: trust the database, not the token).
             */
            async authenticate(req) {
                const header = req.headers.authorization;
                const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
                if (!match)
                    throw (0, errors_1.unauthorized)('missing bearer token');
                let token;
                try {
                    token = this.verify(match[1]);
                }
                catch (err) {
                    throw (0, errors_1.unauthorized)(err.name === 'TokenExpiredError' ? 'token expired' : 'invalid token');
                }
                if (this.revocations.has(token.jti))
                    throw (0, errors_1.unauthorized)('token revoked');
                const manager = await this.identities.get(token.managerId);
                if (!manager)
                    throw (0, errors_1.unauthorized)('manager no longer exists');
                if (!manager.active)
                    throw (0, errors_1.unauthorized)('manager is disabled');
                if (manager.tokenVersion !== token.tokenVersion)
                    throw (0, errors_1.unauthorized)('token revoked');
                return {
                    managerId: manager.id,
                    role: manager.role,
                    resellerId: manager.resellerId,
                    permissions: manager.permissions,
                    jti: token.jti,
                    exp: token.exp,
                };
            },
            async handle(route, req, res, input) {
                const { def, validate } = route;
                req.routeTemplate = def.path;
                try {
                    const ip = clientIp(req);
                    const limit = def.rateLimit ?? 'auth';
                    if (limit !== 'none')
                        await this.consumeRateLimit(limit, ip, res);
                    const auth = def.auth === 'jwt' ? await this.authenticate(req) : undefined;
                    const valid = validate({
                        params: { ...input.params },
                        query: { ...input.query },
                        body: def.body ? (0, validation_1.jsonBody)(req.headers, input.body, input.rawBody) : {},
                    });
                    const idempotencyKey = def.idempotent ? req.headers['idempotency-key'] : undefined;
                    // A root context, so what the action puts in its meta (status, headers) comes back to us.
                    // Moleculer's types want an endpoint, but a root context has none.
                    const ctx = this.broker.ContextFactory.create(this.broker, null, {}, {});
                    ctx.meta.auth = auth;
                    ctx.meta.ip = ip;
                    ctx.meta.route = route.key;
                    if (typeof idempotencyKey === 'string' && idempotencyKey)
                        ctx.meta.idempotencyKey = idempotencyKey;
                    const local = def.action.startsWith('gateway.') ? { nodeID: this.broker.nodeID } : {};
                    const result = await ctx.call(def.action, { ...valid.query, ...valid.body, ...valid.params }, local);
                    const status = Number(ctx.meta.$statusCode ?? def.success ?? 200);
                    const headers = (ctx.meta.$responseHeaders ?? {});
                    for (const [k, v] of Object.entries(headers))
                        res.setHeader(k, v);
                    const produces = def.produces ?? 'json';
                    if (produces === 'json' && (0, route_1.isRawJson)(result)) {
                        sendJsonText(res, status, result.$rawJson);
                        return;
                    }
                    if (produces === 'json' || produces === 'raw-json') {
                        sendJson(res, status, produces === 'json' ? { success: true, ...result } : result);
                        return;
                    }
                    res.statusCode = status;
                    // An action serving files (the console's assets) names its own type.
                    if (!res.hasHeader('Content-Type'))
                        res.setHeader('Content-Type', CONTENT_TYPES[produces]);
                    if (result instanceof node_stream_1.Readable) {
                        result.on('error', (err) => this.sendError(req, res, err));
                        result.pipe(res);
                    }
                    else {
                        res.end(Buffer.isBuffer(result) ? result : String(result));
                    }
                }
                catch (err) {
                    this.sendError(req, res, err);
                }
            },
            /** Every failure leaves as the API's envelope; a response already under way is cut. */
            sendError(req, res, err) {
                const { status, message } = toHttpError(err);
                if (status >= 500)
                    this.logger.error('request failed', req.method, req.url, err);
                if (res.headersSent) {
                    res.destroy();
                    return;
                }
                sendJson(res, status, { success: false, message });
            },
            /** Fixed one-minute windows per client IP; beyond the limit 429 with Retry-After. */
            async consumeRateLimit(limit, ip, res) {
                try {
                    await this.limiters[limit].consume(ip);
                }
                catch (rejection) {
                    if (!(rejection instanceof rate_limiter_flexible_1.RateLimiterRes))
                        throw rejection;
                    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))));
                    throw new errors_1.ApiError(429, 'too many requests');
                }
            },
            async loadRevocations() {
                const rows = await (0, client_1.db)()
                    .select({ jti: schema_1.tokenBlacklist.jti, expiresAt: schema_1.tokenBlacklist.expiresAt })
                    .from(schema_1.tokenBlacklist)
                    .where((0, drizzle_orm_1.gt)(schema_1.tokenBlacklist.expiresAt, (0, drizzle_orm_1.sql) `now()`));
                for (const r of rows)
                    this.revocations.add(r.jti, Math.floor(r.expiresAt.getTime() / 1000));
                this.revocations.prune();
            },
        },
        created() {
            this.revocations = new revocations_1.RevocationList();
            this.verify = (0, jwt_1.cachedVerifier)(cfg.jwtSecret);
            this.identities = new identities_1.IdentityCache(identities_1.loadIdentity, cfg.identityCacheMs);
            this.limiters = {
                auth: new rate_limiter_flexible_1.RateLimiterMemory({ points: cfg.rateLimitPerMin, duration: 60 }),
                public: new rate_limiter_flexible_1.RateLimiterMemory({ points: cfg.publicRateLimitPerMin, duration: 60 }),
            };
            this.routeTable = new route_registry_1.RouteTable();
            this.front = new http_front_1.HttpFront([metrics_2.metricsMiddleware, drain.middleware], (route, req, res, input) => void this.handle(route, req, res, input), (req, res, err) => this.sendError(req, res, err));
            this.server = this.front.server;
            this.stopReportingInFlight = (0, metrics_2.reportInFlight)(() => drain.requestsInFlight);
            this.openapi = (0, openapi_1.buildOpenApi)([], cfg.publicBaseUrl);
        },
        async started() {
            (0, metrics_1.registerDatabaseGauges)(client_1.db);
            this.refreshRoutes();
            await this.front.listen(cfg.port, process.env.HOST || '0.0.0.0');
            this.logger.info(`HTTP on port ${this.server.address().port}`);
            await this.loadRevocations();
            this.pruneTimer = setInterval(() => {
                this.loadRevocations().catch((err) => this.logger.warn('revocation refresh failed', err));
            }, 30_000);
            this.pruneTimer.unref();
        },
        async stopped() {
            if (this.pruneTimer)
                clearInterval(this.pruneTimer);
            this.stopReportingInFlight();
            await this.front.close();
        },
    };
    return schema;
}
//# sourceMappingURL=gateway.service.js.map