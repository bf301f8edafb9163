import os from 'node:os';
import { Readable } from 'node:stream';
import type {
  ActionSchema,
  BrokerOptions,
  CallingOptions,
  CallMiddlewareHandler,
  Errors,
  Middleware,
  ServiceBroker,
} from 'moleculer';
import type { Config } from './shared/config';

/**
 * Fault handling between processes, chosen for this workload (docs/distributed.md explains each):
 * a request is bounded in time, retried only when the action says it is idempotent, kept away from
 * a sick replica by a circuit breaker, and bounded in concurrency per action and process.
 */
export const FAULT_POLICY = {
  /** Whole-request budget; nested calls get what is left. A PDF (15 s render deadline + queue) fits. */
  requestTimeoutMs: 30_000,
  /** A node that misses heartbeats this long is dropped and its pending calls are rejected (503 or retry). */
  heartbeatIntervalS: 3,
  heartbeatTimeoutS: 10,
  retries: 2,
  retryDelayMs: 100,
  retryMaxDelayMs: 1_000,
  /** In-flight calls per action per process; beyond that they wait in a bounded queue (then 429). */
  bulkheadConcurrency: 64,
  bulkheadQueue: 1_000,
  /** How long a broker stop waits for requests in flight (graceful shutdown drains them). */
  drainTimeoutMs: 10_000,
  /** Pause between reconnect attempts to NATS (nats.js adds up to 100 ms of jitter). */
  natsReconnectWaitMs: 250,
  /**
   * A node leaving tells the others it has no services, then keeps serving this long before it
   * refuses requests and later unsubscribes (Moleculer's `registry.stopDelay`, 100 ms by default):
   * a caller whose event loop is late in reading that notice still reaches a node that takes the
   * request, instead of one that is gone (a request lost there is not safe to send again).
   */
  leaveNoticeMs: 2_000,
  /** Sends again of a call that provably reached no handler (RedeliverUndelivered), and the first pause. */
  redeliveries: 3,
  redeliveryDelayMs: 100,
} as const;

/** What an action may declare beside `rest` and `http`: calling it twice has the effect of once. */
export interface IdempotentAction extends ActionSchema {
  idempotent?: boolean;
}

/**
 * Retries only what is safe to repeat. Moleculer's Retry middleware reads `action.retryPolicy` when
 * it wraps a handler; user middlewares wrap first, so this turns the action's own `idempotent: true`
 * into `retryPolicy.enabled` on both sides of a call (the caller retries on another replica).
 */
export const IdempotentRetry: Middleware = {
  localAction: markRetry,
  remoteAction: markRetry,
};

function markRetry<H>(handler: H, action: IdempotentAction): H {
  action.retryPolicy = { ...(action.retryPolicy ?? {}), enabled: action.idempotent === true };
  return handler;
}

/**
 * Moleculer sends each node's action definitions to the others through `safetyObject`, which drops
 * every object it has already seen, not only circular ones. A JSON schema shared by two fields
 * (`idSchema` for `service_id` and `reseller_id`) would reach a remote gateway with the second
 * field missing, and its ajv (removeAdditional) would strip that field from requests. A copy of
 * each action's `http` and `params` per action keeps every declaration a tree.
 */
export const DistinctActionSchemas: Middleware = {
  serviceCreating(_service: unknown, schema: { actions?: Record<string, unknown> }) {
    for (const action of Object.values(schema.actions ?? {})) {
      if (!action || typeof action !== 'object') continue;
      const a = action as { http?: unknown; params?: unknown };
      // JSON, not structuredClone: structuredClone keeps shared references shared.
      if (a.http) a.http = JSON.parse(JSON.stringify(a.http));
      if (a.params) a.params = JSON.parse(JSON.stringify(a.params));
    }
  },
};

/**
 * With a transporter, Moleculer tells other nodes about a change of its local services through a
 * debounced call (lodash, 1 s) that its stop never cancels. A broker stopped within a second of a
 * service starting kept that ref'd timer, so its process lived a second longer than it had work
 * (in tests, jest's "worker failed to exit"). Stopped means nothing more to announce.
 */
