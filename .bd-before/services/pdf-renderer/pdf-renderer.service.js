"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.createPdfRendererService = createPdfRendererService;
/**
 * `pdf-renderer`: HTML in, PDF bytes out, as a stream. The bytes are cut into 64 KiB chunks because
 * NATS caps a message at 1 MB and Moleculer sends each stream chunk as one message.
 */
const node_stream_1 = require("node:stream");
const errors_1 = require("../../shared/errors");
const metrics_1 = require("../../shared/metrics");
const paper_1 = require("../../shared/paper");
const chromium_1 = require("./chromium");
const options_1 = require("./options");
const pool_1 = require("./pool");
const CHUNK_BYTES = 64 * 1024;
function chunked(bytes) {
    const parts = [];
    for (let i = 0; i < bytes.length; i += CHUNK_BYTES)
        parts.push(bytes.subarray(i, i + CHUNK_BYTES));
    return node_stream_1.Readable.from(parts, { objectMode: false });
}
function reportQueue(pool) {
    const { queued, idle, concurrency } = pool.status();
    (0, metrics_1.setPdfQueue)(queued, concurrency - idle);
}
function createPdfRendererService(overrides = {}) {
    let pool;
    return {
        name: 'pdf-renderer',
        actions: {
            render: {
                visibility: 'public',
                // Same HTML, same PDF: a caller whose replica died retries on another (moleculer.config.ts).
                idempotent: true,
                async handler(ctx) {
                    const { html, paper } = ctx.params;
                    if (typeof html !== 'string' || !html)
                        throw (0, errors_1.badRequest)('html is required');
                    if (!(0, paper_1.isPaperSize)(paper))
                        throw (0, errors_1.badRequest)(`paper must be one of ${paper_1.PAPER_NAMES.join(', ')}`);
                    if (!pool)
                        throw (0, errors_1.unavailable)('pdf renderer is not running');
                    const size = paper_1.PAPER_SIZES[paper];
                    const started = process.hrtime.bigint();
                    let outcome = 'error';
                    const running = pool;
                    const render = running.render({ html, widthMm: size.width, heightMm: size.height });
                    reportQueue(running);
                    try {
                        const pdf = chunked(await render);
                        outcome = 'ok';
                        return pdf;
                    }
                    catch (err) {
                        if (err instanceof pool_1.QueueFullError || err instanceof pool_1.PoolClosedError)
                            outcome = 'busy';
                        if (err instanceof pool_1.RenderTimeoutError)
                            outcome = 'timeout';
                        if (err instanceof pool_1.QueueFullError)
                            throw (0, errors_1.unavailable)('pdf renderer is busy, retry shortly');
                        if (err instanceof pool_1.PoolClosedError)
                            throw (0, errors_1.unavailable)('pdf renderer is restarting, retry shortly');
                        if (err instanceof pool_1.RenderTimeoutError)
                            throw new errors_1.ApiError(504, 'pdf render timed out');
                        throw err;
                    }
                    finally {
                        (0, metrics_1.observeRender)(outcome, Number(process.hrtime.bigint() - started) / 1e9);
                        reportQueue(running);
                    }
                },
            },
            /** Browser pid, generation and queue depth: for health checks and the crash-recovery test. */
            status: {
                visibility: 'public',
                handler: () => pool?.status() ?? null,
            },
        },
        started() {
            const options = { ...(0, options_1.rendererOptionsFromEnv)(), ...overrides };
            // Fails the start with a message naming the fix when no Chromium exists.
            const executablePath = overrides.executablePath ?? (0, chromium_1.findChromium)();
            pool = new pool_1.RenderPool({ ...options, executablePath, logger: this.logger });
            pool.warm();
        },
        async stopped() {
            const p = pool;
            pool = undefined;
            await p?.stop();
        },
    };
}
//# sourceMappingURL=pdf-renderer.service.js.map