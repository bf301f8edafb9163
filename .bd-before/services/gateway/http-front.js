"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.HttpFront = void 0;
exports.parseQuery = parseQuery;
/**
 * The gateway's HTTP front: one node HTTP server, a radix router (find-my-way) over the routes the
 * registry declares, JSON bodies through body-parser. It replaced moleculer-web, whose per-request
 * path (a `rest` action call, a scan of every alias's regular expression, promise chains around
 * connect middlewares) cost more CPU than everything else the gateway does for a read
 * (docs/foundation.md, "The HTTP front").
 */
const node_http_1 = __importDefault(require("node:http"));
const body_parser_1 = __importDefault(require("body-parser"));
const find_my_way_1 = __importDefault(require("find-my-way"));
const errors_1 = require("../../shared/errors");
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** `a=1&a=2` gives an array, as a query-string parser would; the validator refuses it where a scalar is due. */
function parseQuery(search) {
    // No prototype: a key named `__proto__` stays a key.
    const out = Object.create(null);
    for (const [key, value] of new URLSearchParams(search)) {
        const prev = out[key];
        out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    }
    return out;
}
class HttpFront {
    middlewares;
    onRoute;
    onError;
    server;
    router = this.newRouter();
    // strict: false so that `null` or `"x"` reach the route's own check (400), not the parser's.
    json = body_parser_1.default.json({
        strict: false,
        limit: '1mb',
        verify: (req, _res, buf) => {
            req.rawBody = buf;
        },
    });
    constructor(middlewares, onRoute, onError) {
        this.middlewares = middlewares;
        this.onRoute = onRoute;
        this.onError = onError;
        this.server = node_http_1.default.createServer((req, res) => this.run(req, res, 0));
    }
    /** Replaces the routing table (the registry changed); requests in flight keep their match. */
    serve(routes) {
        const router = this.newRouter();
        for (const route of routes)
            router.on(route.def.method, route.def.path, () => undefined, route);
        this.router = router;
    }
    listen(port, host) {
        return new Promise((resolve, reject) => {
            this.server.once('error', reject);
            this.server.listen(port, host, () => {
                this.server.off('error', reject);
                resolve();
            });
        });
    }
    /** Stops listening; idle keep-alive connections close now, busy ones after their response. */
    close() {
        if (!this.server.listening)
            return Promise.resolve();
        return new Promise((resolve) => {
            this.server.close(() => resolve());
            this.server.closeIdleConnections();
        });
    }
    newRouter() {
        // `/x/` is `/x`, as it always was.
        return (0, find_my_way_1.default)({ ignoreTrailingSlash: true });
    }
    run(req, res, i) {
        const middleware = this.middlewares[i];
        if (middleware) {
            middleware(req, res, () => this.run(req, res, i + 1));
            return;
        }
        this.route(req, res);
    }
    route(req, res) {
        const url = req.url ?? '/';
        const q = url.indexOf('?');
        const path = q === -1 ? url : url.slice(0, q);
        let found;
        try {
            found = this.router.find(req.method, path);
        }
        catch {
            // A path that does not decode (`%zz`) names no route.
            found = null;
        }
        if (!found) {
            this.onError(req, res, (0, errors_1.notFound)());
            return;
        }
        const route = found.store;
        const input = { params: found.params, query: q === -1 ? Object.create(null) : parseQuery(url.slice(q + 1)) };
        if (!BODY_METHODS.has(req.method ?? '')) {
            this.onRoute(route, req, res, input);
            return;
        }
        this.json(req, res, (err) => {
            if (err) {
                this.onError(req, res, err);
                return;
            }
            const parsed = req;
            this.onRoute(route, req, res, { ...input, body: parsed.body, rawBody: parsed.rawBody });
        });
    }
}
exports.HttpFront = HttpFront;
//# sourceMappingURL=http-front.js.map