export const CancelPendingAnnouncement: Middleware = {
  stopped(broker: ServiceBroker) {
    (broker as unknown as { localServiceChanged: { cancel?: () => void } }).localServiceChanged.cancel?.();
  },
};

interface UndeliveredError {
  name?: string;
  data?: { action?: string; nodeID?: string };
}

/**
 * Whether `err`, from a call of `action`, proves that no handler of that action ran: no endpoint
 * here (the registry had none for an instant, between an old node's leave and a new one's INFO),
 * or a node that refused it before making a context (Moleculer's transit answers a stopping node's
 * requests with ServiceNotAvailableError, and one whose service has already stopped with that or
 * ServiceNotFoundError). Those errors name the called action itself; a handler that failed on a
 * nested call names the nested action, and its own work may be done. A RequestRejectedError (the
 * node left with the call pending) or a timeout proves nothing: the call may have run.
 */
export function provablyUndelivered(err: unknown, action: string): boolean {
  const e = err as UndeliveredError | undefined;
  return (e?.name === 'ServiceNotAvailableError' || e?.name === 'ServiceNotFoundError') && e.data?.action === action;
}

/** An available endpoint of `action` on a node not in `refused`, if the registry knows one. */
function otherNode(broker: ServiceBroker, action: string, refused: Set<string>): string | undefined {
  // Moleculer's typings leave the registry's endpoint lists out.
  const registry = broker.registry as unknown as {
    getActionEndpoints(name: string): { endpoints: { id: string; isAvailable: boolean }[] } | undefined;
  };
  const list = registry.getActionEndpoints(action);
  const candidates = (list?.endpoints ?? []).filter((ep) => ep.isAvailable && !refused.has(ep.id));
  return candidates[Math.floor(Math.random() * candidates.length)]?.id;
}

/**
 * A rolling upgrade loses no request (docs/operations.md, "Rolling upgrade"): a call that provably
 * reached no handler (`provablyUndelivered`) is sent again, at once to another node that has the
 * action, else after a pause (100, 200, 400 ms) for the registry to learn one; at most
 * `redeliveries` times. Safe for payments: what is sent again never ran. A call the caller aimed at
 * one node (`nodeID`) is left as it is, and so is a stream (it cannot be read twice). Every call
 * passes here: one that succeeds pays for a `catch` and nothing more.
 */
export function redeliverUndelivered(): Middleware {
  // One per broker (brokerOptions makes one each time): the hook needs its broker's registry.
  let broker: ServiceBroker | undefined;
  return {
    created(b: ServiceBroker) {
      broker = b;
    },
    call(next: CallMiddlewareHandler): CallMiddlewareHandler {
      return (action, params, opts = {}) => {
        if (opts.nodeID || params instanceof Readable) return next(action, params, opts);
        return next(action, params, opts).catch((err: unknown) => sendAgain(broker, next, err, action, params, opts));
      };
    },
  };
}

/** The sends after a first one that failed with `err`, while each provably reached no handler. */
async function sendAgain(
  broker: ServiceBroker | undefined,
  next: CallMiddlewareHandler,
  err: unknown,
  action: string,
  params: unknown,
  opts: CallingOptions,
): Promise<unknown> {
  const refused = new Set<string>();
  for (let attempt = 0; ; attempt++) {
    if (attempt >= FAULT_POLICY.redeliveries || !provablyUndelivered(err, action)) throw err;
    const from = (err as UndeliveredError).data?.nodeID;
    if (from) refused.add(from);
    const other = broker && otherNode(broker, action, refused);
    if (!other) await new Promise((r) => setTimeout(r, FAULT_POLICY.redeliveryDelayMs * 2 ** attempt));
    try {
      return await next(action, params, other ? { ...opts, nodeID: other } : opts);
    } catch (e) {
      err = e;
    }
  }
}

