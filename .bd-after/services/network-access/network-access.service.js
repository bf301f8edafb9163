"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.networkAccessService = void 0;
/**
 * `networkAccess`: everything that acts on a router for a subscriber.
 * - Consumes the outbox events `subscriber.disconnect` and `subscriber.rate_limit` (event-consumer.ts).
 * - POST /api/subscribers/:id/disconnect, POST .../ping, GET .../torch, GET .../bandwidth.
 * One CoA client (UDP sockets) and one RouterOS API client (a connection per router) per process.
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const schemas_1 = require("../../shared/http/schemas");
const settings_1 = require("../../shared/settings");
const bandwidth_1 = require("./bandwidth");
const client_2 = require("./coa/client");
const event_consumer_1 = require("./event-consumer");
const outcomes_1 = require("./outcomes");
const router_actions_1 = require("./router-actions");
const client_3 = require("./routeros/client");
const schemas_2 = require("./schemas");
const sessions_1 = require("./sessions");
const NOT_FOUND = 'subscriber not found';
const SUBSCRIBER_ERRORS = { 403: 'not authorized', 404: NOT_FOUND };
const ROUTER_ERRORS = {
    409: 'subscriber is offline, or its access server is not registered or has no API credentials',
    500: 'the access server\'s API failed (message says how)',
};
/** Milliseconds between ping packets: RouterOS's default is 1 s; 20 packets then take 10 s at most. */
const PING_INTERVAL_MS = 500;
const SETTINGS_REFRESH_MS = 30_000;
/** The subscriber named by the path, after the permission and scope checks of shared/auth/policy. */
async function subscriberFor(ctx, permission, access) {
    const auth = (0, policy_1.requirePermission)(ctx.meta.auth, permission);
    const [row] = await (0, client_1.db)()
        .select({ id: schema_1.subscribers.id, username: schema_1.subscribers.username, resellerId: schema_1.subscribers.resellerId })
        .from(schema_1.subscribers)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.subscribers.id, ctx.params.id), (0, drizzle_orm_1.isNull)(schema_1.subscribers.deletedAt)));
    if (!row)
        throw (0, errors_1.notFound)(NOT_FOUND);
    await (0, policy_1.assertRecordInScope)((0, client_1.db)(), auth, access, row.resellerId, NOT_FOUND);
    return row;
}
const MESSAGES = {
    disconnected: 'session disconnected',
    applied: 'change applied',
    offline: 'subscriber is offline',
    rejected: 'the access server rejected the request',
    kicked: 'the access server did not answer CoA; the session was removed through its API',
    failed: 'the session could not be disconnected',
};
function messageOf(result) {
    const rejected = result.sessions.find((s) => s.outcome === 'rejected');
    if (result.outcome === 'rejected' && rejected?.error_cause)
        return `${MESSAGES.rejected}: ${rejected.error_cause.code} ${rejected.error_cause.name}`;
    const failed = result.sessions.find((s) => s.outcome === 'failed');
    if (result.outcome === 'failed' && failed?.detail)
        return `${MESSAGES.failed}: ${failed.detail}`;
    return MESSAGES[result.outcome];
}
/** The session a ping or torch runs on: the newest live one, on a NAS whose API we can log in to. */
function routerSession(sessions) {
    const session = sessions[0];
    if (!session)
        throw (0, errors_1.conflict)('subscriber is offline');
    if (!session.nas)
        throw (0, errors_1.conflict)(`access server ${session.nasIp} is not registered`);
    const target = (0, sessions_1.apiTarget)(session.nas);
    if (!target)
        throw (0, errors_1.conflict)(`access server ${session.nas.name} has no API credentials`);
    return { session, nas: session.nas, target, nasRef: { id: session.nas.id, name: session.nas.name, ip_address: session.nas.ip } };
}
function routerFailure(err) {
    if (err instanceof client_3.RouterOsError)
        throw new errors_1.ApiError(500, `access server API failed (${err.kind}): ${err.message}`);
    throw err;
}
exports.networkAccessService = {
    name: 'networkAccess',
    created() {
        const coa = new client_2.CoaClient({ bindAddress: process.env.COA_BIND_ADDRESS || undefined });
        const routeros = new client_3.RouterOsClient();
        const actions = new router_actions_1.RouterActions(coa, routeros);
        const recorder = new outcomes_1.OutcomeRecorder((err) => this.logger.error('writing CoA outcomes failed; their events will be sent again', err));
        const consumer = new event_consumer_1.EventConsumer(actions, recorder, (err) => this.logger.error('network-access event failed', err));
        this.clients = { coa, routeros, actions, recorder, consumer };
    },
    async started() {
        const clients = this.clients;
        const apply = async () => {
            const s = await (0, settings_1.loadSettings)((0, client_1.db)(), ['coa_max_in_flight_per_nas', 'coa_retransmits']);
            clients.coa.options.maxInFlightPerNas = s.coa_max_in_flight_per_nas;
            clients.coa.options.retransmits = s.coa_retransmits;
        };
        await apply();
        clients.settingsTimer = setInterval(() => void apply().catch((err) => this.logger.warn('reading CoA settings failed', err)), SETTINGS_REFRESH_MS);
        clients.settingsTimer.unref();
    },
    async stopped() {
        const clients = this.clients;
        clearInterval(clients.settingsTimer);
        // Work cut short here is not recorded: its events stay unprocessed and are sent again.
        clients.consumer.stop();
        await clients.coa.close();
        await clients.routeros.close();
        await clients.recorder.flush();
    },
    events: {
        [event_consumer_1.DISCONNECT_EVENT](ctx) {
            this.clients.consumer.disconnect(ctx.params);
        },
        [event_consumer_1.RATE_LIMIT_EVENT](ctx) {
            this.clients.consumer.rateLimit(ctx.params);
        },
    },
    actions: {
        disconnect: {
            rest: 'POST /api/subscribers/:id/disconnect',
            http: {
                auth: 'jwt', access: 'subscribers.disconnect', tag: 'subscribers',
                summary: 'Disconnect the live session now: CoA Disconnect-Request to its access server, the router API kick when CoA goes unanswered. 200 even when offline; data.outcome says what happened',
                params: (0, schemas_1.idParams)(), body: schemas_1.emptyBody, data: schemas_2.disconnectData, errors: SUBSCRIBER_ERRORS,
            },
            async handler(ctx) {
                const clients = this.clients;
                const sub = await subscriberFor(ctx, 'subscribers.disconnect', 'write');
                const sessions = (await (0, sessions_1.liveSessions)([{ username: sub.username }])).get(sub.username) ?? [];
                const result = await clients.actions.disconnect(sub.username, sessions);
                // The router has acted: a failed audit write is logged by the recorder, not turned into a 500.
                await clients.recorder.record({
                    event_id: null, source: 'request', action: 'disconnect', subscriber_id: sub.id, username: sub.username,
                    reason: `manager ${ctx.meta.auth?.managerId ?? '?'}`, outcome: result.outcome, sessions: result.sessions,
                }).catch(() => undefined);
                return { data: { subscriber_id: sub.id, username: sub.username, outcome: result.outcome, message: messageOf(result), sessions: result.sessions } };
            },
        },
        ping: {
            rest: 'POST /api/subscribers/:id/ping',
            http: {
                auth: 'jwt', access: 'subscribers.ping', tag: 'subscribers',
                summary: `Ping the subscriber's current address from its access server (RouterOS /ping, ${PING_INTERVAL_MS} ms apart): round trips, loss and the router's output`,
                params: (0, schemas_1.idParams)(), body: schemas_2.pingBody, data: schemas_2.pingData, errors: { ...SUBSCRIBER_ERRORS, ...ROUTER_ERRORS },
            },
            async handler(ctx) {
                const clients = this.clients;
                const sub = await subscriberFor(ctx, 'subscribers.ping', 'write');
                const { session, target, nasRef } = routerSession((await (0, sessions_1.liveSessions)([{ username: sub.username }])).get(sub.username) ?? []);
                if (!session.framedIp)
                    throw (0, errors_1.conflict)('the live session has no address to ping');
                const result = await clients.routeros
                    .ping(target, { address: session.framedIp, count: ctx.params.count ?? 4, size: ctx.params.size ?? 64, intervalMs: PING_INTERVAL_MS })
                    .catch(routerFailure);
                return { data: { subscriber_id: sub.id, username: sub.username, nas: nasRef, ...result } };
            },
        },
        torch: {
            rest: 'GET /api/subscribers/:id/torch',
            http: {
                auth: 'jwt', access: 'subscribers.torch', tag: 'subscribers',
                summary: 'Live traffic of the session for `duration` seconds (max 10), per connection, bits per second, from RouterOS /tool/torch',
                params: (0, schemas_1.idParams)(), query: schemas_2.torchQuery, data: schemas_2.torchData, errors: { ...SUBSCRIBER_ERRORS, ...ROUTER_ERRORS },
            },
            async handler(ctx) {
                const clients = this.clients;
                const sub = await subscriberFor(ctx, 'subscribers.torch', 'write');
                const { target, nasRef } = routerSession((await (0, sessions_1.liveSessions)([{ username: sub.username }])).get(sub.username) ?? []);
                const result = await clients.routeros.torch(target, (0, client_3.pppoeInterface)(sub.username), ctx.params.duration ?? 3).catch(routerFailure);
                return { data: { subscriber_id: sub.id, username: sub.username, nas: nasRef, ...result } };
            },
        },
        bandwidth: {
            rest: 'GET /api/subscribers/:id/bandwidth',
            http: {
                auth: 'jwt', access: 'subscribers.view_graph', tag: 'subscribers',
                summary: '24-hour (hourly), 30-day (daily) and per-session usage series from accounting',
                params: (0, schemas_1.idParams)(), data: schemas_2.bandwidthData, errors: SUBSCRIBER_ERRORS,
            },
            async handler(ctx) {
                const sub = await subscriberFor(ctx, 'subscribers.view_graph', 'read');
                return { data: { subscriber_id: sub.id, username: sub.username, ...(await (0, bandwidth_1.bandwidthSeries)(sub.id, sub.username)) } };
            },
        },
    },
};
//# sourceMappingURL=network-access.service.js.map