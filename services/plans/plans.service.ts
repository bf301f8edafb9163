import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { changedFields, recordAudit } from '../../shared/audit';
import { requireAdmin } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { conflictOnDuplicate } from '../../shared/db/errors';
import { services, subscribers, type FupTier } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { authOf, pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isCurrency, moneyField } from '../../shared/money';
import { syncPlanMacRows, writePlanGroupReply } from '../../shared/radius';
import { checkPlanPools } from '../../shared/access/ipv6-pools';
import { checkVendorTemplates } from '../../shared/vendors/profiles';
import { loadSettings } from '../../shared/settings';
import { planView } from '../../shared/views';
import { adminErrors, idParams, pageQuery, type IdPath, type PageQuery } from '../../shared/http/schemas';
import { planCreateBody, planUpdateBody, type NewPlanInput, type PlanInput } from './schemas';

type PlanRow = typeof services.$inferSelect;

/** The 400s of a plan's create and update: a field invalid, or an IPv6 pool of ours it cannot use. */
const PLAN_POOL_ERRORS = `a field is invalid; ${FAILURES.ipv6PoolLengthUnfit.message('<name>', '<length>', '<field>', '<column>', '<lengths>')}; ${FAILURES.ipv6PoolBothKinds.message('<name>')}`;

function checkTiers(tiers: FupTier[] | undefined): void {
  if (!tiers) return;
  const levels = tiers.map((t) => t.level);
  if (new Set(levels).size !== levels.length) throw fail('fupLevelsNotDistinct');
}

/** Every vendor's template parses and names attributes of the dictionary with values that fit them. */
function vendorAttributes(input: Record<string, string | undefined> | undefined): Record<string, string> | undefined {
  if (!input) return undefined;
  const templates = Object.fromEntries(
    Object.entries(input).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1].trim() !== ''),
  );
  try {
    checkVendorTemplates(templates);
  } catch (err) {
    throw fail('vendorAttributesInvalid', (err as Error).message);
  }
  return templates;
}

async function loadPlan(id: number): Promise<PlanRow> {
  const [row] = await db()
    .select()
    .from(services)
    .where(and(eq(services.id, id), isNull(services.deletedAt)));
  if (!row) throw fail('serviceNotFound');
  return row;
}

