/**
 * POST /api/subscribers/bulk-action and GET /api/subscribers/bulk-jobs/:id.
 *
 * A job runs its ids in batches, one transaction per batch, through the same set-based operations
 * as the single actions; each batch commits together with its progress on the `bulk_jobs` row. The
 * request waits up to BULK_SYNC_SECONDS (default 25, under the spec's 30 s request timeout) and
 * then answers 202 { job_id } while the job carries on in this process.
 */
import { eq, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import type { Auth } from '../../shared/auth/claims';
import type { Permission } from '../../shared/auth/permissions';
import {
  hasPermission,
  requireAdminOrReseller,
  requireAuth,
  scopeFor,
  targetReseller,
  type Scope,
} from '../../shared/auth/policy';
import { recordAudit } from '../../shared/audit';
import { db } from '../../shared/db/client';
import { isSerializationFailure } from '../../shared/db/errors';
import { bulkJobs, ipPools, ipv6Pools, services } from '../../shared/db/schema';
import { ipv6PrefixOrBadRequest } from './field-checks';
import { swapRealm, todayIso } from '../../shared/domain/subscriber';
import { ApiError } from '../../shared/errors';
import { FAILURES, fail, failure } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isoTimestamp } from '../../shared/http/schemas';
import { loadSettings, type Settings } from '../../shared/settings';
import { auditSubscriberRows, type SubscriberField } from './audit-rows';
import type { SubscriberRow } from './subscriber-view';
import * as ops from './operations';
import {
  BULK_IDS_PER_RATE_UNIT,
  MAX_BULK_IDS,
  bulkBody,
  type BulkAction,
  type BulkPayload,
  type BulkRequest,
} from './subscriber-schemas';
import { idParams, type IdPath } from '../../shared/http/schemas';
import { jobRouterOutcomes } from './router-outcomes';

const PERMISSION: Record<BulkAction, Permission> = {
  renew: 'subscribers.renew',
  disconnect: 'subscribers.disconnect',
  enable: 'subscribers.inactivate',
  disable: 'subscribers.inactivate',
  reset_fup: 'subscribers.reset_fup',
  delete: 'subscribers.delete',
  set_service: 'subscribers.change_service',
  set_reseller: 'subscribers.transfer',
  set_static_ip: 'subscribers.edit',
  set_static_ipv6: 'subscribers.edit',
  set_daily_quota: 'subscribers.edit',
  set_monthly_quota: 'subscribers.edit',
  // The price permission PUT asks for the same fields (issue 43), not subscribers.edit alone.
  set_price: 'subscribers.set_price',
  rename: 'subscribers.rename',
  reset_mac: 'subscribers.reset_mac',
  refill: 'subscribers.refill_quota',
  set_auto_renew: 'subscribers.edit',
};

/** What each action sets: the columns of its per-subscriber audit rows (audit-rows.ts). */
const AUDITED: Record<BulkAction, readonly SubscriberField[]> = {
  renew: ['expiryDate', 'lastRenewedOn', 'dailyQuotaUsed', 'monthlyQuotaUsed', 'fupLevel', 'blockedReason'],
  disconnect: [],
  enable: ['status', 'blockedReason'],
  disable: ['status', 'blockedReason'],
  reset_fup: ['dailyQuotaUsed', 'fupLevel', 'blockedReason'],
  delete: ['deletedAt'],
  set_service: ['serviceId', 'staticIp', 'ipv6Prefix', 'delegatedIpv6Prefix', 'walletBalance', 'blockedReason'],
  set_reseller: ['resellerId'],
  set_static_ip: ['staticIp'],
  set_static_ipv6: ['ipv6Prefix', 'delegatedIpv6Prefix'],
  set_daily_quota: ['dailyQuotaGb', 'blockedReason'],
  set_monthly_quota: ['monthlyQuotaGb', 'blockedReason'],
  set_price: ['price', 'overridePrice'],
  rename: ['username'],
  reset_mac: ['macAddress'],
  refill: ['dailyQuotaUsed', 'monthlyQuotaUsed', 'fupLevel', 'blockedReason'],
  set_auto_renew: ['autoRenew'],
};

/** Ids per transaction: large enough for set-based statements to pay off, small enough to keep locks short. */
const BATCH = 500;
/**
 * The first transaction's ids, doubling up to BATCH: a job's router side effects (a disconnect's
 * CoA) start when its first batch commits, and 64 commit in a fraction of the time 500 take. Each
 * next batch is written while the previous one's requests are on the wire; doubling keeps it ready
 * before they are answered (64 then 500 left the NAS idle for most of the first 100 ms in bench:coa).
 */
const FIRST_BATCH = 64;

