/**
 * `networkAccess`: everything that acts on a router for a subscriber.
 * - Consumes the outbox events `subscriber.disconnect` and `subscriber.rate_limit` (event-consumer.ts).
 * - POST /api/subscribers/:id/disconnect, POST .../ping, GET .../torch, GET .../bandwidth.
 * One CoA client (UDP sockets) and one RouterOS API client (a connection per router) per process.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { recordAudit } from '../../shared/audit';
import type { Permission } from '../../shared/auth/permissions';
import { recordInScope, requireAdmin, requirePermission, type Access } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { withTryLock } from '../../shared/db/try-lock';
import { subscribers } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { emptyBody, idParams, type IdPath } from '../../shared/http/schemas';
import { loadSettings } from '../../shared/settings';
import { bandwidthSeries } from './bandwidth';
import { CoaClient } from './coa/client';
import type { Outcome } from './coa/outcome';
import {
  DISCONNECT_EVENT,
  EventConsumer,
  RATE_LIMIT_EVENT,
  type DisconnectEvent,
  type RateLimitEvent,
} from './event-consumer';
import { OutcomeRecorder, warmOutcomeWrites, writeOutcomes } from './outcomes';
import { DisconnectVerifier } from './verify';
import { reconcilableNas, reconcileNas } from './reconcile';
import { RouterActions, type ActionResult as RouterResult } from './router-actions';
import { pppoeInterface, RouterOsClient, RouterOsError } from './routeros/client';
import {
  bandwidthData,
  disconnectData,
  pingBody,
  pingData,
  reconcileBody,
  reconcileData,
  type ReconcileInput,
  torchData,
  torchQuery,
  type PingInput,
  type TorchInput,
} from './schemas';
import { apiTarget, liveSessions, type LiveSession } from './sessions';

const SUBSCRIBER_ERRORS = { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message };
const ROUTER_ERRORS = {
  409: 'subscriber is offline, or its access server is not registered or has no API credentials',
  500: "the access server's API failed (message says how)",
};
/** Milliseconds between ping packets: RouterOS's default is 1 s; 20 packets then take 10 s at most. */
const PING_INTERVAL_MS = 500;
const SETTINGS_REFRESH_MS = 30_000;

interface Clients {
  coa: CoaClient;
  routeros: RouterOsClient;
  actions: RouterActions;
  recorder: OutcomeRecorder;
  consumer: EventConsumer;
  settingsTimer?: NodeJS.Timeout;
  reconcileTimer?: NodeJS.Timeout;
  reconciling?: Promise<void>;
  verifier: DisconnectVerifier;
  verifyTimer?: NodeJS.Timeout;
  verifying?: Promise<void>;
  lastReconcile: number;
}

/** How often the periodic reconciliation looks at `reconcile_minutes` (and whether a run is due); read at start. */
const reconcileCheckMs = () => Number(process.env.RECONCILE_CHECK_MS) || 60_000;
/** One periodic reconciliation at a time across replicas (pg_try_advisory_lock). */
const RECONCILE_LOCK = 26_0001;

/** The subscriber named by the path, after the permission and scope checks of shared/auth/policy. */
async function subscriberFor(ctx: Ctx<IdPath>, permission: Permission, access: Access) {
  const auth = requirePermission(ctx.meta.auth, permission);
  const [row] = await db()
    .select({
      id: subscribers.id,
      username: subscribers.username,
      usernameSince: subscribers.usernameSince,
      resellerId: subscribers.resellerId,
    })
    .from(subscribers)
    .where(and(eq(subscribers.id, ctx.params.id), isNull(subscribers.deletedAt)));
  return recordInScope(db(), auth, access, row, 'subscriberNotFound');
}

const MESSAGES: Record<Outcome, string> = {
  disconnected: 'session disconnected',
  applied: 'change applied',
  offline: 'subscriber is offline',
  rejected: 'the access server rejected the request',
  kicked: 'the access server did not answer CoA; the session was removed through its API',
  failed: 'the session could not be disconnected',
};

