"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.isReady = isReady;
exports.startOpsServer = startOpsServer;
/**
 * A small HTTP listener for orchestrators, on OPS_PORT, in any process (the units without the
 * gateway have no other HTTP port): `GET /health/live` (200 while the process runs), `GET /health`
 * (readiness: 200 once the broker has started and, in distributed mode, the transporter is
 * connected; 503 from the moment a shutdown begins) and `GET /metrics` (this process's registry).
 */
const node_http_1 = __importDefault(require("node:http"));
const metrics_1 = require("../shared/metrics");
function send(res, status, body, type = 'application/json; charset=utf-8') {
    res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
}
function isReady(broker, draining) {
    if (draining || !broker.started)
        return false;
    const transit = broker.transit;
    return !transit || transit.connected === true;
}
async function startOpsServer(broker, port) {
    if (port === undefined)
        return undefined;
    let draining = false;
    const server = node_http_1.default.createServer((req, res) => {
        const path = (req.url ?? '').split('?')[0];
        if (req.method !== 'GET')
            return send(res, 405, JSON.stringify({ success: false, message: 'method not allowed' }));
        if (path === '/health/live')
            return send(res, 200, JSON.stringify({ success: true, data: { status: 'ok' } }));
        if (path === '/health') {
            const ready = isReady(broker, draining);
            const body = ready ? { success: true, data: { status: 'ok' } } : { success: false, message: draining ? 'shutting down' : 'starting' };
            return send(res, ready ? 200 : 503, JSON.stringify(body));
        }
        if (path === '/metrics') {
            metrics_1.registry.metrics().then((text) => send(res, 200, text, metrics_1.registry.contentType), () => send(res, 500, JSON.stringify({ success: false, message: 'internal server error' })));
            return;
        }
        send(res, 404, JSON.stringify({ success: false, message: 'not found' }));
    });
    await new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, process.env.HOST || '0.0.0.0', () => resolve());
    });
    return {
        port: server.address().port,
        startDraining: () => {
            draining = true;
        },
        close: () => new Promise((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
        }),
    };
}
//# sourceMappingURL=ops-server.js.map