function syncSeconds(): number {
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
function syncBudgetMs(requestTimeoutMs: number | null | undefined): number {
  const wanted = syncSeconds() * 1000;
  return requestTimeoutMs && requestTimeoutMs > 0
    ? Math.min(wanted, Math.max(0, requestTimeoutMs - REPLY_MARGIN_MS))
    : wanted;
}

/**
 * An action's operation and payload; `reads`, when set, the only columns (beyond id) its
 * operation reads, so its batches lock rows with those and the audited ones rather than whole rows.
 */
interface Prepared {
  op: ops.Operation<never, never>;
  payload: unknown;
  reads?: readonly SubscriberField[];
}

/** The operation for an action, with request-wide payload checks done once, before any id is touched. */
async function prepare(auth: Auth, action: BulkAction, payload: BulkRequest['payload']): Promise<Prepared> {
  const as = <P>(op: ops.Operation<P>, p: P): Prepared => ({ op, payload: p });
  // `reads` is inferred from the list given, and the operation's row type must fit in it.
  const reading = <P, K extends SubscriberField>(
    op: ops.Operation<P, Pick<SubscriberRow, NoInfer<K> | 'id'>>,
    p: P,
    reads: readonly K[],
  ): Prepared => ({ op, payload: p, reads });
  // Each payload was validated against its action's schema (bulkBody), so the casts below hold.
  switch (action) {
    case 'renew':
      return as(ops.renew, {});
    case 'disconnect':
      return reading(ops.disconnect, {}, ['username']);
    case 'enable':
      return as(ops.enable, {});
    case 'disable':
      return as(ops.disable, {});
    case 'reset_fup':
      return as(ops.resetFup, {});
    case 'delete':
      return reading(ops.softDelete, {}, ['username']);
    case 'reset_mac':
      return reading(ops.resetMac, {}, []);
    case 'refill':
      return as(ops.refill, {});
    case 'set_daily_quota':
      return reading(ops.setQuota('daily'), payload as BulkPayload<'set_daily_quota'>, []);
    case 'set_monthly_quota':
      return reading(ops.setQuota('monthly'), payload as BulkPayload<'set_monthly_quota'>, []);
    case 'set_price':
      return as(ops.setPrice, payload as BulkPayload<'set_price'>);
    case 'set_auto_renew':
      return reading(ops.setAutoRenew, payload as BulkPayload<'set_auto_renew'>, ['autoRenew']);
    case 'set_service': {
      const p = payload as BulkPayload<'set_service'>;
      const [plan] = await db()
        .select()
        .from(services)
        .where(sql`${services.id} = ${p.service_id} and ${services.deletedAt} is null`);
      if (!plan) throw fail('referenceNotFound', 'payload.service_id');
      return as(ops.setService, { plan, charge_difference: p.charge_difference === true });
    }
    case 'set_reseller': {
      // The tree rule: an admin may name any reseller, a reseller only one of its own tree.
      let resellerId: number;
      try {
        resellerId = await targetReseller(db(), auth, (payload as BulkPayload<'set_reseller'>).reseller_id);
      } catch (err) {
        if (err instanceof ApiError && err.code === 400) throw fail('referenceNotFound', 'payload.reseller_id');
        throw err;
      }
      return as(ops.setReseller, { reseller_id: resellerId });
    }
    case 'set_static_ip': {
      const p = payload as BulkPayload<'set_static_ip'>;
      if (typeof p.pool_name === 'string') {
        const [pool] = await db().select({ name: ipPools.name }).from(ipPools).where(eq(ipPools.name, p.pool_name));
        if (!pool) throw fail('referenceNotFound', 'payload.pool_name');
      }
      return as(ops.setStaticIp, p);
    }
    case 'set_static_ipv6': {
      const p = payload as BulkPayload<'set_static_ipv6'>;
      if (typeof p.pool_name === 'string') {
        const [pool] = await db()
          .select({ name: ipv6Pools.name })
          .from(ipv6Pools)
          .where(eq(ipv6Pools.name, p.pool_name));
        if (!pool) throw fail('referenceNotFound', 'payload.pool_name');
        return as(ops.setStaticIpv6, { field: p.field, pool_name: p.pool_name });
      }
      // One spelling, and the field's lengths (/48 to /128, a delegated one /48 to /64), as on PUT.
      return as(ops.setStaticIpv6, { field: p.field, prefix: ipv6PrefixOrBadRequest(p.field, p.prefix)! });
    }
    case 'rename': {
      const { old_realm: oldRealm, new_realm: newRealm } = payload as BulkPayload<'rename'>;
      return as(
        ops.rename((row) => swapRealm(row.username, oldRealm, newRealm), failure('notInRealm', oldRealm)),
        {},
      );
    }
  }
}

interface JobInput extends Prepared {
  jobId: number;
  action: BulkAction;
  auth: Auth;
  scope: Scope;
  ids: number[];
  settings: Settings;
  /** Set when the caller lacks the action's permission: every id fails with it. */
  missingPermission?: string;
}

/**
 * One batch in its own transaction. `written` is called once its operation has run (its events are
 * in the outbox, uncommitted), or it failed: the next batch may start. `previous` is the batch
 * before it: its progress is recorded after that one committed, so the job row lists ids in order.
 */
async function runBatch(
  job: JobInput,
  batch: number[],
  written: () => void,
  previous: Promise<unknown>,
): Promise<{ succeeded: number[]; failed: { id: number; reason: string }[] }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await db().transaction(async (tx) => {
        const locked = job.reads
          ? await ops.lockInScope(tx, job.scope, batch, [...job.reads, ...AUDITED[job.action]])
          : await ops.lockInScope(tx, job.scope, batch);
        // prepare() paired the operation with the columns it reads: these rows carry them.
        const result = locked.rows.length
          ? await job.op(
              { tx, auth: job.auth, today: todayIso(), settings: job.settings },
              locked.rows as never[],
              job.payload as never,
            )
          : { failed: [] };
        written();
        const failed = [...locked.failed, ...result.failed].map((f) => ({ id: f.id, reason: f.message }));
        const bad = new Set(failed.map((f) => f.id));
        const succeeded = batch.filter((id) => !bad.has(id));
        await auditSubscriberRows(
          tx,
          job.auth,
          `subscriber.${job.action}`,
          AUDITED[job.action],
          locked.rows,
          succeeded,
          {
            bulk_job: job.jobId,
          },
        );
        await previous;
        await recordProgress(tx, job.jobId, batch.length, succeeded, failed);
        return { succeeded, failed };
      });
    } catch (err) {
      // Deadlock or serialization failure against a concurrent single action: the batch is retried whole.
      if (isSerializationFailure(err) && attempt < 3) continue;
      written();
      const reason = err instanceof ApiError ? err.message : 'internal error';
      const failed = batch.map((id) => ({ id, reason }));
      await previous;
      await recordProgress(db(), job.jobId, batch.length, [], failed);
      return { succeeded: [], failed };
    }
  }
}

