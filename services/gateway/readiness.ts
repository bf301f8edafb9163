/**
 * The gateway's side of a graceful shutdown (runtime/shutdown.ts calls `drain`), in three steps:
 *
 * 1. Readiness (`GET /health`) answers 503 `shutting down`, while other requests are still served
 *    for `readinessGraceMs`, the time a load balancer needs to see it and route elsewhere.
 * 2. The listening socket closes (Node also closes idle keep-alive connections), and a request
 *    arriving on a connection still open answers 503 `shutting down` with `Connection: close`.
 * 3. The requests already in flight run to their end (or the deadline).
 *
 * Liveness (`GET /health/live`) keeps answering 200 throughout: a draining process is alive, and an
 * orchestrator must not kill it for being busy finishing.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { routesOf } from './route-registry';

export const LIVENESS_PATH = '/health/live';
export const READINESS_PATH = '/health';
export const DRAINING_MESSAGE = 'shutting down';

export class HttpDrain {
  private inFlight = 0;
  private draining = false;
  private refusing = false;
  private onIdle?: () => void;

  get isDraining(): boolean {
    return this.draining;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Gateway middleware (http-front.ts): counts requests in flight; refuses new ones while draining. */
  readonly middleware = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    if (this.draining) {
      const path = req.url?.split('?')[0];
      if ((this.refusing && path !== LIVENESS_PATH) || path === READINESS_PATH) {
        const body = JSON.stringify({ success: false, message: DRAINING_MESSAGE });
        res.writeHead(503, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
          Connection: 'close',
        });
        res.end(body);
        return;
      }
    }
    this.inFlight++;
    // 'close' follows every response, finished or cut off: one listener counts both.
    res.once('close', this.finished);
    next();
  };

  private readonly finished = (): void => {
    if (--this.inFlight === 0) this.onIdle?.();
  };

  /** Steps 1 to 3; resolves with how many requests were still running at the deadline. */
  async drain(server: Server | undefined, timeoutMs: number, readinessGraceMs = 0): Promise<number> {
    this.draining = true;
    if (readinessGraceMs > 0) await new Promise((r) => setTimeout(r, readinessGraceMs));
    this.refusing = true;
    server?.close();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.onIdle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    server?.closeIdleConnections();
    return this.inFlight;
  }
}

// ------------------------------------------------------------------ readiness that means ready

/** Seconds a client is told to wait (`Retry-After`) while a route's unit is not up yet. */
export const RETRY_AFTER_SECONDS = 2;

/** A route's key as the gateway's table holds it: `METHOD /path`. */
type RouteKey = string;

export interface DeclaredRoutes {
  /** Every route every unit declares (`rest` + `http`), by key, with the unit that serves it. */
  byKey: Map<RouteKey, string>;
  /** The units this installation runs, whose routes the gateway must know before it is ready. */
  expectedUnits: string[];
}

/**
 * The units the gateway waits for: `EXPECTED_UNITS` when set (npm run start:cluster, the compose
 * stack and k8s set it); else, without a transporter, the units of this very process (embedded:
 * the process is the installation); else all of them.
 */
export function expectedUnits(all: string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const list = (raw: string | undefined) =>
    (raw ?? '')
      .split(/[,+]/)
      .map((s) => s.trim())
      .filter(Boolean);
  const expected = list(env.EXPECTED_UNITS);
  if (expected.length) {
    const unknown = expected.filter((u) => !all.includes(u));
    if (unknown.length) throw new Error(`unknown unit(s) in EXPECTED_UNITS: ${unknown.join(', ')}`);
    return expected;
  }
  const own = list(env.SERVICES);
  if (!env.TRANSPORTER && own.length) return own;
  return all;
}

let declared: Promise<DeclaredRoutes> | undefined;

/**
 * The routes of every unit, read from the units' schemas (runtime/units.ts) without starting them:
 * the same `rest` declarations the registry carries, known before any unit has announced itself.
 * Loaded once per process, lazily (runtime/units imports this folder: no cycle at load time).
 */
export function declaredRoutes(): Promise<DeclaredRoutes> {
  declared ??= (async () => {
    const byKey = new Map<RouteKey, string>();
    // Required at first use, not imported: runtime/units imports this folder (the gateway unit).
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load breaks the import cycle
    const { UNITS, UNIT_NAMES } = require('../../runtime/units') as typeof import('../../runtime/units');
    for (const unit of UNIT_NAMES) {
      const actions = UNITS[unit]().flatMap((schema) =>
        Object.entries(schema.actions ?? {}).map(([name, def]) => ({
          name: `${schema.name}.${name}`,
          ...(typeof def === 'object' && def ? (def as { rest?: unknown; http?: never }) : {}),
        })),
      );
      for (const route of routesOf(actions)) byKey.set(`${route.method} ${route.path}`, unit);
    }
    return { byKey, expectedUnits: expectedUnits(UNIT_NAMES) };
  })();
  return declared;
}

/**
 * Whether the gateway can serve every route of the installation: every route its expected units
 * declare has been learned from the registry (services/gateway/route-registry.ts). Until then
 * `/health` answers 503 `starting` and a declared route not learned yet answers 503 with
 * `Retry-After`, never 404 (http-front.ts). A route once learned stays (RouteTable), so readiness,
 * once reached, is kept: a unit that goes away later makes its own routes 503, not the gateway.
 */
export class RouteReadiness {
  private routes?: DeclaredRoutes;
  private learned = new Set<RouteKey>();
  private missing?: Set<RouteKey>;
  /** Set when the declarations could not be read: readiness then falls back to "broker started". */
  error?: Error;

  constructor(load: () => Promise<DeclaredRoutes> = declaredRoutes) {
    load().then(
      (routes) => {
        this.routes = routes;
        this.missing = new Set(
          [...routes.byKey].filter(([, unit]) => routes.expectedUnits.includes(unit)).map(([key]) => key),
        );
        for (const key of this.learned) this.missing.delete(key);
      },
      (err: Error) => {
        this.error = err;
      },
    );
  }

  /** The routes the gateway serves now (every refresh of its table). */
  learn(keys: Iterable<RouteKey>): void {
    for (const key of keys) {
      this.learned.add(key);
      this.missing?.delete(key);
    }
  }

  get ready(): boolean {
    if (this.error) return true;
    return this.missing !== undefined && this.missing.size === 0;
  }

  /** The expected units with routes still unknown (for logs and the 503's reader). */
  waitingFor(): string[] {
    if (!this.routes || !this.missing) return [];
    return [...new Set([...this.missing].map((key) => this.routes!.byKey.get(key)!))].sort();
  }

  /** Whether some unit declares a route that matches this request (its unit is not up yet). */
  declares(method: string, path: string): boolean {
    if (!this.routes) return path.startsWith('/api/') || path === '/portal';
    const templates = [...this.routes.byKey.keys()];
    return templates.some((key) => {
      const [m, template] = key.split(' ');
      return m === method && matchesTemplate(template, path);
    });
  }
}

/** `/api/invoices/:id/pdf` against `/api/invoices/7/pdf` (a trailing slash is ignored, as the router does). */
export function matchesTemplate(template: string, path: string): boolean {
  const t = template.split('/');
  const p = path.replace(/(.)\/+$/, '$1').split('/');
  return t.length === p.length && t.every((seg, i) => (seg.startsWith(':') ? p[i] !== '' : seg === p[i]));
}