/** Errors that say the callee (a replica or the link to it) failed, not that the request was refused. */
export function isTransportFailure(err: Errors.MoleculerError | Error): boolean {
  const e = err as { name?: string; type?: string; code?: number };
  if (['RequestTimeoutError', 'RequestRejectedError', 'ServiceNotAvailableError'].includes(e.name ?? '')) return true;
  return e.type !== 'API_ERROR' && Number(e.code) >= 500;
}

/**
 * `tcp://host:port/nodeID,...` (what `npm run start:cluster` passes without NATS): Moleculer's TCP
 * transporter with a static node list and no UDP discovery, so clusters on one machine never meet.
 */
function transporterOption(url: string | undefined): BrokerOptions['transporter'] {
  if (!url) return null;
  if (url.startsWith('tcp://')) return { type: 'TCP', options: { urls: url, udpDiscovery: false } };
  // NATS keeps no message for a subscriber that is away: a request sent before its callee has
  // reconnected is lost and ends in the request timeout. Retrying every 250 ms (nats.js: 2 s)
  // shortens that window after a NATS restart.
  if (url.startsWith('nats://'))
    return { type: 'NATS', options: { url, reconnectTimeWait: FAULT_POLICY.natsReconnectWaitMs } };
  // Any other Moleculer transporter string (`Fake`, in tests without NATS) as Moleculer takes it.
  return url;
}

/**
 * Broker options for both modes: no transporter (embedded, every service in one broker) or NATS
 * (distributed, one deployment unit per process). Logs are JSON lines.
 */
export function brokerOptions(cfg: Config, overrides: Partial<BrokerOptions> = {}): BrokerOptions {
  return {
    namespace: process.env.NAMESPACE || 'isp-billing',
    nodeID: process.env.NODE_ID || `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`,
    transporter: transporterOption(cfg.transporter),
    serializer: 'JSON',
    requestTimeout: FAULT_POLICY.requestTimeoutMs,
    heartbeatInterval: FAULT_POLICY.heartbeatIntervalS,
    heartbeatTimeout: FAULT_POLICY.heartbeatTimeoutS,
    retryPolicy: {
      // Off unless the action declares `idempotent: true` (IdempotentRetry).
      enabled: false,
      retries: FAULT_POLICY.retries,
      delay: FAULT_POLICY.retryDelayMs,
      maxDelay: FAULT_POLICY.retryMaxDelayMs,
      factor: 2,
      check: (err) => isTransportFailure(err as Error) || (err as Errors.MoleculerError).code === 503,
    },
    circuitBreaker: {
      enabled: true,
      threshold: 0.5,
      minRequestCount: 20,
      windowTime: 30,
      halfOpenTime: 5_000,
      // A replica trips on its own failures; an ApiError (even a 503 "busy") is an answer, not a fault.
      check: (err) => isTransportFailure(err as Error),
    },
    bulkhead: {
      enabled: true,
      concurrency: FAULT_POLICY.bulkheadConcurrency,
      maxQueueSize: FAULT_POLICY.bulkheadQueue,
    },
    // broker.stop() waits for the requests in flight before stopping services (graceful drain).
    tracking: { enabled: true, shutdownTimeout: FAULT_POLICY.drainTimeoutMs },
    // A node leaving keeps serving for leaveNoticeMs after its "no services" notice (moleculer's
    // default, 100 ms, is less than a loaded caller's event loop may take to read it). Only with a
    // transporter: one broker alone has no one to tell.
    // (`stopDelay` is read by ServiceBroker.stop, left out of Moleculer's typings.)
    registry: { stopDelay: cfg.transporter ? FAULT_POLICY.leaveNoticeMs : 0 } as BrokerOptions['registry'],
    // Sending again is for a node that leaves or has not joined yet: one broker alone has none.
    middlewares: [
      DistinctActionSchemas,
      IdempotentRetry,
      CancelPendingAnnouncement,
      ...(cfg.transporter ? [redeliverUndelivered()] : []),
    ],
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
