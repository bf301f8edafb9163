"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.HttpDrain = exports.DRAINING_MESSAGE = exports.READINESS_PATH = exports.LIVENESS_PATH = void 0;
exports.LIVENESS_PATH = '/health/live';
exports.READINESS_PATH = '/health';
exports.DRAINING_MESSAGE = 'shutting down';
class HttpDrain {
    inFlight = 0;
    draining = false;
    refusing = false;
    onIdle;
    get isDraining() {
        return this.draining;
    }
    get requestsInFlight() {
        return this.inFlight;
    }
    /** Gateway middleware (http-front.ts): counts requests in flight; refuses new ones while draining. */
    middleware = (req, res, next) => {
        if (this.draining) {
            const path = req.url?.split('?')[0];
            if ((this.refusing && path !== exports.LIVENESS_PATH) || path === exports.READINESS_PATH) {
                const body = JSON.stringify({ success: false, message: exports.DRAINING_MESSAGE });
                res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
                res.end(body);
                return;
            }
        }
        this.inFlight++;
        // 'close' follows every response, finished or cut off: one listener counts both.
        res.once('close', this.finished);
        next();
    };
    finished = () => {
        if (--this.inFlight === 0)
            this.onIdle?.();
    };
    /** Steps 1 to 3; resolves with how many requests were still running at the deadline. */
    async drain(server, timeoutMs, readinessGraceMs = 0) {
        this.draining = true;
        if (readinessGraceMs > 0)
            await new Promise((r) => setTimeout(r, readinessGraceMs));
        this.refusing = true;
        server?.close();
        if (this.inFlight > 0) {
            await new Promise((resolve) => {
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
exports.HttpDrain = HttpDrain;
//# sourceMappingURL=readiness.js.map