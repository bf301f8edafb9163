"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.rendererOptionsFromEnv = rendererOptionsFromEnv;
/** Renderer tuning from the environment (documented in docs/documents.md). */
const config_1 = require("../../shared/config");
function rendererOptionsFromEnv(env = process.env) {
    return {
        concurrency: (0, config_1.intVar)(env, 'PDF_CONCURRENCY', 4, 1),
        maxQueue: (0, config_1.intVar)(env, 'PDF_QUEUE_LIMIT', 64, 1),
        timeoutMs: (0, config_1.intVar)(env, 'PDF_RENDER_TIMEOUT_MS', 15_000, 1),
    };
}
//# sourceMappingURL=options.js.map