"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.nodeMetricsService = exports.NODE_METRICS_SERVICE = void 0;
const metrics_1 = require("../shared/metrics");
exports.NODE_METRICS_SERVICE = 'node-metrics';
exports.nodeMetricsService = {
    name: exports.NODE_METRICS_SERVICE,
    actions: {
        snapshot: {
            visibility: 'public',
            idempotent: true,
            handler: () => metrics_1.registry.getMetricsAsJSON(),
        },
    },
};
//# sourceMappingURL=metrics-service.js.map