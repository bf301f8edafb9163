"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.HTTP_DRAIN_TIMEOUT_MS = void 0;
exports.gracefulStop = gracefulStop;
exports.stopOnSignals = stopOnSignals;
/** How long step 1 waits for HTTP requests in flight; step 2 has its own bound (tracking.shutdownTimeout). */
exports.HTTP_DRAIN_TIMEOUT_MS = 15_000;
function drainingGateway(app) {
    const gateway = app.broker.getLocalService('gateway');
    return typeof gateway?.drainHttp === 'function' ? gateway : undefined;
}
async function gracefulStop(app, httpDrainTimeoutMs = exports.HTTP_DRAIN_TIMEOUT_MS) {
    app.ops?.startDraining();
    const gateway = drainingGateway(app);
    if (gateway) {
        const unfinished = await gateway.drainHttp(httpDrainTimeoutMs);
        if (unfinished > 0)
            app.broker.logger.warn(`${unfinished} HTTP request(s) still running after ${httpDrainTimeoutMs} ms; stopping anyway`);
    }
    await app.stop();
}
/** SIGINT/SIGTERM run gracefulStop once, then exit 0 (1 if stopping failed); repeated signals are ignored. */
function stopOnSignals(app, exit = (code) => process.exit(code)) {
    let stopping = false;
    const onSignal = (signal) => {
        if (stopping)
            return;
        stopping = true;
        app.broker.logger.info(`${signal} received, draining and stopping`);
        gracefulStop(app).then(() => exit(0), (err) => {
            console.error(err);
            exit(1);
        });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
}
//# sourceMappingURL=shutdown.js.map