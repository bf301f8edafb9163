import { and, asc, count, eq, inArray, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { changedFields, recordAudit } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import { inScope, recordInScope, requireAdminOrReseller, resellerInScope, scopeFor } from '../../shared/auth/policy';
import { db, type Tx } from '../../shared/db/client';
import { resellers, resellerServiceLimits, services } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { authOf, pageOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { recordTransaction } from '../../shared/ledger';
import { isCurrency, moneyField } from '../../shared/money';
import { loadSettings } from '../../shared/settings';
import { resellerView } from '../../shared/views';
import { idParams, type IdPath } from '../../shared/http/schemas';
import {
  adjustBalanceBody,
  createResellerBody,
  listResellersQuery,
  serviceLimitBody,
  updateResellerBody,
  type AdjustBalanceInput,
  type CreateResellerInput,
  type ListResellersInput,
  type ServiceLimitInput,
  type UpdateResellerInput,
} from './schemas';

type ResellerRow = typeof resellers.$inferSelect;

/** The reseller row, tagged with itself as the reseller whose scope it lies in (for `recordInScope`). */
async function loadReseller(id: number): Promise<(ResellerRow & { resellerId: number }) | undefined> {
  const [row] = await db().select().from(resellers).where(eq(resellers.id, id));
  return row && { ...row, resellerId: row.id };
}

/** Writes on a reseller come from an admin or from a strict ancestor: a reseller never edits itself. */
async function loadForAncestorWrite(auth: Auth, id: number): Promise<ResellerRow> {
  requireAdminOrReseller(auth);
  const row = await recordInScope(db(), auth, 'write', await loadReseller(id), 'resellerNotFound');
  if (auth.role !== 'admin' && auth.resellerId === id) throw fail('ownAccount');
  return row;
}

async function lockResellers(tx: Tx, ids: number[]): Promise<Map<number, ResellerRow>> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const rows = await tx
    .select()
    .from(resellers)
    .where(inArray(resellers.id, sorted))
    .orderBy(asc(resellers.id))
    .for('update');
  return new Map(rows.map((r) => [r.id, r]));
}

export const resellersService: ServiceSchema = {
  name: 'resellers',
  actions: {
    create: {
      rest: 'POST /api/resellers',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller inside its own tree',
        summary: 'Create a reseller (a reseller creates sub-resellers under itself)',
        tag: 'resellers',
        success: 201,
        body: createResellerBody,
        errors: { 403: "Parent outside the caller's tree, or a reseller setting an opening balance" },
      },
      async handler(ctx: Ctx<CreateResellerInput>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const p = ctx.params;
        let parentId = p.parent_id ?? null;
        if (auth.role !== 'admin') {
          parentId ??= auth.resellerId;
          if (p.balance) throw fail('openingBalanceAdminOnly');
        }
        let parent: ResellerRow | undefined;
        if (parentId !== null) {
          [parent] = await db().select().from(resellers).where(eq(resellers.id, parentId));
          if (!parent) throw fail('referenceNotFound', 'parent_id');
          const scope = await scopeFor(db(), auth, 'write');
          if (!(await resellerInScope(db(), scope, parentId))) throw fail('notAuthorized');
        }
        const currency = p.currency ?? parent?.currency ?? (await loadSettings(db(), ['currency'])).currency;
        if (!isCurrency(currency)) throw fail('currencyInvalid');
        const opening = p.balance ? moneyField(p.balance, currency, 'balance') : 0;
        const row = await db().transaction(async (tx) => {
          const [inserted] = await tx
            .insert(resellers)
            .values({
              name: p.name,
              parentId,
              path: '',
              balance: opening,
              commissionRate: String(p.commission_rate ?? 0),
              currency,
            })
            .returning();
          const [withPath] = await tx
            .update(resellers)
            .set({ path: `${parent?.path ?? '/'}${inserted.id}/` })
            .where(eq(resellers.id, inserted.id))
            .returning();
          if (opening > 0) {
            await recordTransaction(tx, {
              type: 'reseller_credit',
              amount: opening,
              currency,
              resellerId: inserted.id,
              notes: 'opening balance',
              createdBy: auth.managerId,
            });
          }
          await recordAudit(tx, auth, {
            action: 'reseller.create',
            entity: 'reseller',
            entityId: withPath.id,
            resellerId: withPath.id,
            details: changedFields(null, withPath),
          });
          return withPath;
        });
        return { data: resellerView(row) };
      },
    },

    list: {
      rest: 'GET /api/resellers',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller (its own tree)',
        summary: 'List resellers in scope',
        tag: 'resellers',
        query: listResellersQuery,
      },
      async handler(ctx: Ctx<ListResellersInput>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const { page, limit, offset } = pageOf(ctx.params);
        const scope = await scopeFor(db(), auth, 'read');
        const where = and(
          inScope(scope, resellers.id),
          ctx.params.parent_id ? eq(resellers.parentId, ctx.params.parent_id) : undefined,
        );
        const rows = await db()
          .select()
          .from(resellers)
          .where(where)
          .orderBy(asc(resellers.id))
          .limit(limit)
          .offset(offset);
        const [{ total }] = await db().select({ total: count() }).from(resellers).where(where);
        return { data: rows.map(resellerView), pagination: { page, limit, total } };
      },
    },

    get: {
      rest: 'GET /api/resellers/:id',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller (its own tree)',
        summary: 'One reseller',
        tag: 'resellers',
        params: idParams(),
        errors: { 403: "Outside the caller's tree", 404: FAILURES.resellerNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        return {
          data: resellerView(
            await recordInScope(db(), auth, 'read', await loadReseller(ctx.params.id), 'resellerNotFound'),
          ),
        };
      },
    },

    update: {
      rest: 'PUT /api/resellers/:id',
      http: {
        auth: 'jwt',
        access: 'admin, or an ancestor reseller',
        summary: 'Update name, commission rate or currency',
        tag: 'resellers',
        params: idParams(),
        body: updateResellerBody,
        errors: {
          403: "Outside the caller's tree, or a reseller editing itself",
          404: FAILURES.resellerNotFound.message,
        },
      },
      async handler(ctx: Ctx<IdPath & UpdateResellerInput>): Promise<ActionResult> {
        const current = await loadForAncestorWrite(authOf(ctx), ctx.params.id);
        const p = ctx.params;
        if (p.currency && p.currency !== current.currency && !isCurrency(p.currency)) throw fail('currencyInvalid');
        const row = await db().transaction(async (tx) => {
          // The balance is read under the lock: a credit committed after the read above must stop a
          // change of currency, or the ledger's amounts would be read in the new one.
          const locked = (await lockResellers(tx, [current.id])).get(current.id)!;
          if (p.currency && p.currency !== locked.currency && locked.balance !== 0)
            throw fail('currencyChangeNeedsZeroBalance');
          const [updated] = await tx
            .update(resellers)
            .set({
              name: p.name ?? locked.name,
              commissionRate: p.commission_rate === undefined ? locked.commissionRate : String(p.commission_rate),
              currency: p.currency ?? locked.currency,
              updatedAt: sql`now()`,
            })
            .where(eq(resellers.id, current.id))
            .returning();
          await recordAudit(tx, ctx.meta.auth, {
            action: 'reseller.update',
            entity: 'reseller',
            entityId: updated.id,
            resellerId: updated.id,
            details: changedFields(locked, updated),
          });
          return updated;
        });
        return { data: resellerView(row) };
      },
    },

    adjustBalance: {
      rest: 'POST /api/resellers/:id/balance',
      http: {
        auth: 'jwt',
        access: 'admin (credit or debit), or an ancestor reseller (transfer from its own balance)',
        summary: 'Credit (positive) or debit (negative) a reseller balance through the ledger',
        tag: 'resellers',
        params: idParams(),
        body: adjustBalanceBody,
        errors: {
          402: 'Insufficient balance (debit below zero, or a transfer the caller cannot fund)',
          403: "Outside the caller's tree",
          404: FAILURES.resellerNotFound.message,
        },
      },
      async handler(ctx: Ctx<IdPath & AdjustBalanceInput>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const target = await loadForAncestorWrite(auth, ctx.params.id);
        if (ctx.params.amount === 0) throw fail('amountZero');
        // An ancestor reseller moves money between its own balance and the child's; an admin creates it.
        const source = auth.role === 'admin' ? null : auth.resellerId;
        const row = await db().transaction(async (tx) => {
          const locked = await lockResellers(tx, source === null ? [target.id] : [target.id, source]);
          const t = locked.get(target.id)!;
          // In minor units of the currency as locked, the one the ledger row records.
          const amount = moneyField(ctx.params.amount, t.currency, 'amount');
          if (t.balance + amount < 0) throw fail('insufficientBalance');
          if (source !== null) {
            const s = locked.get(source)!;
            if (s.currency !== t.currency) throw fail('transferCurrencyMismatch');
            if (s.balance - amount < 0) throw fail('insufficientBalance');
            await tx
              .update(resellers)
              .set({ balance: s.balance - amount, updatedAt: sql`now()` })
              .where(eq(resellers.id, s.id));
            await recordTransaction(tx, {
              type: amount > 0 ? 'reseller_debit' : 'reseller_credit',
              amount: -amount,
              currency: s.currency,
              resellerId: s.id,
              notes: ctx.params.notes ?? `transfer to ${t.name} (#${t.id})`,
              createdBy: auth.managerId,
            });
          }
          const [updated] = await tx
            .update(resellers)
            .set({ balance: t.balance + amount, updatedAt: sql`now()` })
            .where(eq(resellers.id, t.id))
            .returning();
          const from = source === null ? undefined : locked.get(source)!;
          const transactionId = await recordTransaction(tx, {
            type: amount > 0 ? 'reseller_credit' : 'reseller_debit',
            amount,
            currency: t.currency,
            resellerId: t.id,
            notes: ctx.params.notes ?? (from ? `transfer from ${from.name} (#${from.id})` : null),
            createdBy: auth.managerId,
          });
          // A transfer names its source: the caller's own balance moved by the same amount.
          await recordAudit(tx, auth, {
            action: source === null ? 'reseller.balance' : 'reseller.transfer',
            entity: 'reseller',
            entityId: t.id,
            resellerId: t.id,
            details: {
              ...changedFields({ balance: t.balance }, { balance: updated.balance }),
              transaction_id: transactionId,
              ...(source === null ? {} : { from_reseller_id: source }),
            },
          });
          return { reseller: updated, transactionId };
        });
        return { data: { ...resellerView(row.reseller), transaction_id: row.transactionId } };
      },
    },

    setServiceLimit: {
      rest: 'POST /api/resellers/:id/service-limits',
      http: {
        auth: 'jwt',
        access: 'admin, or an ancestor reseller for plans it holds itself',
        summary: 'Allow a plan for a reseller, optionally capping its subscribers on it',
        tag: 'resellers',
        params: idParams(),
        body: serviceLimitBody,
        errors: {
          400: 'service_id not found',
          403: "Outside the caller's tree",
          404: FAILURES.resellerNotFound.message,
        },
      },
      async handler(ctx: Ctx<IdPath & ServiceLimitInput>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const target = await loadForAncestorWrite(auth, ctx.params.id);
        const [plan] = await db()
          .select({ id: services.id })
          .from(services)
          .where(and(eq(services.id, ctx.params.service_id), sql`${services.deletedAt} is null`));
        if (!plan) throw fail('referenceNotFound', 'service_id');
        if (auth.role !== 'admin') {
          const [own] = await db()
            .select({ id: resellerServiceLimits.id })
            .from(resellerServiceLimits)
            .where(
              and(eq(resellerServiceLimits.resellerId, auth.resellerId!), eq(resellerServiceLimits.serviceId, plan.id)),
            );
          if (!own) throw fail('planNotHeld');
        }
        const row = await db().transaction(async (tx) => {
          const [limit] = await tx
            .insert(resellerServiceLimits)
            .values({ resellerId: target.id, serviceId: plan.id, maxSubscribers: ctx.params.max_subscribers ?? null })
            .onConflictDoUpdate({
              target: [resellerServiceLimits.resellerId, resellerServiceLimits.serviceId],
              set: { maxSubscribers: ctx.params.max_subscribers ?? null },
            })
            .returning();
          await recordAudit(tx, auth, {
            action: 'reseller.service_limit',
            entity: 'reseller',
            entityId: target.id,
            resellerId: target.id,
            details: { service_id: limit.serviceId, max_subscribers: limit.maxSubscribers },
          });
          return limit;
        });
        return {
          data: { reseller_id: row.resellerId, service_id: row.serviceId, max_subscribers: row.maxSubscribers },
        };
      },
    },

    listServiceLimits: {
      rest: 'GET /api/resellers/:id/service-limits',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller (its own tree)',
        summary: 'Plans allowed for a reseller',
        tag: 'resellers',
        params: idParams(),
        errors: { 403: "Outside the caller's tree", 404: FAILURES.resellerNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const target = await recordInScope(db(), auth, 'read', await loadReseller(ctx.params.id), 'resellerNotFound');
        const rows = await db()
          .select({
            serviceId: resellerServiceLimits.serviceId,
            maxSubscribers: resellerServiceLimits.maxSubscribers,
            name: services.name,
          })
          .from(resellerServiceLimits)
          .innerJoin(services, eq(services.id, resellerServiceLimits.serviceId))
          .where(eq(resellerServiceLimits.resellerId, target.id))
          .orderBy(asc(resellerServiceLimits.serviceId));
        return {
          data: rows.map((r) => ({
            reseller_id: target.id,
            service_id: r.serviceId,
            service_name: r.name,
            max_subscribers: r.maxSubscribers,
          })),
        };
      },
    },
  },
};
