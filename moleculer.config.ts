import os from 'node:os';
import type { BrokerOptions } from 'moleculer';
import type { Config } from './shared/config';

/**
 * Broker options for both modes: no transporter (embedded, every service in one broker) or NATS
 * (distributed, one deployment unit per process). Logs are JSON lines.
 */
export function brokerOptions(cfg: Config, overrides: Partial<BrokerOptions> = {}): BrokerOptions {
  return {
    namespace: process.env.NAMESPACE || 'isp-billing',
    nodeID: `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`,
    transporter: cfg.transporter ?? null,
    serializer: 'JSON',
    requestTimeout: 60_000,
    logger: { type: 'Console', options: { level: cfg.logLevel, formatter: 'json', colors: false } },
    metrics: false,
    tracing: false,
    // Request schemas are checked once, at the gateway, with ajv.
    validator: false,
    // server.ts owns SIGINT/SIGTERM: broker, then pool, then the embedded database, then exit.
    // Moleculer's own handlers would exit as soon as the broker stops, racing that order.
    skipProcessEventRegistration: true,
    ...overrides,
  };
}
