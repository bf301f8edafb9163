"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.METRICS_CONTENT_TYPE = void 0;
exports.clusterMetrics = clusterMetrics;
const prom_client_1 = __importDefault(require("prom-client"));
const metrics_1 = require("../../shared/metrics");
const NODE_METRICS_ACTION = 'node-metrics.snapshot';
const PER_NODE_TIMEOUT_MS = 2_000;
async function clusterMetrics(broker) {
    const nodes = new Set(broker.registry.getServiceList({ onlyAvailable: true })
        .filter((s) => s.name === 'node-metrics')
        .map((s) => s.nodeID));
    nodes.delete(broker.nodeID);
    const remote = await Promise.all([...nodes].map((nodeID) => broker
        .call(NODE_METRICS_ACTION, {}, { nodeID, timeout: PER_NODE_TIMEOUT_MS, retries: 0 })
        .catch(() => undefined)));
    const snapshots = [await metrics_1.registry.getMetricsAsJSON(), ...remote.filter((s) => !!s)];
    if (snapshots.length === 1)
        return metrics_1.registry.metrics();
    return prom_client_1.default.AggregatorRegistry.aggregate(snapshots).metrics();
}
exports.METRICS_CONTENT_TYPE = metrics_1.registry.contentType;
//# sourceMappingURL=cluster-metrics.js.map