function messageOf(result: RouterResult): string {
  const rejected = result.sessions.find((s) => s.outcome === 'rejected');
  if (result.outcome === 'rejected' && rejected?.error_cause)
    return `${MESSAGES.rejected}: ${rejected.error_cause.code} ${rejected.error_cause.name}`;
  const failed = result.sessions.find((s) => s.outcome === 'failed');
  if (result.outcome === 'failed' && failed?.detail) return `${MESSAGES.failed}: ${failed.detail}`;
  return MESSAGES[result.outcome];
}

/** The session a ping or torch runs on: the newest live one, on a NAS whose API we can log in to. */
function routerSession(sessions: LiveSession[]) {
  const session = sessions[0];
  if (!session) throw fail('subscriberOffline');
  if (!session.nas) throw fail('nasNotRegistered', session.nasIp);
  const target = apiTarget(session.nas);
  if (!target) throw fail('nasWithoutApi', session.nas.name);
  return {
    session,
    nas: session.nas,
    target,
    nasRef: { id: session.nas.id, name: session.nas.name, ip_address: session.nas.ip },
  };
}

function routerFailure(err: unknown): never {
  if (err instanceof RouterOsError) throw fail('routerApiFailed', err.kind, err.message);
  throw err;
}

export const networkAccessService: ServiceSchema = {
  name: 'networkAccess',

  created() {
    const coa = new CoaClient({ bindAddress: process.env.COA_BIND_ADDRESS || undefined });
    const routeros = new RouterOsClient();
    const actions = new RouterActions(coa, routeros);
    const recorder = new OutcomeRecorder((err) =>
      this.logger.error('writing CoA outcomes failed; their events will be sent again', err),
    );
    const consumer = new EventConsumer({
      actions,
      recorder,
      onError: (err) => this.logger.error('network-access event failed', err),
      backlogMs: () => coa.queuedMs,
    });
    const verifier = new DisconnectVerifier(routeros, writeOutcomes);
    this.clients = {
      coa,
      routeros,
      actions,
      recorder,
      consumer,
      verifier,
      lastReconcile: Date.now(),
    } satisfies Clients;
  },

  async started() {
    const clients = this.clients as Clients;
    const apply = async () => {
      const s = await loadSettings(db(), ['coa_max_in_flight_per_nas', 'coa_retransmits']);
      clients.coa.options.maxInFlightPerNas = s.coa_max_in_flight_per_nas;
      clients.coa.options.retransmits = s.coa_retransmits;
    };
    await apply();
    // Ready before the first event rather than during it; a failure here only leaves that to the first job.
    void Promise.all([clients.coa.open(), clients.consumer.warm(), warmOutcomeWrites()]).catch((err: unknown) =>
      this.logger.warn('warming the CoA path failed', err),
    );
    clients.settingsTimer = setInterval(
      () => void apply().catch((err) => this.logger.warn('reading CoA settings failed', err)),
      SETTINGS_REFRESH_MS,
    );
    clients.settingsTimer.unref();
    clients.reconcileTimer = setInterval(() => {
      if (clients.reconciling) return;
      clients.reconciling = this.reconcileDue()
        .catch((err: unknown) => this.logger.warn('periodic reconciliation failed', err))
        .finally(() => {
          clients.reconciling = undefined;
        });
    }, reconcileCheckMs());
    clients.reconcileTimer.unref();
    clients.verifyTimer = setInterval(() => {
      if (clients.verifying) return;
      clients.verifying = clients.verifier
        .check()
        .then((records) => {
          if (records.length)
            this.logger.warn(
              `${records.length} acknowledged disconnect(s) still online ${clients.verifier.options.afterSeconds} s later: retried through the router API`,
            );
        })
        .catch((err: unknown) => this.logger.warn('checking acknowledged disconnects failed', err))
        .finally(() => {
          clients.verifying = undefined;
        });
    }, clients.verifier.options.checkMs);
    clients.verifyTimer.unref();
  },

  methods: {
    /**
     * Every `reconcile_minutes` (0 = never): each access server with API credentials, one at a time,
     * under an advisory lock so that replicas do not reconcile at once.
     */
    async reconcileDue(): Promise<void> {
      const clients = this.clients as Clients;
      const { reconcile_minutes: minutes } = await loadSettings(db(), ['reconcile_minutes']);
      if (!minutes || Date.now() - clients.lastReconcile < minutes * 60_000) return;
      await withTryLock(RECONCILE_LOCK, async () => {
        clients.lastReconcile = Date.now();
        for (const id of await reconcilableNas()) {
          const report = await reconcileNas(clients.routeros, id, false).catch((err: unknown) => {
            this.logger.warn(`reconciliation of nas ${id} failed`, err);
            return undefined;
          });
          if (report && (report.ghosts.length || report.unwanted.length))
            this.logger.info(
              `reconciled nas ${report.nas.name}: ${report.ghosts.length} ghost(s) closed, ${report.unwanted.filter((u) => u.removed).length} session(s) removed`,
            );
        }
      });
    },
  },

  async stopped() {
    const clients = this.clients as Clients;
    clearInterval(clients.settingsTimer);
    clearInterval(clients.reconcileTimer);
    clearInterval(clients.verifyTimer);
    // A check or reconciliation in flight finishes before the clients and the database go.
    await Promise.all([clients.verifying, clients.reconciling]);
    // Work cut short here is not recorded: its events stay unprocessed and are sent again.
    clients.consumer.stop();
    await clients.coa.close();
    await clients.routeros.close();
    await clients.recorder.flush();
  },

  events: {
    [DISCONNECT_EVENT](ctx: Ctx<DisconnectEvent>) {
      (this.clients as Clients).consumer.disconnect(ctx.params);
    },
    [RATE_LIMIT_EVENT](ctx: Ctx<RateLimitEvent>) {
      (this.clients as Clients).consumer.rateLimit(ctx.params);
    },
  },

  actions: {
    reconcile: {
      rest: 'POST /api/nas/:id/reconcile',
      http: {
        auth: 'jwt',
        access: 'admin',
        tag: 'nas',
        summary:
          "Compare the router's /ppp/active with the open accounting sessions: close the ghosts (open in accounting, absent on the router), remove through the API the sessions that should not exist; dry_run reports only",
        params: idParams(),
        body: reconcileBody,
        data: reconcileData,
        errors: {
          403: FAILURES.notAuthorized.message,
          404: FAILURES.nasNotFound.message,
          409: 'the access server has no API credentials, or its address is not an IP address',
          500: "the access server's API failed (message says how)",
        },
      },
      async handler(ctx: Ctx<IdPath & ReconcileInput>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const clients = this.clients as Clients;
        const data = await reconcileNas(clients.routeros, ctx.params.id, ctx.params.dry_run ?? false);
        // A dry run changes nothing. A real one closed ghost sessions and removed router sessions: no
        // transaction spans the router, so the row follows what was done.
        if (!data.dry_run) {
          await recordAudit(db(), ctx.meta.auth, {
            action: 'nas.reconcile',
            entity: 'nas',
            entityId: ctx.params.id,
            details: { ghosts_closed: data.ghosts.length, unwanted_removed: data.unwanted.length },
          });
        }
        return { data };
      },
    },

    disconnect: {
      rest: 'POST /api/subscribers/:id/disconnect',
      http: {
        auth: 'jwt',
        access: 'subscribers.disconnect',
        tag: 'subscribers',
        summary:
          'Disconnect the live session now: CoA Disconnect-Request to its access server, the router API kick when CoA goes unanswered. 200 even when offline; data.outcome says what happened',
        params: idParams(),
        body: emptyBody,
        data: disconnectData,
        errors: SUBSCRIBER_ERRORS,
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const clients = this.clients as Clients;
        const sub = await subscriberFor(ctx, 'subscribers.disconnect', 'write');
        const sessions = (await liveSessions([{ username: sub.username }])).get(sub.username) ?? [];
        const result = await clients.actions.disconnect(sub.username, sessions);
        // The router has acted: a failed audit write is logged by the recorder, not turned into a 500.
        await clients.recorder
          .record({
            event_id: null,
            source: 'request',
            action: 'disconnect',
            subscriber_id: sub.id,
            username: sub.username,
            reason: `manager ${ctx.meta.auth?.managerId ?? '?'}`,
            outcome: result.outcome,
            sessions: result.sessions,
          })
          .catch(() => undefined);
        // After the router acted (no transaction spans a router): the row says who asked and what came of it.
        await recordAudit(db(), ctx.meta.auth, {
          action: 'subscriber.disconnect',
          entity: 'subscriber',
          entityId: sub.id,
          resellerId: sub.resellerId,
          details: { outcome: result.outcome, sessions: result.sessions.length },
        });
        return {
          data: {
            subscriber_id: sub.id,
            username: sub.username,
            outcome: result.outcome,
            message: messageOf(result),
            sessions: result.sessions,
          },
        };
      },
    },

    ping: {
      rest: 'POST /api/subscribers/:id/ping',
      http: {
        auth: 'jwt',
        access: 'subscribers.ping',
        tag: 'subscribers',
        summary: `Ping the subscriber's current address from its access server (RouterOS /ping, ${PING_INTERVAL_MS} ms apart): round trips, loss and the router's output`,
        params: idParams(),
        body: pingBody,
        data: pingData,
        errors: { ...SUBSCRIBER_ERRORS, ...ROUTER_ERRORS },
      },
      async handler(ctx: Ctx<IdPath & PingInput>): Promise<ActionResult> {
        const clients = this.clients as Clients;
        const sub = await subscriberFor(ctx, 'subscribers.ping', 'write');
        const { session, target, nasRef } = routerSession(
          (await liveSessions([{ username: sub.username }])).get(sub.username) ?? [],
        );
        // An IPv6-only session is pinged at the IPv6 address accounting recorded (RouterOS's /ping takes either).
        const address = session.framedIp ?? session.framedIpv6Address;
        if (!address) throw fail('sessionWithoutAddress');
        const result = await clients.routeros
          .ping(target, {
            address,
            count: ctx.params.count ?? 4,
            size: ctx.params.size ?? 64,
            intervalMs: PING_INTERVAL_MS,
          })
          .catch(routerFailure);
        return { data: { subscriber_id: sub.id, username: sub.username, nas: nasRef, ...result } };
      },
    },

    torch: {
      rest: 'GET /api/subscribers/:id/torch',
      http: {
        auth: 'jwt',
        access: 'subscribers.torch',
        tag: 'subscribers',
        summary:
          'Live traffic of the session for `duration` seconds (max 10), per connection, bits per second, from RouterOS /tool/torch',
        params: idParams(),
        query: torchQuery,
        data: torchData,
        errors: { ...SUBSCRIBER_ERRORS, ...ROUTER_ERRORS },
      },
      async handler(ctx: Ctx<IdPath & TorchInput>): Promise<ActionResult> {
        const clients = this.clients as Clients;
        const sub = await subscriberFor(ctx, 'subscribers.torch', 'write');
        const { target, nasRef } = routerSession(
          (await liveSessions([{ username: sub.username }])).get(sub.username) ?? [],
        );
        const result = await clients.routeros
          .torch(target, pppoeInterface(sub.username), ctx.params.duration ?? 3)
          .catch(routerFailure);
        return { data: { subscriber_id: sub.id, username: sub.username, nas: nasRef, ...result } };
      },
    },

    bandwidth: {
      rest: 'GET /api/subscribers/:id/bandwidth',
      http: {
        auth: 'jwt',
        access: 'subscribers.view_graph',
        tag: 'subscribers',
        summary: '24-hour (hourly), 30-day (daily) and per-session usage series from accounting',
        params: idParams(),
        data: bandwidthData,
        errors: SUBSCRIBER_ERRORS,
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const sub = await subscriberFor(ctx, 'subscribers.view_graph', 'read');
        return {
          data: { subscriber_id: sub.id, username: sub.username, ...(await bandwidthSeries(sub.id, sub)) },
        };
      },
    },
  },
};
