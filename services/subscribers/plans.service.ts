import { and, asc, count, eq, isNull, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { requireAdmin } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { conflictOnDuplicate } from '../../shared/db/errors';
import { services, subscribers, type FupTier } from '../../shared/db/schema';
import { badRequest, conflict, notFound } from '../../shared/errors';
import { authOf, pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { isoTimestamp } from '../../shared/http/schemas';
import { fromMinor, isCurrency, toMinor } from '../../shared/money';
import { writePlanGroupReply } from '../../shared/radius';
import { loadSettings } from '../../shared/settings';

type PlanRow = typeof services.$inferSelect;

interface PlanInput {
  name?: string;
  price?: number;
  duration_days?: number;
  currency?: string;
  daily_quota_gb?: number | null;
  monthly_quota_gb?: number | null;
  rate_limit?: string | null;
  pool_name?: string | null;
  mac_binding?: boolean;
  fup_tiers?: FupTier[];
}

const gbOrNull = (v: string | null) => (v === null ? null : Number(v));

export function planView(p: PlanRow) {
  return {
    id: p.id,
    name: p.name,
    price: fromMinor(p.price, p.currency),
    currency: p.currency,
    duration_days: p.durationDays,
    daily_quota_gb: gbOrNull(p.dailyQuotaGb),
    monthly_quota_gb: gbOrNull(p.monthlyQuotaGb),
    rate_limit: p.rateLimit,
    fup_tiers: p.fupTiers,
    pool_name: p.poolName,
    mac_binding: p.macBinding,
    created_at: isoTimestamp(p.createdAt),
  };
}

function checkTiers(tiers: FupTier[] | undefined): void {
  if (!tiers) return;
  const levels = tiers.map((t) => t.level);
  if (new Set(levels).size !== levels.length) throw badRequest('fup_tiers levels must be distinct');
}

function priceMinor(price: number, currency: string): number {
  try {
    return toMinor(price, currency);
  } catch {
    throw badRequest(`price has more decimal places than ${currency} allows`);
  }
}

async function loadPlan(id: number): Promise<PlanRow> {
  const [row] = await db().select().from(services).where(and(eq(services.id, id), isNull(services.deletedAt)));
  if (!row) throw notFound('service not found');
  return row;
}

export const plansService: ServiceSchema = {
  name: 'plans',
  actions: {
    create: {
      async handler(ctx: Ctx<PlanInput>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const p = ctx.params;
        const currency = p.currency ?? (await loadSettings(db(), ['currency'])).currency;
        if (!isCurrency(currency)) throw badRequest('currency must be an ISO 4217 code');
        checkTiers(p.fup_tiers);
        return conflictOnDuplicate('service name already exists', async () => {
          const row = await db().transaction(async (tx) => {
            const [inserted] = await tx
              .insert(services)
              .values({
                name: p.name as string,
                price: priceMinor(p.price as number, currency),
                currency,
                durationDays: p.duration_days as number,
                dailyQuotaGb: p.daily_quota_gb == null ? null : String(p.daily_quota_gb),
                monthlyQuotaGb: p.monthly_quota_gb == null ? null : String(p.monthly_quota_gb),
                rateLimit: p.rate_limit ?? null,
                fupTiers: p.fup_tiers ?? [],
                poolName: p.pool_name || null,
                macBinding: p.mac_binding ?? false,
              })
              .returning();
            await writePlanGroupReply(tx, inserted.id, inserted);
            return inserted;
          });
          return { data: planView(row) };
        });
      },
    },

    list: {
      async handler(ctx: Ctx<{ page?: number; limit?: number }>): Promise<ActionResult> {
        authOf(ctx);
        const { page, limit, offset } = pageOf(ctx.params);
        const rows = await db().select().from(services).where(isNull(services.deletedAt)).orderBy(asc(services.id)).limit(limit).offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(services).where(isNull(services.deletedAt));
        return { data: rows.map(planView), pagination: { page, limit, total } };
      },
    },

    get: {
      async handler(ctx: Ctx<{ id: number }>): Promise<ActionResult> {
        authOf(ctx);
        return { data: planView(await loadPlan(ctx.params.id)) };
      },
    },

    update: {
      async handler(ctx: Ctx<PlanInput & { id: number }>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const current = await loadPlan(ctx.params.id);
        const p = ctx.params;
        const currency = p.currency ?? current.currency;
        if (!isCurrency(currency)) throw badRequest('currency must be an ISO 4217 code');
        checkTiers(p.fup_tiers);
        const opt = <T>(v: T | undefined, fallback: T) => (v === undefined ? fallback : v);
        return conflictOnDuplicate('service name already exists', async () => {
          const row = await db().transaction(async (tx) => {
            const [updated] = await tx
              .update(services)
              .set({
                name: p.name ?? current.name,
                price: p.price === undefined ? current.price : priceMinor(p.price, currency),
                currency,
                durationDays: p.duration_days ?? current.durationDays,
                dailyQuotaGb: p.daily_quota_gb === undefined ? current.dailyQuotaGb : p.daily_quota_gb === null ? null : String(p.daily_quota_gb),
                monthlyQuotaGb: p.monthly_quota_gb === undefined ? current.monthlyQuotaGb : p.monthly_quota_gb === null ? null : String(p.monthly_quota_gb),
                rateLimit: opt(p.rate_limit, current.rateLimit),
                fupTiers: p.fup_tiers ?? current.fupTiers,
                poolName: p.pool_name === undefined ? current.poolName : p.pool_name || null,
                macBinding: p.mac_binding ?? current.macBinding,
                updatedAt: sql`now()`,
              })
              .where(eq(services.id, current.id))
              .returning();
            await writePlanGroupReply(tx, updated.id, updated);
            return updated;
          });
          return { data: planView(row) };
        });
      },
    },

    remove: {
      async handler(ctx: Ctx<{ id: number }>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const current = await loadPlan(ctx.params.id);
        const [{ users }] = await db()
          .select({ users: count() })
          .from(subscribers)
          .where(and(eq(subscribers.serviceId, current.id), isNull(subscribers.deletedAt)));
        if (users > 0) throw conflict('service is in use by subscribers');
        await db().update(services).set({ deletedAt: sql`now()` }).where(eq(services.id, current.id));
        return { data: { id: current.id, deleted: true } };
      },
    },
  },
};
