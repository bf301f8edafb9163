"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __setModuleDefault = (this && this.__setModuleDefault) || (Object.create ? (function(o, v) {
    Object.defineProperty(o, "default", { enumerable: true, value: v });
}) : function(o, v) {
    o["default"] = v;
});
var __importStar = (this && this.__importStar) || (function () {
    var ownKeys = function(o) {
        ownKeys = Object.getOwnPropertyNames || function (o) {
            var ar = [];
            for (var k in o) if (Object.prototype.hasOwnProperty.call(o, k)) ar[ar.length] = k;
            return ar;
        };
        return ownKeys(o);
    };
    return function (mod) {
        if (mod && mod.__esModule) return mod;
        var result = {};
        if (mod != null) for (var k = ownKeys(mod), i = 0; i < k.length; i++) if (k[i] !== "default") __createBinding(result, mod, k[i]);
        __setModuleDefault(result, mod);
        return result;
    };
})();
Object.defineProperty(exports, "__esModule", { value: true });
exports.subscriberBulkService = void 0;
exports.bulkJobView = bulkJobView;
/**
 * POST /api/subscribers/bulk-action and GET /api/subscribers/bulk-jobs/:id.
 *
 * A job runs its ids in batches, one transaction per batch, through the same set-based operations
 * as the single actions; each batch commits together with its progress on the `bulk_jobs` row. The
 * request waits up to BULK_SYNC_SECONDS (default 25, under the spec's 30 s request timeout) and
 * then answers 202 { job_id } while the job carries on in this process.
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const errors_1 = require("../../shared/db/errors");
const schema_1 = require("../../shared/db/schema");
const subscriber_1 = require("../../shared/domain/subscriber");
const errors_2 = require("../../shared/errors");
const schemas_1 = require("../../shared/http/schemas");
const settings_1 = require("../../shared/settings");
const ops = __importStar(require("./operations"));
const subscriber_schemas_1 = require("./subscriber-schemas");
const schemas_2 = require("../../shared/http/schemas");
const PERMISSION = {
    renew: 'subscribers.renew',
    disconnect: 'subscribers.disconnect',
    enable: 'subscribers.inactivate',
    disable: 'subscribers.inactivate',
    reset_fup: 'subscribers.reset_fup',
    delete: 'subscribers.delete',
    set_service: 'subscribers.change_service',
    set_reseller: 'subscribers.transfer',
    set_static_ip: 'subscribers.edit',
    set_daily_quota: 'subscribers.edit',
    set_monthly_quota: 'subscribers.edit',
    set_price: 'subscribers.edit',
    rename: 'subscribers.rename',
    reset_mac: 'subscribers.reset_mac',
    refill: 'subscribers.refill_quota',
};
/** Ids per transaction: large enough for set-based statements to pay off, small enough to keep locks short. */
const BATCH = 500;
function syncSeconds() {
    const raw = Number(process.env.BULK_SYNC_SECONDS);
    return Number.isFinite(raw) && raw >= 0 ? raw : 25;
}
/** Room left between the 202 and the broker's request timeout, for the reply to travel back. */
const REPLY_MARGIN_MS = 5_000;
/**
 * How long, from the start of the request, it may wait for the job: BULK_SYNC_SECONDS, but never
 * up to the request's own timeout (`ctx.options.timeout`, the broker's requestTimeout), or the
 * caller gets the broker's 504 instead of the 202 (a BULK_SYNC_SECONDS of 3600 did exactly that).
 */
