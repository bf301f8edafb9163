/**
 * Online payments (issue 27, docs/payments.md): checkouts at a provider for an invoice's balance (the
 * public receipt's Pay button) or a renewal (the portal's), the provider's webhook acted on exactly
 * once, the page the payer returns to, and the reconciliation list.
 */
import { and, desc, eq, gte, lt, sql, type SQL } from 'drizzle-orm';
import type { LoggerInstance, ServiceBroker, ServiceSchema } from 'moleculer';
import { systemAuth } from '../../shared/auth/claims';
import { inScope, requireAdmin, requireAdminOrReseller, scopeFor } from '../../shared/auth/policy';
import { RENEWAL_COLUMNS, renewalParties, type RenewalColumns } from '../../shared/billing';
import { db } from '../../shared/db/client';
import { invoices, onlineCheckouts, paymentEvents } from '../../shared/db/schema';
import { fail, FAILURES } from '../../shared/failures';
import { pageOf, type Ctx } from '../../shared/http/context';
import { publicPageHeaders } from '../../shared/http/public-page';
import type { ActionResult } from '../../shared/http/route';
import { idParams, isoDate, object, paginationProperties, type IdPath, type Infer } from '../../shared/http/schemas';
import { walletCoversRenewal } from '../../shared/domain/subscriber';
import { intVar } from '../../shared/config';
import { fromMinor } from '../../shared/money';
import { verifyPublicToken } from '../../shared/public-links';
import { loadSettings } from '../../shared/settings';
import { canPay, createCheckout, PAYMENT_SETTINGS, type CheckoutTarget } from './checkout';
import { PROVIDER_NAMES, providerNamed } from './providers';
import { NotConfiguredError, SignatureError } from './providers/types';
import { retryDueRenewals, renewPaid } from './renewals';
import { settleEvent, type Outcome } from './settle';

const TAG = 'payments';

const listQuery = object({
  ...paginationProperties,
  from: isoDate,
  to: isoDate,
  status: { type: 'string', enum: ['open', 'paid', 'underpaid', 'mismatch', 'expired', 'failed'] },
});
type ListQuery = Infer<typeof listQuery>;

const eventsQuery = object({
  ...paginationProperties,
  outcome: {
    type: 'string',
    enum: ['paid', 'underpaid', 'mismatch', 'unmatched', 'expired', 'already_paid', 'ignored'],
  },
});
type EventsQuery = Infer<typeof eventsQuery>;

const returnParams = object({ ref: { type: 'string', minLength: 1, maxLength: 100 } }, ['ref']);
const returnQuery = object({ cancelled: { type: 'string', maxLength: 5 } });
type ReturnInput = Infer<typeof returnParams> & Infer<typeof returnQuery>;

const receiptCheckoutQuery = object({ token: { type: 'string', minLength: 1, maxLength: 200 } }, ['token']);
const providerParams = object({ provider: { type: 'string', minLength: 1, maxLength: 40 } }, ['provider']);

/** An auto-renew subscriber whose paid time has ended and whose wallet now pays the renewal whole. */
async function autoRenewDue(subscriberId: number): Promise<boolean> {
  const { rows } = await db().execute<RenewalColumns & { due: boolean }>(sql`
    select s.auto_renew and s.status = 'active' and s.expiry_date < current_date as due, ${RENEWAL_COLUMNS}
      from subscribers s join services p on p.id = s.service_id where s.id = ${subscriberId}`);
  const r = rows[0];
  if (!r?.due) return false;
  const { subscriber, plan } = renewalParties(r);
  return walletCoversRenewal(subscriber, plan, await loadSettings(db(), ['currency', 'default_tax_rate']));
}

/**
 * The renewal auto-renew wallet money now covers (an invoice's payment with excess), through the
 * subscribers unit, from the wallet only: a wallet spent meanwhile renews nothing (402, logged).
 */