async function recordProgress(
  tx: Parameters<Parameters<ReturnType<typeof db>['transaction']>[0]>[0] | ReturnType<typeof db>,
  jobId: number,
  processed: number,
  succeeded: number[],
  failed: { id: number; reason: string }[],
): Promise<void> {
  await tx
    .update(bulkJobs)
    .set({
      processed: sql`${bulkJobs.processed} + ${processed}`,
      succeeded: sql`${bulkJobs.succeeded} || ${JSON.stringify(succeeded)}::jsonb`,
      failed: sql`${bulkJobs.failed} || ${JSON.stringify(failed)}::jsonb`,
    })
    .where(eq(bulkJobs.id, jobId));
}

async function runJob(job: JobInput): Promise<{ succeeded: number[]; failed: { id: number; reason: string }[] }> {
  const succeeded: number[] = [];
  const failed: { id: number; reason: string }[] = [];
  try {
    if (job.missingPermission) {
      const reason = `permission ${job.missingPermission} required`;
      failed.push(...job.ids.map((id) => ({ id, reason })));
      await recordProgress(db(), job.jobId, job.ids.length, [], failed);
    } else {
      const batches: Promise<Awaited<ReturnType<typeof runBatch>>>[] = [];
      for (let i = 0, size = FIRST_BATCH; i < job.ids.length; size = Math.min(size * 2, BATCH)) {
        const batch = job.ids.slice(i, i + size);
        i += batch.length;
        // At most two batches at once: the next one locks and writes while the one before it
        // writes its audit rows and commits (one after the other, the first job after a start
        // made its events slower than a NAS takes them: bench:coa, docs/network-access.md).
        if (batches.length >= 2) await batches[batches.length - 2];
        let written!: () => void;
        const opDone = new Promise<void>((resolve) => (written = resolve));
        const previous = batches.length ? batches[batches.length - 1].catch(() => undefined) : Promise.resolve();
        const run = runBatch(job, batch, written, previous);
        // Awaited below or by the next batch; a failure meanwhile is not an unhandled rejection.
        run.catch(() => undefined);
        batches.push(run);
        await Promise.race([opDone, run]);
      }
      for (const out of await Promise.all(batches)) {
        succeeded.push(...out.succeeded);
        failed.push(...out.failed);
      }
    }
    await db()
      .update(bulkJobs)
      .set({ status: 'done', finishedAt: sql`now()` })
      .where(eq(bulkJobs.id, job.jobId));
  } catch (err) {
    await db()
      .update(bulkJobs)
      .set({ status: 'failed', finishedAt: sql`now()` })
      .where(eq(bulkJobs.id, job.jobId));
    throw err;
  }
  return { succeeded, failed };
}

