"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
/** `npm start`: the embedded default, or one deployment unit of the distributed mode (see README). */
const config_1 = require("./shared/config");
const app_1 = require("./runtime/app");
const shutdown_1 = require("./runtime/shutdown");
/**
 * A failed start prints one line that says why (StartupErrors also name the fix), never a stack
 * trace; LOG_LEVEL=debug adds the stack for a bug hunt. Exit code 2 for configuration, else 1.
 */
function exitWith(prefix, err, code) {
    const message = err instanceof Error ? err.message : err === undefined ? '' : String(err);
    const line = message.split('\n').map((s) => s.trim()).find(Boolean);
    const name = err instanceof Error ? err.name : typeof err;
    console.error(`${prefix}: ${line ?? `${name} without a message (LOG_LEVEL=debug shows more)`}`);
    if (process.env.LOG_LEVEL === 'debug')
        console.error(err instanceof Error ? err.stack : err);
    process.exit(code);
}
async function main() {
    let app;
    try {
        app = await (0, app_1.startApp)((0, config_1.loadConfig)());
    }
    catch (err) {
        if (err instanceof config_1.ConfigError)
            exitWith('configuration error', err, 2);
        exitWith('cannot start', err, 1);
    }
    if (app.baseUrl)
        app.broker.logger.info(`HTTP API listening on ${app.baseUrl}`);
    (0, shutdown_1.stopOnSignals)(app);
}
main().catch((err) => exitWith('cannot start', err, 1));
//# sourceMappingURL=server.js.map