function syncBudgetMs(requestTimeoutMs) {
    const wanted = syncSeconds() * 1000;
    return requestTimeoutMs && requestTimeoutMs > 0 ? Math.min(wanted, Math.max(0, requestTimeoutMs - REPLY_MARGIN_MS)) : wanted;
}
/** The operation for an action, with request-wide payload checks done once, before any id is touched. */
async function prepare(auth, action, payload) {
    const as = (op, p) => ({ op: op, payload: p });
    switch (action) {
        case 'renew': return as(ops.renew, {});
        case 'disconnect': return as(ops.disconnect, {});
        case 'enable': return as(ops.enable, {});
        case 'disable': return as(ops.disable, {});
        case 'reset_fup': return as(ops.resetFup, {});
        case 'delete': return as(ops.softDelete, {});
        case 'reset_mac': return as(ops.resetMac, {});
        case 'refill': return as(ops.refill, {});
        case 'set_daily_quota': return as(ops.setQuota('daily'), payload);
        case 'set_monthly_quota': return as(ops.setQuota('monthly'), payload);
        case 'set_price': return as(ops.setPrice, payload);
        case 'set_service': {
            const [plan] = await (0, client_1.db)().select().from(schema_1.services).where((0, drizzle_orm_1.sql) `${schema_1.services.id} = ${payload.service_id} and ${schema_1.services.deletedAt} is null`);
            if (!plan)
                throw (0, errors_2.badRequest)('payload.service_id not found');
            return as(ops.setService, { plan, charge_difference: payload.charge_difference === true });
        }
        case 'set_reseller': {
            // The tree rule: an admin may name any reseller, a reseller only one of its own tree.
            let resellerId;
            try {
                resellerId = await (0, policy_1.targetReseller)((0, client_1.db)(), auth, payload.reseller_id);
            }
            catch (err) {
                if (err instanceof errors_2.ApiError && err.code === 400)
                    throw (0, errors_2.badRequest)('payload.reseller_id not found');
                throw err;
            }
            return as(ops.setReseller, { reseller_id: resellerId });
        }
        case 'set_static_ip': {
            if (typeof payload.pool_name === 'string') {
                const [pool] = await (0, client_1.db)().select({ name: schema_1.ipPools.name }).from(schema_1.ipPools).where((0, drizzle_orm_1.eq)(schema_1.ipPools.name, payload.pool_name));
                if (!pool)
                    throw (0, errors_2.badRequest)('payload.pool_name not found');
            }
            return as(ops.setStaticIp, payload);
        }
        case 'rename': {
            const { old_realm: oldRealm, new_realm: newRealm } = payload;
            return as(ops.rename((row) => (0, subscriber_1.swapRealm)(row.username, oldRealm, newRealm), `username is not in realm ${oldRealm}`), {});
        }
    }
}
async function runBatch(job, batch) {
    for (let attempt = 0;; attempt++) {
        try {
            return await (0, client_1.db)().transaction(async (tx) => {
                const locked = await ops.lockInScope(tx, job.scope, batch);
                const result = locked.rows.length
                    ? await job.op({ tx, auth: job.auth, today: (0, subscriber_1.todayIso)(), settings: job.settings }, locked.rows, job.payload)
                    : { failed: [] };
                const failed = [...locked.failed, ...result.failed].map((f) => ({ id: f.id, reason: f.reason }));
                const bad = new Set(failed.map((f) => f.id));
                const succeeded = batch.filter((id) => !bad.has(id));
                await recordProgress(tx, job.jobId, batch.length, succeeded, failed);
                return { succeeded, failed };
            });
        }
        catch (err) {
            // Deadlock or serialization failure against a concurrent single action: the batch is retried whole.
            if ((0, errors_1.isSerializationFailure)(err) && attempt < 3)
                continue;
            const reason = err instanceof errors_2.ApiError ? err.message : 'internal error';
            const failed = batch.map((id) => ({ id, reason }));
            await recordProgress((0, client_1.db)(), job.jobId, batch.length, [], failed);
            return { succeeded: [], failed };
        }
    }
}
async function recordProgress(tx, jobId, processed, succeeded, failed) {
    await tx.update(schema_1.bulkJobs).set({
        processed: (0, drizzle_orm_1.sql) `${schema_1.bulkJobs.processed} + ${processed}`,
        succeeded: (0, drizzle_orm_1.sql) `${schema_1.bulkJobs.succeeded} || ${JSON.stringify(succeeded)}::jsonb`,
        failed: (0, drizzle_orm_1.sql) `${schema_1.bulkJobs.failed} || ${JSON.stringify(failed)}::jsonb`,
    }).where((0, drizzle_orm_1.eq)(schema_1.bulkJobs.id, jobId));
}
async function runJob(job) {
    const succeeded = [];
    const failed = [];
    try {
        if (job.missingPermission) {
            const reason = `permission ${job.missingPermission} required`;
            failed.push(...job.ids.map((id) => ({ id, reason })));
            await recordProgress((0, client_1.db)(), job.jobId, job.ids.length, [], failed);
        }
        else {
            for (let i = 0; i < job.ids.length; i += BATCH) {
                const out = await runBatch(job, job.ids.slice(i, i + BATCH));
                succeeded.push(...out.succeeded);
                failed.push(...out.failed);
            }
        }
        await (0, client_1.db)().update(schema_1.bulkJobs).set({ status: 'done', finishedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.eq)(schema_1.bulkJobs.id, job.jobId));
    }
    catch (err) {
        await (0, client_1.db)().update(schema_1.bulkJobs).set({ status: 'failed', finishedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.eq)(schema_1.bulkJobs.id, job.jobId));
        throw err;
    }
    return { succeeded, failed };
}
function bulkJobView(j) {
    return {
        id: j.id,
        action: j.action,
        status: j.status,
        total: j.total,
        processed: j.processed,
        succeeded: j.succeeded,
        failed: j.failed,
        manager_id: j.managerId,
        created_at: (0, schemas_1.isoTimestamp)(j.createdAt),
        finished_at: (0, schemas_1.isoTimestamp)(j.finishedAt),
    };
}
exports.subscriberBulkService = {
    name: 'subscriberBulk',
    actions: {
        run: {
            rest: 'POST /api/subscribers/bulk-action',
            http: {
                auth: 'jwt',
                access: 'admin or reseller; each action also needs its own subscribers.* permission, checked per id',
                summary: 'Apply one action to many subscribers; per-id failures in data.failed; 202 { job_id } when not done within BULK_SYNC_SECONDS (25)',
                tag: 'subscribers',
                body: subscriber_schemas_1.bulkBody,
                errors: { 403: 'Not an admin or reseller' },
            },
            async handler(ctx) {
                // The wait is measured from here: preparation (plan lookup, scope, settings, job row) may
                // itself wait for a pool connection behind running jobs, and counts against the timeout too.
                const deadline = Date.now() + syncBudgetMs(ctx.options.timeout);
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const ids = [...new Set(ctx.params.ids)];
                const { action } = ctx.params;
                const permission = PERMISSION[action];
                const allowed = (0, policy_1.hasPermission)(auth, permission);
                // Without the permission nothing runs, so the payload is not worth checking.
                const prepared = allowed ? await prepare(auth, action, ctx.params.payload ?? {}) : { op: ops.disconnect, payload: {} };
                const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'write');
                const settings = await (0, settings_1.loadSettings)((0, client_1.db)());
                const [row] = await (0, client_1.db)().insert(schema_1.bulkJobs).values({
                    managerId: auth.managerId, action, ids, payload: ctx.params.payload ?? {}, total: ids.length,
                }).returning({ id: schema_1.bulkJobs.id });
                const job = runJob({ jobId: row.id, auth, scope, ids, settings, ...prepared, missingPermission: allowed ? undefined : permission });
                let timer;
                const timeout = new Promise((resolve) => {
                    timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
                });
                const outcome = await Promise.race([job, timeout]);
                clearTimeout(timer);
                if (outcome === 'timeout') {
                    job.catch((err) => this.logger.error('bulk job failed', row.id, err));
                    ctx.meta.$statusCode = 202;
                    return { data: { job_id: row.id } };
                }
                return { data: { succeeded: outcome.succeeded, failed: outcome.failed }, job_id: row.id };
            },
        },
        job: {
            rest: 'GET /api/subscribers/bulk-jobs/:id',
            http: {
                auth: 'jwt',
                access: 'admin, or the manager who started the job',
                summary: 'Progress and outcome of a bulk job',
                tag: 'subscribers',
                params: (0, schemas_2.idParams)(),
                errors: { 403: 'Another manager\'s job', 404: 'bulk job not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAuth)(ctx.meta.auth);
                const [job] = await (0, client_1.db)().select().from(schema_1.bulkJobs).where((0, drizzle_orm_1.eq)(schema_1.bulkJobs.id, ctx.params.id));
                if (!job)
                    throw (0, errors_2.notFound)('bulk job not found');
                if (auth.role !== 'admin' && job.managerId !== auth.managerId)
                    throw (0, errors_2.forbidden)();
                return { data: bulkJobView(job) };
            },
        },
    },
};
//# sourceMappingURL=bulk.service.js.map