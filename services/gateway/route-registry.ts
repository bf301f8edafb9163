/**
 * The gateway's route table, learned from the service registry: every action that declares
 * `rest` and `http` (shared/http/route.ts), wherever its service runs. Moleculer-web's
 * `autoAliases` does the same from `rest` alone; we also need each route's schemas, access and
 * envelope, so the table is ours and the gateway turns it into function aliases.
 */
import type { HttpMethod, HttpRoute, RouteDef } from '../../shared/http/route';
import { compileRoute, type RouteValidator } from './validation';

/** An action definition as the registry holds it (remote ones arrive without their handler). */
export interface RegisteredAction {
  name: string;
  rest?: unknown;
  http?: HttpRoute;
}

export interface ServedRoute {
  def: RouteDef;
  validate: RouteValidator;
  /** `METHOD /path`, as actions see it in `ctx.meta.route`. */
  key: string;
}

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** The routes declared by these actions; a `rest` the gateway cannot serve is reported, not guessed. */
export function routesOf(actions: RegisteredAction[], warn: (msg: string) => void = () => {}): RouteDef[] {
  const routes: RouteDef[] = [];
  for (const action of actions) {
    if (!action.http || action.rest === undefined) continue;
    const match = typeof action.rest === 'string' ? /^(GET|POST|PUT|DELETE)\s+(\/\S*)$/.exec(action.rest.trim()) : null;
    if (!match || !METHODS.includes(match[1] as HttpMethod)) {
      warn(
        `action ${action.name}: rest must be "<GET|POST|PUT|DELETE> /full/path", got ${JSON.stringify(action.rest)}`,
      );
      continue;
    }
    const selfCare = match[2] === '/api/my' || match[2].startsWith('/api/my/');
    // A subscriber token works on /api/my only, and only it (or no token) does there.
    if ((action.http.auth === 'subscriber') !== selfCare && !(selfCare && action.http.auth === 'public')) {
      warn(`action ${action.name}: /api/my routes take auth 'subscriber' or 'public', and only they take 'subscriber'`);
      continue;
    }
    routes.push({ ...action.http, method: match[1] as HttpMethod, path: match[2], action: action.name });
  }
  return routes;
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

/**
 * Routes seen so far, by `METHOD path`. A route stays once learned: when its service stops (a
 * restart, a rolling upgrade) callers get 503 `service unavailable` instead of a 404 that would
 * say the API changed. A new declaration of the same route (an upgraded service) replaces it.
 */
export class RouteTable {
  private readonly routes = new Map<string, ServedRoute & { signature: string }>();

  /** Adds or replaces what changed; true when anything did (aliases and OpenAPI need rebuilding). */
  learn(defs: RouteDef[]): boolean {
    let changed = false;
    for (const def of defs) {
      const key = `${def.method} ${def.path}`;
      const signature = JSON.stringify(def);
      if (this.routes.get(key)?.signature === signature) continue;
      this.routes.set(key, { def, validate: compileRoute(def), key, signature });
      changed = true;
    }
    return changed;
  }

  /** In matching order. */
  list(): ServedRoute[] {
    return [...this.routes.values()].sort((a, b) => routeOrder(a.def, b.def));
  }
}
