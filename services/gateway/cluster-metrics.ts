/**
 * /metrics in the distributed mode: every process runs `node-metrics` (runtime/metrics-service.ts);
 * the gateway asks each node for its registry and sums them with prom-client's AggregatorRegistry
 * (counters and histograms add up; the database-wide gauges are read here only). A node that does
 * not answer within the deadline is left out of that scrape rather than failing it.
 */
import type { ServiceBroker } from 'moleculer';
import client, { type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { registry } from '../../shared/metrics';

const NODE_METRICS_ACTION = 'node-metrics.snapshot';
const PER_NODE_TIMEOUT_MS = 2_000;

type Snapshot = MetricObjectWithValues<MetricValue<string>>[];

export async function clusterMetrics(broker: ServiceBroker): Promise<string> {
  const nodes = new Set(
    (broker.registry.getServiceList({ onlyAvailable: true }) as { name: string; nodeID: string }[])
      .filter((s) => s.name === 'node-metrics')
      .map((s) => s.nodeID),
  );
  nodes.delete(broker.nodeID);
  const remote = await Promise.all(
    [...nodes].map((nodeID) =>
      broker
        .call<Snapshot, Record<string, never>>(
          NODE_METRICS_ACTION,
          {},
          { nodeID, timeout: PER_NODE_TIMEOUT_MS, retries: 0 },
        )
        .catch(() => undefined),
    ),
  );
  const snapshots = [await registry.getMetricsAsJSON(), ...remote.filter((s): s is Snapshot => !!s)];
  if (snapshots.length === 1) return registry.metrics();
  return client.AggregatorRegistry.aggregate(snapshots).metrics();
}
