/**
 * The subscriber's own account at /api/my (docs/self-care.md): reads scoped by the signed-in id in
 * SQL (reads.ts), the auto-renew switch and online payment through the operators' own actions.
 */
import type { Readable } from 'node:stream';
import type { ServiceActionsSchema } from 'moleculer';
import { FAILURES } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult, HttpRoute } from '../../shared/http/route';
import { idParams, object, paginationProperties, type IdPath, type Infer } from '../../shared/http/schemas';
import { INVOICE_STATUSES } from '../../shared/domain/invoice-state';
import { PAPER_NAMES } from '../../shared/paper';
import { actorFor, callerOf } from './caller';
import { account, invoiceDetail, invoiceList, notificationList, ownInvoice, paymentHistory, usage } from './reads';
import { TAG } from './sign-in.actions';
import { requireSelfCare } from './switches';

const pageQuery = object(paginationProperties);
type PageQuery = Infer<typeof pageQuery>;
const invoicesQuery = object({ ...paginationProperties, status: { type: 'string', enum: [...INVOICE_STATUSES] } });
const accountBody = object({ auto_renew: { type: 'boolean' } }, ['auto_renew']);
const pdfQuery = object({ paper: { type: 'string', enum: [...PAPER_NAMES] } });

const OFF = FAILURES.selfCareDisabled.message;

/** A route of the signed-in subscriber. */
export function mine(summary: string, extra: Partial<HttpRoute> = {}): HttpRoute {
  return {
    auth: 'subscriber',
    access: 'subscriber (own account only)',
    summary,
    tag: TAG,
    ...extra,
    errors: { 403: `${OFF}, or the feature is`, ...(extra.errors ?? {}) },
  };
}

export const accountActions: ServiceActionsSchema = {
  account: {
    rest: 'GET /api/my/account',
    http: mine(
      "Plan, status, expiry and days left, blocked reason, wallet, auto-renew, and the operator's contact and how-to-pay",
    ),
    async handler(ctx: Ctx): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare();
      return { data: await account(me.subscriberId) };
    },
  },

  setAutoRenew: {
    rest: 'PUT /api/my/account',
    http: mine('Turn auto-renew (from the wallet at expiry) on or off', { body: accountBody }),
    async handler(ctx: Ctx<Infer<typeof accountBody>>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare('self_care_auto_renew');
      await ctx.call(
        'subscribers.update',
        { id: me.subscriberId, auto_renew: ctx.params.auto_renew },
        { meta: { auth: actorFor(ctx) } },
      );
      return { data: await account(me.subscriberId) };
    },
  },

  usage: {
    rest: 'GET /api/my/usage',
    http: mine(
      'Today and this month against the quotas, the FUP tier, 30 days of daily usage, the current session and the last ones',
    ),
    async handler(ctx: Ctx): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare();
      return { data: await usage(me.subscriberId) };
    },
  },

  invoices: {
    rest: 'GET /api/my/invoices',
    http: mine('My invoices, newest first', { query: invoicesQuery }),
    async handler(ctx: Ctx<Infer<typeof invoicesQuery>>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare();
      return invoiceList(me.subscriberId, ctx.params);
    },
  },

  invoice: {
    rest: 'GET /api/my/invoices/:id',
    http: mine('One of my invoices with its lines and payments', {
      params: idParams(),
      errors: { 404: FAILURES.invoiceNotFound.message },
    }),
    async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare();
      return { data: await invoiceDetail(me.subscriberId, ctx.params.id) };
    },
  },

  invoicePdf: {
    rest: 'GET /api/my/invoices/:id/pdf',
    http: mine('One of my invoices as a PDF', {
      params: idParams(),
      query: pdfQuery,
      produces: 'pdf',
      errors: { 404: FAILURES.invoiceNotFound.message, 503: 'the PDF renderer is busy or down' },
    }),
    async handler(ctx: Ctx<IdPath & Infer<typeof pdfQuery>>): Promise<Readable | Buffer> {
      const me = callerOf(ctx);
      await requireSelfCare();
      await ownInvoice(me.subscriberId, ctx.params.id);
      return ctx.call(
        'invoice-documents.pdf',
        { id: ctx.params.id, ...(ctx.params.paper ? { paper: ctx.params.paper } : {}) },
        { meta: { auth: actorFor(ctx) } },
      );
    },
  },

  payInvoice: {
    rest: 'POST /api/my/invoices/:id/pay',
    http: mine("A checkout at the payment provider for my invoice's balance: open `url` to pay", {
      params: idParams(),
      body: object({}),
      errors: {
        404: FAILURES.invoiceNotFound.message,
        409: `${FAILURES.paymentsNotConfigured.message}; ${FAILURES.nothingToPay.message}`,
        502: 'the provider refused or failed',
      },
    }),
    async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare('self_care_payments');
      await ownInvoice(me.subscriberId, ctx.params.id);
      const checkout = await ctx.call<{ id: number; url: string }, unknown>('payments.checkout', {
        purpose: 'invoice',
        invoiceId: ctx.params.id,
      });
      return { data: { checkout_id: checkout.id, url: checkout.url } };
    },
  },

  payments: {
    rest: 'GET /api/my/payments',
    http: mine('Payments made on my invoices, newest first', { query: pageQuery }),
    async handler(ctx: Ctx<PageQuery>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare();
      return paymentHistory(me.subscriberId, ctx.params);
    },
  },

  notifications: {
    rest: 'GET /api/my/notifications',
    http: mine('The reminders and messages sent to me, newest first', { query: pageQuery }),
    async handler(ctx: Ctx<PageQuery>): Promise<ActionResult> {
      const me = callerOf(ctx);
      await requireSelfCare();
      return notificationList(me.subscriberId, ctx.params);
    },
  },
};
