/**
 * The subscriber's own writes at /api/my (docs/self-care.md): renew, data top-up, card, plan change
 * and password. Each calls the operators' action for the signed-in subscriber's id only, as the
 * subscriber (audit actor `subscriber`), so the rules, the money, the RADIUS rows, the webhooks and
 * the restoring of a blocked account are exactly the operators'.
 */
import type { Context, ServiceActionsSchema } from 'moleculer';
import type { Auth } from '../../shared/auth/claims';
import { FAILURES, fail } from '../../shared/failures';
import { IPV6_POOL_CONFLICTS } from '../../shared/access/ipv6-pools';
import type { Ctx } from '../../shared/http/context';
import { isRawJson, type ActionResult } from '../../shared/http/route';
import { idSchema, object, subscriberPassword, type Infer } from '../../shared/http/schemas';
import { account } from './reads';
import { mine } from './account.actions';
import { actorFor, callerOf } from './caller';
import { renewalCovered, requireSelfServicePlan, selfServicePlans, topupOffer } from './changes';
import { auditFailure, passwordMatches, signInLimits, tokenFor } from './sign-in';
import { requireSelfCare } from './switches';
import { db } from '../../shared/db/client';
import { sql } from 'drizzle-orm';

const topupBody = object({ gb: { type: 'number', exclusiveMinimum: 0, maximum: 100000 } }, ['gb']);
const redeemBody = object({ pin: { type: 'string', minLength: 1, maxLength: 40 } }, ['pin']);
const planQuery = object({ service_id: idSchema }, ['service_id']);
const planBody = object({ service_id: idSchema }, ['service_id']);
const passwordBody = object({ current_password: subscriberPassword, new_password: subscriberPassword }, [
  'current_password',
  'new_password',
]);

type Data<T> = { data: T };

/** Calls an operators' action as the subscriber; an answer the action serialised itself is parsed. */
async function asMe<T>(ctx: Ctx<unknown>, action: string, params: Record<string, unknown>, auth: Auth): Promise<T> {
  const result = await (ctx as Context<unknown>).call<unknown, Record<string, unknown>>(action, params, {
    meta: { auth },
  });
  return (isRawJson(result) ? JSON.parse(result.$rawJson) : result) as T;
}

