/**
 * Subscribers: records (list, read, create, update, delete) and the single actions of spec 4.2.
 * Each single action runs the same set-based operation as its bulk counterpart (operations.ts)
 * over one locked row, then answers with the updated subscriber.
 */
import { and, asc, eq, gte, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { recordInScope, requirePermission } from '../../shared/auth/policy';
import { decrypt } from '../../shared/auth/secrets';
import { db } from '../../shared/db/client';
import { dailyUsage, nas, resellers, services, subscribers } from '../../shared/db/schema';
import { creditWallet, quoteServiceChange } from '../../shared/billing';
import { addDays, todayIso } from '../../shared/domain/subscriber';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { fromMinor, moneyField } from '../../shared/money';
import { loadSettings } from '../../shared/settings';
import * as ops from './operations';
import { planView, resellerView } from '../../shared/views';
import { kickChanged, syncAccessRows } from '../../shared/access/radius-rows';
import { IPV6_POOL_CONFLICTS } from '../../shared/access/ipv6-pools';
import { listSubscribers, type ListParams } from './subscriber-list';
import { plansById, renewalView, subscriberView } from './subscriber-view';
import {
  addBalanceBody,
  addDaysBody,
  changePriceQuery,
  changeServiceBody,
  createBody,
  listQuery,
  renameBody,
  topupBody,
  updateBody,
} from './subscriber-schemas';
import type { CreateSubscriberInput, UpdateSubscriberInput } from './subscriber-schemas';
import { idParams, type IdPath, type Infer } from '../../shared/http/schemas';
import { checkUsername } from './field-checks';
import { livePlan, loadRow } from './subscriber-rows';
import { authorizeSingle, runAuthorized, runSingle, simpleAction } from './single-action';
import { createSubscriber } from './use-cases/create-subscriber';
import { updateSubscriber } from './use-cases/update-subscriber';
import { governedFieldsText } from './governed-fields';
import { removeSubscriberPermanently } from './use-cases/remove-subscriber-permanently';
import { FAILURES, failure } from '../../shared/failures';
import { normaliseStoredPhones } from './phone-backfill';
import { lastRouterAction } from './router-outcomes';

export const subscribersService: ServiceSchema = {
  name: 'subscribers',
  async started() {
    const changed = await normaliseStoredPhones(db());
    if (changed) this.logger.info('stored phones normalised to E.164', { changed });
  },
  actions: {
    list: {
      rest: 'GET /api/subscribers',
      http: {
        auth: 'jwt',
        access: 'subscribers.view',
        summary: 'List subscribers in scope with filters, search and sort',
        tag: 'subscribers',
        query: listQuery,
        errors: { 403: "Permission denied, or reseller_id outside the caller's tree" },
      },
      async handler(ctx: Ctx<ListParams>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.view');
        return listSubscribers(auth, ctx.params);
      },
    },

    get: {
      rest: 'GET /api/subscribers/:id',
      http: {
        auth: 'jwt',
        access: 'subscribers.view',
        summary: 'One subscriber with service, reseller, counters, password and daily_breakdown',
        tag: 'subscribers',
        params: idParams(),
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.view');
        const row = await recordInScope(db(), auth, 'read', await loadRow(ctx.params.id), 'subscriberNotFound');
        const [plan] = await db().select().from(services).where(eq(services.id, row.serviceId));
        const [reseller] = await db().select().from(resellers).where(eq(resellers.id, row.resellerId));
        const since = addDays(todayIso(), -30);
        const usage = await db()
          .select({ date: dailyUsage.date, downloadBytes: dailyUsage.downloadBytes })
          .from(dailyUsage)
          .where(and(eq(dailyUsage.subscriberId, row.id), gte(dailyUsage.date, since)))
          .orderBy(asc(dailyUsage.date));
        const view = subscriberView(row, plan.currency);
        const { default_tax_rate: taxRate } = await loadSettings(db(), ['default_tax_rate']);
        const [lastNas] =
          row.lastNasId === null
            ? []
            : await db().select({ name: nas.shortname }).from(nas).where(eq(nas.id, row.lastNasId));
        const effective = (own: string | null, planned: string | null) =>
          (own ?? planned) === null ? null : Number(own ?? planned);
        return {
          data: {
            ...view,
            last_nas_name: lastNas?.name ?? null,
            last_router_action: await lastRouterAction(db(), row.id),
            renewal: renewalView(row, plan, taxRate),
            service: planView(plan),
            reseller: resellerView(reseller),
            counters: {
              daily_quota_used: row.dailyQuotaUsed,
              monthly_quota_used: row.monthlyQuotaUsed,
              daily_quota_gb: effective(row.dailyQuotaGb, plan.dailyQuotaGb),
              monthly_quota_gb: effective(row.monthlyQuotaGb, plan.monthlyQuotaGb),
              extra_quota_bytes: row.extraQuotaBytes,
              fup_level: row.fupLevel,
              wallet_balance: view.wallet_balance,
            },
          },
          password: decrypt(row.passwordEnc),
          daily_breakdown: usage.map((u) => ({ date: u.date, download_bytes: u.downloadBytes })),
        };
      },
    },

    create: {
      rest: 'POST /api/subscribers',
      http: {
        auth: 'jwt',
        access: 'subscribers.create',
        summary: 'Create a subscriber with its FreeRADIUS rows',
        tag: 'subscribers',
        success: 201,
        body: createBody,
        errors: {
          400: 'service_id not found, or a field is invalid',
          403: FAILURES.noServiceLimit.message,
          409: `username already exists, or static_ip already used; ${IPV6_POOL_CONFLICTS}`,
        },
      },
      async handler(ctx: Ctx<CreateSubscriberInput>): Promise<ActionResult> {
        return { data: await createSubscriber(ctx.meta.auth, ctx.params) };
      },
    },

    update: {
      rest: 'PUT /api/subscribers/:id',
      http: {
        auth: 'jwt',
        access: `subscribers.edit (a field that another action governs needs that action's permission too when its value changes; sent unchanged it needs none. ${governedFieldsText()})`,
        summary: 'Update any subset of the create fields; unknown fields are dropped',
        tag: 'subscribers',
        params: idParams(),
        body: updateBody,
        dropUnknown: true,
        errors: {
          400: 'service_id not found, or a field is invalid',
          403: `${FAILURES.permissionRequired.message('<name>')}, or ${FAILURES.notAuthorized.message}`,
          404: FAILURES.subscriberNotFound.message,
          409: `username already exists, or static_ip already used; ${FAILURES.ownPriceCurrency.message('<currency>', '<currency>')}; ${IPV6_POOL_CONFLICTS}`,
        },
      },
      async handler(ctx: Ctx<UpdateSubscriberInput & IdPath>): Promise<ActionResult> {
        return { data: await updateSubscriber(ctx.meta.auth, ctx.params) };
      },
    },

    remove: {
      rest: 'DELETE /api/subscribers/:id',
      http: {
        auth: 'jwt',
        access: 'subscribers.delete',
        summary: 'Soft delete: the username becomes reusable and the FreeRADIUS rows are removed',
        tag: 'subscribers',
        params: idParams(),
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        return { data: await runSingle(ctx.meta.auth, 'subscribers.delete', ctx.params.id, ops.softDelete, {}) };
      },
    },

    removePermanently: {
      rest: 'DELETE /api/subscribers/:id/permanent',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Hard delete: everything but the ledger, invoices and accounting history',
        tag: 'subscribers',
        params: idParams(),
        errors: { 403: 'Not an admin', 404: FAILURES.subscriberNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        return { data: await removeSubscriberPermanently(ctx.meta.auth, ctx.params) };
      },
    },

    renew: simpleAction(
      'renew',
      'subscribers.renew',
      ops.renew,
      'Charge the reseller, extend expiry by the plan duration, reset counters, create the renewal invoice, reconnect',
      { 402: FAILURES.insufficientBalance.message, 409: FAILURES.renewedToday.message },
    ),
    /**
     * A renewal only the wallet may pay (not routed): self-care's renew, an online renewal payment and
     * a money card's auto-renew call it, as `renew` but 402 `wallet balance does not cover the price`.
     * `checkout_id` (an online renewal payment): the renewal clears its `renewal_due` in the same
     * transaction, and is 409 `this payment's renewal is already made` when it is clear already.
     */
    renewFromWallet: {
      visibility: 'public',
      async handler(ctx: Ctx<IdPath & { checkout_id?: number }>): Promise<ActionResult> {
        const payload = { checkoutId: ctx.params.checkout_id };
        return {
          data: await runSingle(ctx.meta.auth, 'subscribers.renew', ctx.params.id, ops.renewFromWallet, payload),
        };
      },
    },
    /** A plan card's period (not routed): `{ id, service_id }`, moved onto the plan and renewed, or neither. */
    renewOnCardPlan: {
      visibility: 'public',
      async handler(ctx: Ctx<IdPath & { service_id: number }>): Promise<ActionResult> {
        const auth = await authorizeSingle(ctx.meta.auth, 'subscribers.renew', ctx.params.id);
        const plan = await livePlan(db(), ctx.params.service_id);
        return {
          data: await runAuthorized(
            auth,
            ctx.params.id,
            (env, rows) => ops.renewOnCardPlan(env, rows, { plan }),
            { service_id: plan.id, prepaid_card: true },
            'renew',
          ),
        };
      },
    },
    resetFup: simpleAction(
      'reset-fup',
      'subscribers.reset_fup',
      ops.resetFup,
      'Daily quota counter and FUP tier to 0 (monthly untouched)',
    ),
    resetMac: simpleAction(
      'reset-mac',
      'subscribers.reset_mac',
      ops.resetMac,
      'Clear the bound MAC so the next connection rebinds',
    ),
    activate: simpleAction('activate', 'subscribers.inactivate', ops.enable, 'Status active'),
    deactivate: simpleAction(
      'deactivate',
      'subscribers.inactivate',
      ops.disable,
      'Status inactive; FreeRADIUS refuses it; disconnect queued',
    ),
    refill: simpleAction(
      'refill',
      'subscribers.refill_quota',
      ops.refill,
      'Reset daily and monthly counters; charge the refill fee to the reseller',
      { 402: FAILURES.insufficientBalance.message },
    ),

    rename: {
      rest: 'POST /api/subscribers/:id/rename',
      http: {
        auth: 'jwt',
        access: 'subscribers.rename',
        summary: 'Change the username everywhere it is stored; charges the rename fee to the reseller',
        tag: 'subscribers',
        params: idParams(),
        body: renameBody,
        errors: {
          400: FAILURES.newUsernameInvalid.message,
          402: FAILURES.insufficientBalance.message,
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
          409: FAILURES.usernameTaken.message,
        },
      },
      async handler(ctx: Ctx<IdPath & Infer<typeof renameBody>>): Promise<ActionResult> {
        checkUsername(ctx.params.new_username, 'new_username');
        const op = ops.rename(() => ctx.params.new_username, failure('newUsernameInvalid'));
        return { data: await runSingle(ctx.meta.auth, 'subscribers.rename', ctx.params.id, op, {}) };
      },
    },

    addDays: {
      rest: 'POST /api/subscribers/:id/add-days',
      http: {
        auth: 'jwt',
        access: 'subscribers.add_days',
        summary: 'Extend expiry_date without a payment (audited with the reason)',
        tag: 'subscribers',
        params: idParams(),
        body: addDaysBody,
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message },
      },
      async handler(ctx: Ctx<IdPath & Infer<typeof addDaysBody>>): Promise<ActionResult> {
        const { days, reason } = ctx.params;
        const addDaysOp: ops.Operation<unknown> = async (env, rows) => {
          const [row] = rows;
          const expiry = addDays(row.expiryDate, days);
          await env.tx
            .update(subscribers)
            .set({ expiryDate: expiry, updatedAt: sql`now()` })
            .where(eq(subscribers.id, row.id));
          await kickChanged(env.tx, await syncAccessRows(env.tx, [row.id], env.today));
          return { failed: [], extra: new Map() };
        };
        // The audit row (runAuthorized's) holds the expiry's before and after and the request's days and reason.
        const payload = { days, reason };
        return { data: await runSingle(ctx.meta.auth, 'subscribers.add_days', ctx.params.id, addDaysOp, payload) };
      },
    },

    changeService: {
      rest: 'POST /api/subscribers/:id/change-service',
      http: {
        auth: 'jwt',
        access: 'subscribers.change_service',
        summary: 'Move to another plan; with charge_difference, invoice the prorated net due or credit the wallet',
        tag: 'subscribers',
        params: idParams(),
        body: changeServiceBody,
        errors: {
          400: 'service_id not found',
          403: 'not authorized, or reseller has no service limit for this plan',
          404: FAILURES.subscriberNotFound.message,
          409: `${FAILURES.ownPriceCurrency.message('<currency>', '<currency>')}; ${FAILURES.serviceChangeRefundCurrency.message('<currency>', '<currency>')}; ${IPV6_POOL_CONFLICTS}`,
        },
      },
      async handler(ctx: Ctx<IdPath & Infer<typeof changeServiceBody>>): Promise<ActionResult> {
        // The plan is checked after the policy, so a missing subscriber is 404 whatever the plan.
        const auth = await authorizeSingle(ctx.meta.auth, 'subscribers.change_service', ctx.params.id);
        const plan = await livePlan(db(), ctx.params.service_id);
        const payload = { plan, charge_difference: ctx.params.charge_difference };
        const audited = { service_id: plan.id, charge_difference: ctx.params.charge_difference };
        return {
          data: await runAuthorized(
            auth,
            ctx.params.id,
            (env, rows) => ops.setService(env, rows, payload),
            audited,
            'change_service',
          ),
        };
      },
    },

    changeServicePrice: {
      rest: 'GET /api/subscribers/:id/calculate-change-service-price',
      http: {
        auth: 'jwt',
        access: 'subscribers.change_service',
        summary: 'Prorated price of a plan change, without committing',
        tag: 'subscribers',
        params: idParams(),
        query: changePriceQuery,
        errors: {
          400: 'service_id not found',
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
        },
      },
      async handler(ctx: Ctx<IdPath & Infer<typeof changePriceQuery>>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.change_service');
        const row = await recordInScope(db(), auth, 'write', await loadRow(ctx.params.id), 'subscriberNotFound');
        const q = await quoteServiceChange(db(), {
          subscriberId: row.id,
          newServiceId: ctx.params.service_id,
          today: todayIso(),
          serviceField: 'service_id',
          // A subscriber's own preview (self-care) is refused as its change would be.
          withinPeriod: auth.subscriberId !== undefined,
        });
        const money = (v: number) => fromMinor(v, q.currency);
        const plans = await plansById(db(), [q.oldServiceId, q.newServiceId]);
        return {
          data: {
            subscriber_id: row.id,
            current_service_id: q.oldServiceId,
            current_service_name: plans.get(q.oldServiceId)?.name ?? null,
            service_id: q.newServiceId,
            service_name: plans.get(q.newServiceId)?.name ?? null,
            currency: q.currency,
            days_remaining: q.daysRemaining,
            old_unused_credit: money(q.oldUnusedCredit),
            new_service_charge: money(q.newServiceCharge),
            net_amount_due: money(q.netAmountDue),
          },
        };
      },
    },

    topupData: {
      rest: 'POST /api/subscribers/:id/topup-data',
      http: {
        auth: 'jwt',
        access: 'subscribers.refill_quota',
        summary: 'Add extra GB on top of the monthly FUP quota',
        tag: 'subscribers',
        params: idParams(),
        body: topupBody,
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message },
      },
      async handler(ctx: Ctx<IdPath & Infer<typeof topupBody>>): Promise<ActionResult> {
        const auth = await authorizeSingle(ctx.meta.auth, 'subscribers.refill_quota', ctx.params.id);
        const data = await runAuthorized(auth, ctx.params.id, ops.topupData, { gb: ctx.params.gb }, 'topup_data');
        // The FUP engine lowers the level now rather than at its next tick (a quota block ends).
        ctx.emit('usage.pending');
        return { data };
      },
    },
    /** A data top-up only the wallet may pay (not routed): self-care's, in one transaction (operations.ts). */
    buyTopupFromWallet: {
      visibility: 'public',
      async handler(ctx: Ctx<IdPath & { gb: number; price_minor: number }>): Promise<ActionResult> {
        const auth = await authorizeSingle(ctx.meta.auth, 'subscribers.refill_quota', ctx.params.id);
        const payload = { gb: ctx.params.gb, priceMinor: ctx.params.price_minor };
        const data = await runAuthorized(auth, ctx.params.id, ops.buyTopupFromWallet, payload, 'topup_data');
        ctx.emit('usage.pending');
        return { data };
      },
    },

    addBalance: {
      rest: 'POST /api/subscribers/:id/add-balance',
      http: {
        auth: 'jwt',
        access: 'subscribers.refill_quota',
        summary: "Credit the subscriber's prepaid wallet",
        tag: 'subscribers',
        params: idParams(),
        body: addBalanceBody,
        errors: {
          400: 'amount has too many decimals',
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
        },
      },
      async handler(ctx: Ctx<IdPath & Infer<typeof addBalanceBody>>): Promise<ActionResult> {
        // The amount is checked after the policy, so a missing subscriber is 404 whatever the amount.
        const auth = await authorizeSingle(ctx.meta.auth, 'subscribers.refill_quota', ctx.params.id);
        const { currency } = await loadSettings(db(), ['currency']);
        const amount = moneyField(ctx.params.amount, currency, 'amount');
        const credit: ops.Operation<unknown> = async (env, rows) => {
          const credit = await creditWallet(env.tx, {
            subscriberId: rows[0].id,
            amount,
            currency,
            reason: 'add-balance',
            createdBy: env.auth.managerId,
          });
          return { failed: [], extra: new Map([[rows[0].id, { transaction_id: credit.transactionId }]]) };
        };
        return { data: await runAuthorized(auth, ctx.params.id, credit, { amount: ctx.params.amount }, 'add_balance') };
      },
    },
  },
};
