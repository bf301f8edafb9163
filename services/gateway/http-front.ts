/**
 * The gateway's HTTP front: one node HTTP server, a radix router (find-my-way) over the routes the
 * registry declares, JSON bodies through body-parser. It replaced moleculer-web, whose per-request
 * path (a `rest` action call, a scan of every alias's regular expression, promise chains around
 * connect middlewares) cost more CPU than everything else the gateway does for a read
 * (docs/foundation.md, "The HTTP front").
 */
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import bodyParser from 'body-parser';
import Router, { type HTTPMethod } from 'find-my-way';
import { fail } from '../../shared/failures';
import { READINESS_PATH, RETRY_AFTER_SECONDS, RouteReadiness } from './readiness';
import type { ServedRoute } from './route-registry';
import { checkJsonDepth } from './validation';

/** What a matched request carries to the route's handler. */
export interface RequestInput {
  params: Record<string, string | undefined>;
  query: Record<string, string | string[]>;
  /** The parsed JSON body (routes that take one), and its raw bytes for the duplicate-key check. */
  body?: unknown;
  rawBody?: Buffer;
}

export type Middleware = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
export type RouteHandler = (route: ServedRoute, req: IncomingMessage, res: ServerResponse, input: RequestInput) => void;
export type ErrorHandler = (req: IncomingMessage, res: ServerResponse, err: unknown) => void;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * How long an idle keep-alive connection stays open. Node's default, 5 s, is shorter than the
 * clients' own: nginx keeps idle upstream connections 60 s, and undici (fetch) 4 s, but a loaded
 * client's timer fires late. A client then sends its next request on a connection the gateway has
 * just closed, and gets a socket error (undici's UND_ERR_SOCKET, `bench:upgrade` under load) for a
 * request the gateway never read; a POST is not sent again by the client. Longer than the
 * clients' timeouts, so they close first. Clients that read `Keep-Alive: timeout=65` keep theirs
 * a little less than that.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** `a=1&a=2` gives an array, as a query-string parser would; the validator refuses it where a scalar is due. */
export function parseQuery(search: string): Record<string, string | string[]> {
  // No prototype: a key named `__proto__` stays a key.
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(search)) {
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

export class HttpFront {
  readonly server: Server;
  /** Whether every route of the installation is known yet (readiness.ts). */
  readonly readiness = new RouteReadiness();
  private router = this.newRouter();
  // strict: false so that `null` or `"x"` reach the route's own check (400), not the parser's.
  private readonly json = bodyParser.json({
    strict: false,
    limit: '1mb',
    verify: (req, _res, buf) => {
      // Before parsing and before any auth: a body nested 5,000 deep is a 400, not a stack overflow.
      checkJsonDepth(buf);
      (req as IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
    },
  });

  constructor(
    private readonly middlewares: Middleware[],
    private readonly onRoute: RouteHandler,
    private readonly onError: ErrorHandler,
    limits: { headersTimeoutMs: number; requestTimeoutMs: number } = {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
    },
  ) {
    // A client trickling its headers or body a byte at a time is cut (408) once these run out;
    // Node checks them every connectionsCheckingInterval, so keep that well under the limits.
    const requestTimeout = Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs);
    this.server = http.createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout,
        connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(limits.headersTimeoutMs / 4))),
      },
      (req, res) => this.run(req, res, 0),
    );
    this.server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  }

  /** Replaces the routing table (the registry changed); requests in flight keep their match. */
  serve(routes: ServedRoute[]): void {
    const router = this.newRouter();
    for (const route of routes) router.on(route.def.method as HTTPMethod, route.def.path, () => undefined, route);
    this.router = router;
    this.readiness.learn(routes.map((r) => r.key));
  }

  listen(port: number, host: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /** Stops listening; idle keep-alive connections close now, busy ones after their response. */
  close(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private newRouter() {
    // `/x/` is `/x`, as it always was.
    return Router({ ignoreTrailingSlash: true });
  }

  private run(req: IncomingMessage, res: ServerResponse, i: number): void {
    const middleware = this.middlewares[i];
    if (middleware) {
      middleware(req, res, () => this.run(req, res, i + 1));
      return;
    }
    this.route(req, res);
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    let found: ReturnType<typeof this.router.find>;
    try {
      found = this.router.find(req.method as HTTPMethod, path);
    } catch {
      // A path that does not decode (`%zz`) names no route.
      found = null;
    }
    if (path === READINESS_PATH && !this.readiness.ready) {
      // Not every unit's routes are known yet: a client trusting /health would get 503s (or, before
      // readiness meant this, 404s) on its first calls.
      res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      this.onError(req, res, fail('starting'));
      return;
    }
    if (!found) {
      // A route some unit declares, whose unit has not announced itself yet: come back, not 404.
      const declared = this.readiness.declares(req.method ?? 'GET', path);
      if (declared) res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      this.onError(req, res, fail(declared ? 'serviceUnavailable' : 'notFound'));
      return;
    }
    const route = found.store as ServedRoute;
    const input: RequestInput = {
      params: found.params,
      query: q === -1 ? Object.create(null) : parseQuery(url.slice(q + 1)),
    };
    if (!BODY_METHODS.has(req.method ?? '')) {
      this.onRoute(route, req, res, input);
      return;
    }
    this.json(req, res, (err?: unknown) => {
      if (err) {
        this.onError(req, res, err);
        return;
      }
      const parsed = req as IncomingMessage & { body?: unknown; rawBody?: Buffer };
      this.onRoute(route, req, res, { ...input, body: parsed.body, rawBody: parsed.rawBody });
    });
  }
}
