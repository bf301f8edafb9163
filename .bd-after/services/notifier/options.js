"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.notifierOptionsFromEnv = notifierOptionsFromEnv;
/** Notifier tuning from the environment (documented in docs/documents.md). */
const config_1 = require("../../shared/config");
function notifierOptionsFromEnv(env = process.env) {
    return {
        maxAttempts: Math.max(1, (0, config_1.intVar)(env, 'NOTIFIER_MAX_ATTEMPTS', 3)),
        retryBaseMs: (0, config_1.intVar)(env, 'NOTIFIER_RETRY_BASE_MS', 500),
        // 3 attempts x 10 s + pauses stay under the broker's 60 s request timeout.
        httpTimeoutMs: Math.max(1, (0, config_1.intVar)(env, 'NOTIFIER_HTTP_TIMEOUT_MS', 10_000)),
        maxPdfBytes: 20 * 1024 * 1024,
    };
}
//# sourceMappingURL=options.js.map