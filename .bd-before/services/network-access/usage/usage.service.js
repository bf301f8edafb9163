"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.runUsage = runUsage;
exports.createUsageService = createUsageService;
const client_1 = require("../../../shared/db/client");
const errors_1 = require("../../../shared/errors");
const counters_1 = require("./counters");
const fup_engine_1 = require("./fup-engine");
const options_1 = require("./options");
const isIsoDate = (v) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`));
/** `today` defaults to the database's UTC date (the radacct trigger's clock). */
async function runUsage(today) {
    const boundary = await (0, counters_1.resetCountersBefore)((0, client_1.db)(), today);
    const { evaluated, changed } = await (0, fup_engine_1.evaluatePending)((0, client_1.db)());
    return { ...boundary, evaluated, changed };
}
/** Options default to the environment as it is when the service starts. */
function createUsageService(given) {
    let timer;
    let running;
    return {
        name: 'usage',
        actions: {
            /** Callable through the broker (not routed); `today` lets a script or test act as a later day. */
            run: {
                visibility: 'public',
                async handler(ctx) {
                    const { today } = ctx.params;
                    if (today !== undefined && !isIsoDate(today))
                        throw (0, errors_1.badRequest)('today must be a date (YYYY-MM-DD)');
                    return runUsage(today);
                },
            },
        },
        started() {
            const options = given ?? (0, options_1.usageOptionsFromEnv)();
            if (options.intervalSeconds === 0)
                return;
            const tick = () => {
                // One run at a time per process; other instances are kept apart by row locks.
                if (running)
                    return;
                running = runUsage()
                    .catch((err) => this.logger.error('usage run failed', err))
                    .finally(() => { running = undefined; });
            };
            tick();
            timer = setInterval(tick, options.intervalSeconds * 1000);
            timer.unref();
        },
        async stopped() {
            if (timer)
                clearInterval(timer);
            await running;
        },
    };
}
//# sourceMappingURL=usage.service.js.map