async function autoRenewAfter(ctx: Ctx<unknown>, subscriberId: number): Promise<void> {
  if (!(await autoRenewDue(subscriberId))) return;
  const auth = systemAuth('online-payment');
  try {
    await ctx.call('subscribers.renewFromWallet', { id: subscriberId }, { meta: { auth } });
  } catch (err) {
    // The money is in the wallet; the next sweep (auto-renew) or an operator renews.
    ctx.service?.logger.warn(`online payment: renewal of subscriber ${subscriberId} failed: ${(err as Error).message}`);
  }
}

function eventView(e: typeof paymentEvents.$inferSelect) {
  return {
    provider: e.provider,
    event_id: e.eventId,
    type: e.type,
    session_id: e.sessionId,
    checkout_id: e.checkoutId,
    amount: e.amount === null || e.currency === null ? null : fromMinor(e.amount, e.currency),
    currency: e.currency,
    outcome: e.outcome,
    note: e.note,
    received_at: e.receivedAt.toISOString(),
  };
}

function checkoutView(c: typeof onlineCheckouts.$inferSelect) {
  const money = (v: number | null) => (v === null ? null : fromMinor(v, c.currency));
  return {
    id: c.id,
    provider: c.provider,
    provider_session_id: c.providerSessionId,
    purpose: c.purpose,
    invoice_id: c.invoiceId,
    subscriber_id: c.subscriberId,
    reseller_id: c.resellerId,
    amount: fromMinor(c.amount, c.currency),
    currency: c.currency,
    status: c.status,
    provider_event_id: c.providerEventId,
    provider_reference: c.providerReference,
    applied_amount: money(c.appliedAmount),
    wallet_amount: money(c.walletAmount),
    note: c.note,
    renewal_due: c.renewalDue,
    created_at: c.createdAt.toISOString(),
    completed_at: c.completedAt?.toISOString() ?? null,
  };
}

const esc = (v: string) => v.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function redirectTo(ctx: Ctx<unknown>, url: string): string {
  ctx.meta.$statusCode = 303;
  ctx.meta.$responseHeaders = { Location: url, 'Cache-Control': 'no-store' };
  return `<!doctype html><meta charset="utf-8"><a href="${esc(url)}">Continue to payment</a>`;
}

/** What the return page says once the money has been judged, whatever the payer's way back. */
const SETTLED_WORDS: Record<string, string> = {
  paid: 'Payment received. Thank you: your service is restored.',
  underpaid: 'Payment received, but less than the amount due. The operator has been told.',
  mismatch: 'Payment received, but it could not be applied. The operator has been told.',
};

/** The public pages' protections (docs/security.md); the page has no style, image or form. */
const RETURN_PAGE_HEADERS = publicPageHeaders();

/** Outcomes that leave money unapplied or not as asked: logged for the operator besides their row. */
const MISMATCHES: Outcome[] = ['underpaid', 'mismatch', 'unmatched'];

interface PaymentsThis {
  retryTimer?: NodeJS.Timeout;
  retrying?: Promise<unknown>;
  broker: ServiceBroker;
  logger: LoggerInstance;
}

/** How often the due renewals of online payments are retried (renewals.ts); 0: never on its own. */
const RETRY_SECONDS = intVar(process.env, 'PAYMENT_RENEWAL_RETRY_SECONDS', 60, 0);