/**
 * Spec section 7: renewing an already-renewed-today subscriber from the list is "accepted but a
 * no-op", 422. Only when the whole request did nothing for that one reason; any other failure or
 * any success keeps the 200 with per-id outcomes (docs/subscribers.md).
 */
function allNoOp(outcome: { succeeded: number[]; failed: { reason: string }[] }): boolean {
  return (
    outcome.succeeded.length === 0 &&
    outcome.failed.length > 0 &&
    outcome.failed.every((f) => f.reason === FAILURES.renewedToday.message)
  );
}

export function bulkJobView(j: typeof bulkJobs.$inferSelect) {
  return {
    id: j.id,
    action: j.action,
    status: j.status,
    total: j.total,
    processed: j.processed,
    succeeded: j.succeeded,
    failed: j.failed,
    manager_id: j.managerId,
    created_at: isoTimestamp(j.createdAt),
    finished_at: isoTimestamp(j.finishedAt),
  };
}

export const subscriberBulkService: ServiceSchema = {
  name: 'subscriberBulk',
  actions: {
    run: {
      rest: 'POST /api/subscribers/bulk-action',
      http: {
        auth: 'jwt',
        access: 'admin or reseller; each action also needs its own subscribers.* permission, checked per id',
        summary:
          'Apply one action to many subscribers; per-id failures in data.failed; 202 { job_id } when not done within BULK_SYNC_SECONDS (25)',
        tag: 'subscribers',
        body: bulkBody,
        rateCost: { field: 'ids', per: BULK_IDS_PER_RATE_UNIT },
        errors: {
          400: `ids above ${MAX_BULK_IDS}, or an invalid payload`,
          403: 'Not an admin or reseller',
          422: `${FAILURES.renewNoOp.message} (renew, every id)`,
        },
      },
      async handler(ctx: Ctx<BulkRequest>): Promise<ActionResult> {
        // The wait is measured from here: preparation (plan lookup, scope, settings, job row) may
        // itself wait for a pool connection behind running jobs, and counts against the timeout too.
        const deadline = Date.now() + syncBudgetMs(ctx.options.timeout);
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const ids = [...new Set(ctx.params.ids)];
        const { action } = ctx.params;
        const permission = PERMISSION[action];
        const allowed = hasPermission(auth, permission);
        // Without the permission nothing runs, so the payload is not worth checking.
        const prepared = allowed
          ? await prepare(auth, action, ctx.params.payload ?? {})
          : { op: ops.disconnect, payload: {} };
        const scope = await scopeFor(db(), auth, 'write');
        const settings = await loadSettings(db());
        const row = await db().transaction(async (tx) => {
          const [inserted] = await tx
            .insert(bulkJobs)
            .values({
              managerId: auth.managerId,
              action,
              ids,
              payload: ctx.params.payload ?? {},
              total: ids.length,
            })
            .returning({ id: bulkJobs.id });
          // One row for the job, and one per subscriber it changes as each batch commits (runBatch).
          await recordAudit(tx, auth, {
            action: `bulk.${action}`,
            entity: 'bulk_job',
            entityId: inserted.id,
            resellerId: scope.kind === 'tree' ? scope.rootId : null,
            details: { ids: ids.length, payload: ctx.params.payload ?? {} },
          });
          return inserted;
        });
        const job = runJob({
          jobId: row.id,
          action,
          auth,
          scope,
          ids,
          settings,
          ...prepared,
          missingPermission: allowed ? undefined : permission,
        });
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()));
        });
        const outcome = await Promise.race([job, timeout]);
        clearTimeout(timer);
        if (outcome === 'timeout') {
          job.catch((err) => this.logger.error('bulk job failed', row.id, err));
          ctx.meta.$statusCode = 202;
          return { data: { job_id: row.id } };
        }
        if (action === 'renew' && allNoOp(outcome)) throw fail('renewNoOp');
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
        params: idParams(),
        errors: { 403: "Another manager's job", 404: FAILURES.bulkJobNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = requireAuth(ctx.meta.auth);
        const [job] = await db().select().from(bulkJobs).where(eq(bulkJobs.id, ctx.params.id));
        if (!job) throw fail('bulkJobNotFound');
        if (auth.role !== 'admin' && job.managerId !== auth.managerId) throw fail('notAuthorized');
        // What the routers answered for the job's disconnects, beside what the job changed.
        return { data: { ...bulkJobView(job), router: await jobRouterOutcomes(db(), job) } };
      },
    },
  },
};