export const changeActions: ServiceActionsSchema = {
  renew: {
    rest: 'POST /api/my/renew',
    http: mine(
      'Renew now: from the wallet when it covers the price, otherwise a checkout for the price (data.url) whose payment renews',
      {
        body: object({}),
        errors: {
          402: `${FAILURES.walletShort.message}; ${FAILURES.insufficientBalance.message}`,
          409: `${FAILURES.renewedToday.message}; ${FAILURES.paymentsNotConfigured.message}; ${FAILURES.nothingToPay.message}; ${FAILURES.accountInactive.message}`,
        },
      },
    ),
    async handler(ctx: Ctx): Promise<ActionResult> {
      const me = callerOf(ctx);
      const s = await requireSelfCare('self_care_renew', ['default_tax_rate', 'currency', 'self_care_payments']);
      if (!(await renewalCovered(me.subscriberId, s))) {
        // With online payment turned off the wallet is all there is.
        if (!s.self_care_payments) throw fail('walletShort');
        const checkout = await asMe<{ id: number; url: string }>(
          ctx,
          'payments.checkout',
          { purpose: 'renewal', subscriberId: me.subscriberId },
          actorFor(ctx),
        );
        return { data: { renewed: false, checkout_id: checkout.id, url: checkout.url } };
      }
      const done = await asMe<Data<{ expiry_date: string; invoice_id: number }>>(
        ctx,
        'subscribers.renewFromWallet',
        { id: me.subscriberId },
        actorFor(ctx),
      );
      return {
        data: { renewed: true, expiry_date: done.data.expiry_date, invoice_id: done.data.invoice_id },
      };
    },
  },

  topups: {
    rest: 'GET /api/my/topup-data',
    http: mine('The data top-ups the operator offers, priced in the system currency, paid from the wallet'),
    async handler(ctx: Ctx): Promise<ActionResult> {
      callerOf(ctx);
      const s = await requireSelfCare('self_care_topup', ['self_care_data_topups', 'currency', 'default_tax_rate']);
      return { data: s.self_care_data_topups.map((o) => ({ gb: o.gb, price: o.price, currency: s.currency })) };
    },
  },

  topupData: {
    rest: 'POST /api/my/topup-data',
    http: mine('Buy an offered data top-up from the wallet: an invoice paid from the wallet, then the extra quota', {
      body: topupBody,
      errors: {
        400: FAILURES.topupNotOffered.message,
        402: FAILURES.walletShort.message,
        409: FAILURES.accountInactive.message,
      },
    }),
    async handler(ctx: Ctx<Infer<typeof topupBody>>): Promise<ActionResult> {
      const me = callerOf(ctx);
      const s = await requireSelfCare('self_care_topup', ['self_care_data_topups', 'currency', 'default_tax_rate']);
      const offer = topupOffer(s, ctx.params.gb);
      // One transaction under the subscriber's lock: the wallet checked, the invoice made and paid,
      // the quota added (three calls before: a purchase racing another failed half-way).
      const bought = await asMe<Data<{ invoice_id: number }>>(
        ctx,
        'subscribers.buyTopupFromWallet',
        { id: me.subscriberId, gb: offer.gb, price_minor: offer.priceMinor },
        actorFor(ctx),
      );
      return { data: { gb: offer.gb, invoice_id: bought.data.invoice_id, account: await account(me.subscriberId) } };
    },
  },

  redeemCard: {
    rest: 'POST /api/my/redeem-card',
    http: mine(
      "Redeem a recharge card on my account: the operators' redemption with its limits (a money card credits the wallet, a plan card renews)",
      {
        body: redeemBody,
        errors: {
          400: FAILURES.cardPinInvalid.message,
          409: `${FAILURES.cardUsed.message}; ${FAILURES.cardSuspended.message}; ${FAILURES.cardExpired.message}; ${FAILURES.cardPlanCurrency.message('<plan currency>', '<card currency>')}; ${FAILURES.accountInactive.message}`,
          429: FAILURES.redeemLocked.message,
        },
      },
    ),
    async handler(ctx: Ctx<Infer<typeof redeemBody>>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare('self_care_redeem');
      const r = await asMe<Data<Record<string, unknown>>>(
        ctx,
        'cards.redeem',
        { id: me.subscriberId, pin: ctx.params.pin },
        actorFor(ctx),
      );
      return { data: { ...r.data, account: await account(me.subscriberId) } };
    },
  },

  plans: {
    rest: 'GET /api/my/plans',
    http: mine('The plans I may move to (marked self-service by the operator), and my own marked current'),
    async handler(ctx: Ctx): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare('self_care_change_plan');
      return { data: await selfServicePlans(me.subscriberId) };
    },
  },

  changePlanPreview: {
    rest: 'GET /api/my/change-plan',
    http: mine('What moving to a self-service plan would cost now: the prorated quote, nothing changed', {
      query: planQuery,
      errors: {
        403: FAILURES.planNotSelfService.message,
        409: `${FAILURES.ownPriceNoSelfService.message}; ${FAILURES.planChangeBeyondPeriod.message('<n>', '<n>')}`,
      },
    }),
    async handler(ctx: Ctx<Infer<typeof planQuery>>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare('self_care_change_plan');
      await requireSelfServicePlan(me.subscriberId, ctx.params.service_id);
      return asMe<ActionResult>(
        ctx,
        'subscribers.changeServicePrice',
        { id: me.subscriberId, service_id: ctx.params.service_id },
        actorFor(ctx),
      );
    },
  },

  changePlan: {
    rest: 'POST /api/my/change-plan',
    http: mine(
      'Move to a self-service plan: the prorated net due is invoiced (or credited to the wallet), as the preview showed',
      {
        body: planBody,
        errors: {
          403: FAILURES.planNotSelfService.message,
          409: `${FAILURES.ownPriceNoSelfService.message}; ${FAILURES.planChangeBeyondPeriod.message('<n>', '<n>')}; ${FAILURES.accountInactive.message}; ${FAILURES.ownPriceCurrency.message('<currency>', '<currency>')}; ${FAILURES.serviceChangeRefundCurrency.message('<currency>', '<currency>')}; ${IPV6_POOL_CONFLICTS}`,
        },
      },
    ),
    async handler(ctx: Ctx<Infer<typeof planBody>>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare('self_care_change_plan');
      await requireSelfServicePlan(me.subscriberId, ctx.params.service_id);
      await asMe(
        ctx,
        'subscribers.changeService',
        { id: me.subscriberId, service_id: ctx.params.service_id, charge_difference: true },
        actorFor(ctx),
      );
      return { data: await account(me.subscriberId) };
    },
  },

  password: {
    rest: 'POST /api/my/password',
    http: mine(
      'Change my PPPoE password (the create rules): the live session is disconnected so the new one applies, every earlier token ends, and a fresh token is returned',
      {
        body: passwordBody,
        errors: { 400: FAILURES.currentPasswordWrong.message, 429: FAILURES.loginLocked.message },
      },
    ),
    async handler(ctx: Ctx<Infer<typeof passwordBody>>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare('self_care_password');
      const { rows } = await db().execute<{ username: string; password_enc: string }>(
        sql`select username, password_enc from subscribers where id = ${me.subscriberId} and deleted_at is null`,
      );
      if (!rows[0]) throw fail('subscriberNotFound');
      // A wrong current password is a guess like a wrong sign-in: counted first, under the same limits.
      const attempt = await signInLimits().start(ctx, rows[0].username);
      if (!passwordMatches(ctx.params.current_password, rows[0].password_enc)) {
        await auditFailure(ctx, 'self_care.login_failed', rows[0].username, me.subscriberId);
        throw fail('currentPasswordWrong');
      }
      await attempt.giveBack();
      const auth = actorFor(ctx);
      await asMe(ctx, 'subscribers.update', { id: me.subscriberId, password: ctx.params.new_password }, auth);
      try {
        await asMe(ctx, 'networkAccess.disconnect', { id: me.subscriberId }, auth);
      } catch (err) {
        // The password is changed; the session ends at its next re-authentication at the latest.
        ctx.service?.logger.warn(`self-care: disconnect after a password change failed: ${(err as Error).message}`);
      }
      const { rows: after } = await db().execute<{ password_enc: string }>(
        sql`select password_enc from subscribers where id = ${me.subscriberId}`,
      );
      return { data: tokenFor({ id: me.subscriberId, passwordEnc: after[0].password_enc }) };
    },
  },
};