export const paymentsService: ServiceSchema = {
  name: 'payments',

  started(this: PaymentsThis) {
    if (RETRY_SECONDS <= 0) return;
    this.retryTimer = setInterval(() => {
      if (this.retrying) return;
      this.retrying = this.broker
        .call('payments.retryRenewals')
        .catch((err: unknown) => this.logger.error('retrying online renewals failed', err))
        .finally(() => (this.retrying = undefined));
    }, RETRY_SECONDS * 1000);
    this.retryTimer.unref();
  },

  async stopped(this: PaymentsThis) {
    clearInterval(this.retryTimer);
    await this.retrying;
  },

  actions: {
    /**
     * The sweep of renewals paid online and not yet made (not routed): `{ renewed, already_renewed,
     * not_made, retry, given_up }`. Runs every PAYMENT_RENEWAL_RETRY_SECONDS on payments older than that.
     */
    retryRenewals: {
      visibility: 'public',
      async handler(ctx: Ctx<{ grace_seconds?: number }>): Promise<Record<string, number>> {
        return retryDueRenewals(ctx, ctx.params.grace_seconds ?? RETRY_SECONDS);
      },
    },

    receiptCheckout: {
      rest: 'GET /api/payments/checkout/invoice/:id',
      http: {
        auth: 'public',
        access: 'none (the public receipt link token)',
        summary:
          "The receipt page's Pay link: a checkout for the invoice's balance (the open one reused), answered with a redirect to it",
        tag: TAG,
        params: idParams(),
        query: receiptCheckoutQuery,
        produces: 'html',
        success: 303,
        rateLimit: 'public',
        errors: {
          404: FAILURES.invoiceNotFound.message,
          409: `${FAILURES.paymentsNotConfigured.message}; ${FAILURES.nothingToPay.message}`,
          502: 'the provider refused or failed',
        },
      },
      async handler(ctx: Ctx<IdPath & { token: string }>): Promise<string> {
        const [inv] = await db()
          .select({ hash: invoices.publicTokenHash })
          .from(invoices)
          .where(eq(invoices.id, ctx.params.id));
        // A wrong token is the same 404 as a missing invoice: the link proves nothing else.
        if (!inv || !verifyPublicToken(inv.hash, ctx.params.token)) throw fail('invoiceNotFound');
        const { url } = await createCheckout({ purpose: 'invoice', invoiceId: ctx.params.id });
        return redirectTo(ctx, url);
      },
    },

    /** A checkout for the portal (billing unit) or another service: `{ id, url }`. */
    checkout: {
      visibility: 'public',
      async handler(ctx: Ctx<CheckoutTarget>): Promise<{ id: number; url: string }> {
        return createCheckout(ctx.params);
      },
    },

    /** Whether a Pay button is shown for the target now. */
    canPay: {
      visibility: 'public',
      async handler(ctx: Ctx<CheckoutTarget>): Promise<boolean> {
        return canPay(ctx.params);
      },
    },

    webhook: {
      rest: 'POST /api/payments/webhook/:provider',
      http: {
        auth: 'public',
        access: 'none (the provider signs every request)',
        summary: 'Provider events: verified with the provider signature, acted on exactly once per event',
        tag: TAG,
        params: providerParams,
        rawBody: true,
        rateLimit: 'none',
        errors: {
          400: FAILURES.webhookSignatureInvalid.message,
          404: FAILURES.unknownPaymentProvider.message,
          409: FAILURES.paymentsNotConfigured.message,
          503: FAILURES.checkoutPending.message,
        },
      },
      async handler(ctx: Ctx<{ provider: string }>): Promise<ActionResult> {
        const name = ctx.params.provider;
        if (!PROVIDER_NAMES.includes(name)) throw fail('unknownPaymentProvider');
        const s = await loadSettings(db(), [...PAYMENT_SETTINGS]);
        let event;
        try {
          event = providerNamed(name, s).verifyWebhook(ctx.meta.rawBody ?? '', ctx.meta.headers ?? {});
        } catch (err) {
          if (err instanceof SignatureError) throw fail('webhookSignatureInvalid');
          if (err instanceof NotConfiguredError) throw fail('paymentsNotConfigured');
          throw err;
        }
        const settled = await settleEvent(name, event);
        if (settled.walletAmount > 0)
          this.logger.warn(
            `online payment: checkout ${settled.checkoutId} put ${settled.walletAmount} minor units in the wallet`,
          );
        if (MISMATCHES.includes(settled.outcome))
          this.logger.warn(
            `online payment: ${name} event ${event.eventId} ${settled.outcome} (checkout ${settled.checkoutId ?? 'none'}): ${settled.note}`,
          );
        if (settled.renewSubscriberId !== null && settled.checkoutId !== null)
          await renewPaid(ctx, { checkoutId: settled.checkoutId, subscriberId: settled.renewSubscriberId });
        else if (settled.subscriberId !== null) await autoRenewAfter(ctx, settled.subscriberId);
        return { data: { received: true, outcome: settled.outcome, checkout_id: settled.checkoutId } };
      },
    },

    returnPage: {
      rest: 'GET /api/payments/return/:ref',
      http: {
        auth: 'public',
        access: "none (the checkout's random reference, only in the URL the provider sends the payer to)",
        summary: 'Where the payer comes back: the checkout paid, still being confirmed, or cancelled',
        tag: TAG,
        params: returnParams,
        query: returnQuery,
        produces: 'html',
        rateLimit: 'public',
        errors: { 404: FAILURES.checkoutNotFound.message },
      },
      async handler(ctx: Ctx<ReturnInput>): Promise<string> {
        const [c] = await db()
          .select({ status: onlineCheckouts.status })
          .from(onlineCheckouts)
          .where(eq(onlineCheckouts.returnRef, ctx.params.ref));
        if (!c) throw fail('checkoutNotFound');
        const status = c.status;
        const words =
          SETTLED_WORDS[status] ??
          (ctx.params.cancelled
            ? 'Payment cancelled. Nothing was charged.'
            : status === 'open'
              ? 'Payment is being confirmed. This page refreshes by itself.'
              : 'This payment is not open.');
        const refresh = status === 'open' && !ctx.params.cancelled ? '<meta http-equiv="refresh" content="3">' : '';
        ctx.meta.$responseHeaders = { ...RETURN_PAGE_HEADERS };
        return `<!doctype html><html><head><meta charset="utf-8">${refresh}<title>Payment</title></head><body><p id="status" data-status="${esc(status)}">${esc(words)}</p></body></html>`;
      },
    },

    list: {
      rest: 'GET /api/payments/online',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller over its tree',
        summary: 'Online checkouts and their outcomes, newest first (reconciliation against the provider payouts)',
        tag: TAG,
        query: listQuery,
      },
      async handler(ctx: Ctx<ListQuery>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const scope = await scopeFor(db(), auth, 'read');
        const { page, limit, offset } = pageOf(ctx.params);
        const where: SQL[] = [inScope(scope, onlineCheckouts.resellerId)];
        if (ctx.params.from) where.push(gte(onlineCheckouts.createdAt, new Date(`${ctx.params.from}T00:00:00Z`)));
        if (ctx.params.to)
          where.push(lt(onlineCheckouts.createdAt, new Date(Date.parse(`${ctx.params.to}T00:00:00Z`) + 86_400_000)));
        if (ctx.params.status) where.push(eq(onlineCheckouts.status, ctx.params.status));
        const rows = await db()
          .select()
          .from(onlineCheckouts)
          .where(and(...where))
          .orderBy(desc(onlineCheckouts.id))
          .limit(limit)
          .offset(offset);
        const [{ n }] = await db()
          .select({ n: sql<number>`count(*)::int` })
          .from(onlineCheckouts)
          .where(and(...where));
        return { data: rows.map(checkoutView), pagination: { page, limit, total: Number(n) } };
      },
    },

    events: {
      rest: 'GET /api/payments/events',
      http: {
        auth: 'jwt',
        access: 'admin (an event that matched no checkout belongs to no reseller)',
        summary:
          'Provider events and what became of each, newest first: `unmatched`, `mismatch` and `underpaid` are for the operator to settle',
        tag: TAG,
        query: eventsQuery,
      },
      async handler(ctx: Ctx<EventsQuery>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const { page, limit, offset } = pageOf(ctx.params);
        const where = ctx.params.outcome ? eq(paymentEvents.outcome, ctx.params.outcome) : undefined;
        const rows = await db()
          .select()
          .from(paymentEvents)
          .where(where)
          .orderBy(desc(paymentEvents.receivedAt))
          .limit(limit)
          .offset(offset);
        const [{ n }] = await db()
          .select({ n: sql<number>`count(*)::int` })
          .from(paymentEvents)
          .where(where);
        return { data: rows.map(eventView), pagination: { page, limit, total: Number(n) } };
      },
    },
  },
};
