/**
 * `node-metrics`, started in every process: hands this process's prom-client registry to the
 * gateway, which sums every process's into one /metrics (services/gateway/cluster-metrics.ts).
 */
import type { ServiceSchema } from 'moleculer';
import { registry } from '../shared/metrics';

export const NODE_METRICS_SERVICE = 'node-metrics';

export const nodeMetricsService: ServiceSchema = {
  name: NODE_METRICS_SERVICE,
  actions: {
    snapshot: {
      visibility: 'public',
      idempotent: true,
      handler: () => registry.getMetricsAsJSON(),
    },
  },
};
