"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RouteTable = void 0;
exports.routesOf = routesOf;
exports.routeOrder = routeOrder;
const validation_1 = require("./validation");
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'];
/** The routes declared by these actions; a `rest` the gateway cannot serve is reported, not guessed. */
function routesOf(actions, warn = () => { }) {
    const routes = [];
    for (const action of actions) {
        if (!action.http || action.rest === undefined)
            continue;
        const match = typeof action.rest === 'string' ? /^(GET|POST|PUT|DELETE)\s+(\/\S*)$/.exec(action.rest.trim()) : null;
        if (!match || !METHODS.includes(match[1])) {
            warn(`action ${action.name}: rest must be "<GET|POST|PUT|DELETE> /full/path", got ${JSON.stringify(action.rest)}`);
            continue;
        }
        routes.push({ ...action.http, method: match[1], path: match[2], action: action.name });
    }
    return routes;
}
/** Static segments sort before parameters so `/api/invoices/commissions` is not taken as an id. */
function routeOrder(a, b) {
    const sa = a.path.split('/');
    const sb = b.path.split('/');
    for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
        const pa = sa[i].startsWith(':');
        const pb = sb[i].startsWith(':');
        if (pa !== pb)
            return pa ? 1 : -1;
    }
    return sb.length - sa.length;
}
/**
 * Routes seen so far, by `METHOD path`. A route stays once learned: when its service stops (a
 * restart, a rolling upgrade) callers get 503 `service unavailable` instead of a 404 that would
 * say the API changed. A new declaration of the same route (an upgraded service) replaces it.
 */
class RouteTable {
    routes = new Map();
    /** Adds or replaces what changed; true when anything did (aliases and OpenAPI need rebuilding). */
    learn(defs) {
        let changed = false;
        for (const def of defs) {
            const key = `${def.method} ${def.path}`;
            const signature = JSON.stringify(def);
            if (this.routes.get(key)?.signature === signature)
                continue;
            this.routes.set(key, { def, validate: (0, validation_1.compileRoute)(def), key, signature });
            changed = true;
        }
        return changed;
    }
    /** In matching order. */
    list() {
        return [...this.routes.values()].sort((a, b) => routeOrder(a.def, b.def));
    }
}
exports.RouteTable = RouteTable;
//# sourceMappingURL=route-registry.js.map