export const plansService: ServiceSchema = {
  name: 'plans',
  actions: {
    create: {
      rest: 'POST /api/services',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Create a plan',
        tag: 'plans',
        success: 201,
        body: planCreateBody,
        errors: {
          ...adminErrors,
          400: PLAN_POOL_ERRORS,
          409: FAILURES.serviceNameTaken.message,
        },
      },
      async handler(ctx: Ctx<NewPlanInput>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const p = ctx.params;
        const currency = p.currency ?? (await loadSettings(db(), ['currency'])).currency;
        if (!isCurrency(currency)) throw fail('currencyInvalid');
        checkTiers(p.fup_tiers);
        const templates = vendorAttributes(p.vendor_attributes);
        return conflictOnDuplicate('serviceNameTaken', async () => {
          const row = await db().transaction(async (tx) => {
            await checkPlanPools(tx, p.framed_ipv6_pool || null, p.delegated_ipv6_pool || null);
            const [inserted] = await tx
              .insert(services)
              .values({
                name: p.name,
                price: moneyField(p.price, currency, 'price'),
                currency,
                durationDays: p.duration_days,
                dailyQuotaGb: p.daily_quota_gb == null ? null : String(p.daily_quota_gb),
                monthlyQuotaGb: p.monthly_quota_gb == null ? null : String(p.monthly_quota_gb),
                rateLimit: p.rate_limit ?? null,
                fupTiers: p.fup_tiers ?? [],
                poolName: p.pool_name || null,
                framedIpv6Pool: p.framed_ipv6_pool || null,
                delegatedIpv6Pool: p.delegated_ipv6_pool || null,
                macBinding: p.mac_binding ?? false,
                vendorAttributes: templates ?? {},
                selfService: p.self_service ?? false,
              })
              .returning();
            await writePlanGroupReply(tx, inserted.id, inserted);
            await recordAudit(tx, ctx.meta.auth, {
              action: 'plan.create',
              entity: 'plan',
              entityId: inserted.id,
              details: changedFields(null, inserted),
            });
            return inserted;
          });
          return { data: planView(row) };
        });
      },
    },

    list: {
      rest: 'GET /api/services',
      http: {
        auth: 'jwt',
        access: 'any authenticated',
        summary: 'List plans',
        tag: 'plans',
        query: pageQuery,
      },
      async handler(ctx: Ctx<PageQuery>): Promise<ActionResult> {
        authOf(ctx);
        const { page, limit, offset } = pageOf(ctx.params);
        const rows = await db()
          .select()
          .from(services)
          .where(isNull(services.deletedAt))
          .orderBy(asc(services.id))
          .limit(limit)
          .offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(services).where(isNull(services.deletedAt));
        return { data: rows.map(planView), pagination: { page, limit, total } };
      },
    },

    get: {
      rest: 'GET /api/services/:id',
      http: {
        auth: 'jwt',
        access: 'any authenticated',
        summary: 'One plan',
        tag: 'plans',
        params: idParams(),
        errors: { 404: FAILURES.serviceNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        authOf(ctx);
        return { data: planView(await loadPlan(ctx.params.id)) };
      },
    },

    update: {
      rest: 'PUT /api/services/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Update a plan',
        tag: 'plans',
        params: idParams(),
        body: planUpdateBody,
        errors: {
          ...adminErrors,
          400: PLAN_POOL_ERRORS,
          404: FAILURES.serviceNotFound.message,
          409: `${FAILURES.serviceNameTaken.message}; ${FAILURES.planCurrencyOwnPrices.message('<currency>')}`,
        },
      },
      async handler(ctx: Ctx<PlanInput & IdPath>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        await loadPlan(ctx.params.id);
        const p = ctx.params;
        if (p.currency !== undefined && !isCurrency(p.currency)) throw fail('currencyInvalid');
        checkTiers(p.fup_tiers);
        const templates = vendorAttributes(p.vendor_attributes);
        const opt = <T>(v: T | undefined, fallback: T) => (v === undefined ? fallback : v);
        return conflictOnDuplicate('serviceNameTaken', async () => {
          const row = await db().transaction(async (tx) => {
            // The fields the body leaves out are kept as they are under the lock, so a concurrent
            // PUT's changes to them are not written back over.
            const [current] = await tx
              .select()
              .from(services)
              .where(and(eq(services.id, ctx.params.id), isNull(services.deletedAt)))
              .for('update');
            if (!current) throw fail('serviceNotFound');
            const currency = p.currency ?? current.currency;
            // A price is minor units of its currency: kept across a change of currency it would be
            // read in the new one (10.00 USD as 1,000 yen).
            if (currency !== current.currency && p.price === undefined) throw fail('planCurrencyNeedsPrice');
            // So is a subscriber's own price on the plan. Counted under the plan's lock, which a
            // subscriber PUT setting a price holds shared (update-subscriber.ts).
            if (currency !== current.currency) {
              const [{ own }] = await tx
                .select({ own: count() })
                .from(subscribers)
                .where(
                  and(
                    eq(subscribers.serviceId, current.id),
                    sql`${subscribers.price} is not null`,
                    isNull(subscribers.deletedAt),
                  ),
                );
              if (own > 0) throw fail('planCurrencyOwnPrices', current.currency);
            }
            const framedIpv6Pool =
              p.framed_ipv6_pool === undefined ? current.framedIpv6Pool : p.framed_ipv6_pool || null;
            const delegatedIpv6Pool =
              p.delegated_ipv6_pool === undefined ? current.delegatedIpv6Pool : p.delegated_ipv6_pool || null;
            await checkPlanPools(tx, framedIpv6Pool, delegatedIpv6Pool);
            const [updated] = await tx
              .update(services)
              .set({
                name: p.name ?? current.name,
                price: p.price === undefined ? current.price : moneyField(p.price, currency, 'price'),
                currency,
                durationDays: p.duration_days ?? current.durationDays,
                dailyQuotaGb:
                  p.daily_quota_gb === undefined
                    ? current.dailyQuotaGb
                    : p.daily_quota_gb === null
                      ? null
                      : String(p.daily_quota_gb),
                monthlyQuotaGb:
                  p.monthly_quota_gb === undefined
                    ? current.monthlyQuotaGb
                    : p.monthly_quota_gb === null
                      ? null
                      : String(p.monthly_quota_gb),
                rateLimit: opt(p.rate_limit, current.rateLimit),
                fupTiers: p.fup_tiers ?? current.fupTiers,
                poolName: p.pool_name === undefined ? current.poolName : p.pool_name || null,
                framedIpv6Pool,
                delegatedIpv6Pool,
                macBinding: p.mac_binding ?? current.macBinding,
                vendorAttributes: templates ?? current.vendorAttributes,
                selfService: p.self_service ?? current.selfService,
                updatedAt: sql`now()`,
              })
              .where(eq(services.id, current.id))
              .returning();
            await writePlanGroupReply(tx, updated.id, updated);
            if (updated.macBinding !== current.macBinding) await syncPlanMacRows(tx, updated.id);
            await recordAudit(tx, ctx.meta.auth, {
              action: 'plan.update',
              entity: 'plan',
              entityId: updated.id,
              details: changedFields(current, updated),
            });
            return updated;
          });
          return { data: planView(row) };
        });
      },
    },

    remove: {
      rest: 'DELETE /api/services/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Retire a plan (soft delete; refused while subscribers use it)',
        tag: 'plans',
        params: idParams(),
        errors: { ...adminErrors, 404: FAILURES.serviceNotFound.message, 409: FAILURES.serviceInUse.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const current = await loadPlan(ctx.params.id);
        await db().transaction(async (tx) => {
          // Counted under the plan's lock, which every writer placing a subscriber on the plan holds
          // shared until its commit (checkPlacements): none of theirs is left uncounted.
          const [locked] = await tx
            .select({ id: services.id })
            .from(services)
            .where(and(eq(services.id, current.id), isNull(services.deletedAt)))
            .for('update');
          if (!locked) throw fail('serviceNotFound');
          const [{ users }] = await tx
            .select({ users: count() })
            .from(subscribers)
            .where(and(eq(subscribers.serviceId, current.id), isNull(subscribers.deletedAt)));
          if (users > 0) throw fail('serviceInUse');
          const [retired] = await tx
            .update(services)
            .set({ deletedAt: sql`now()` })
            .where(eq(services.id, current.id))
            .returning();
          await recordAudit(tx, ctx.meta.auth, {
            action: 'plan.delete',
            entity: 'plan',
            entityId: current.id,
            details: changedFields(current, retired),
          });
        });
        return { data: { id: current.id, deleted: true } };
      },
    },
  },
};
