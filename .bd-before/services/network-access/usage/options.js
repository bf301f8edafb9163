"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.usageOptionsFromEnv = usageOptionsFromEnv;
/** Usage service tuning from the environment (documented in docs/freeradius.md). */
const config_1 = require("../../../shared/config");
function usageOptionsFromEnv(env = process.env) {
    return { intervalSeconds: (0, config_1.intVar)(env, 'USAGE_INTERVAL_SECONDS', 30, 0) };
}
//# sourceMappingURL=options.js.map