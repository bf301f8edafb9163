/**
 * `captive-portal`: `GET /portal`, the page a walled-garden subscriber's browser is sent to
 * (docs/walled-garden.md). Who is asking is the client address alone: the open accounting session
 * with that framed address. No parameter selects a subscriber, so the page cannot be used to list
 * other people's accounts; an address without a session gets the operator's generic page.
 */
import crypto from 'node:crypto';
import type { ServiceSchema } from 'moleculer';
import { todayUtc } from '../../../shared/billing';
import { db } from '../../../shared/db/client';
import type { BlockedReason } from '../../../shared/domain/access';
import { renewalPrice } from '../../../shared/domain/subscriber';
import type { Ctx } from '../../../shared/http/context';
import type { HttpRoute } from '../../../shared/http/route';
import { object } from '../../../shared/http/schemas';
import { publicUrl } from '../../../shared/public-links';
import { loadSettings } from '../../../shared/settings';
import { DOCUMENT_SETTINGS } from '../invoice-pdf';
import { escapeHtml, safeLogo } from '../templates/html';
import { fail } from '../../../shared/failures';
import { openInvoices, sessionAddress, subscriberAt, type PortalSubscriber } from './portal-data';
import { PORTAL_STYLE, renderPortalHtml, type PortalAccount, type PortalModel } from './portal-template';

const STYLE_HASH = crypto.createHash('sha256').update(PORTAL_STYLE).digest('base64');

/**
 * The console's protections (no scripts at all here, the one inline style by its hash, no
 * framing, no sniffing), plus: the page is one subscriber's, so no cache may keep it.
 */
function securityHeaders(logoUrl: string): Record<string, string> {
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${STYLE_HASH}'`,
    `img-src data:${logoOrigin(logoUrl)}`,
    "base-uri 'none'",
    // The recharge-card form posts to /portal/redeem on this origin (docs/cards.md).
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'private, no-store',
    'X-Robots-Tag': 'noindex',
  };
}

/** The origin of an http(s) logo, which the policy must let the page load, as ` origin`. */
function logoOrigin(logoUrl: string): string {
  const logo = safeLogo(logoUrl);
  if (!logo || !/^https?:/i.test(logo)) return '';
  try {
    return ` ${new URL(logo).origin}`;
  } catch {
    return '';
  }
}

/**
 * Blocked as billing recorded it; until the lifecycle sweep has caught up with a subscriber
 * (blocked_reason still null), a past expiry date already means expired.
 */
function reasonOf(sub: PortalSubscriber, today: string): BlockedReason | null {
  return sub.blockedReason ?? (sub.expiryDate < today ? 'expired' : null);
}

async function accountOf(sub: PortalSubscriber): Promise<PortalAccount> {
  const invoices = await openInvoices(db(), sub.id);
  return {
    username: sub.username,
    reason: reasonOf(sub, todayUtc()),
    expiryDate: sub.expiryDate,
    renewal: sub.plan
      ? {
          plan: sub.plan.name,
          days: sub.plan.durationDays,
          priceMinor: renewalPrice(sub, sub.plan),
          currency: sub.plan.currency,
        }
      : null,
    invoices: invoices.map((i) => ({
      number: i.invoiceNumber,
      status: i.status,
      dueDate: i.dueDate,
      currency: i.currency,
      balanceMinor: i.balance,
      url: i.publicTokenNonce ? publicUrl(i.id, i.publicTokenNonce) : null,
    })),
  };
}

interface RedeemedView {
  kind: 'money' | 'plan';
  amount: number;
  currency: string;
  plan_name?: string | null;
}

/** The page for the caller's address, with the outcome of a card just redeemed. */
async function portalPage(ctx: Ctx, redeem: { ok: boolean; message: string } | null): Promise<string> {
  const s = await loadSettings(db(), [...DOCUMENT_SETTINGS]);
  const address = sessionAddress(ctx.meta.ip);
  const sub = address ? await subscriberAt(db(), address) : null;
  let canPayOnline = false;
  if (sub) {
    try {
      canPayOnline = await ctx.call<boolean, { purpose: 'renewal'; subscriberId: number }>('payments.canPay', {
        purpose: 'renewal',
        subscriberId: sub.id,
      });
    } catch {
      // Payments not running in this installation: no Pay link.
    }
  }
  const model: PortalModel = {
    language: s.language,
    operator: {
      name: s.operator_name,
      address: s.operator_address,
      phone: s.operator_phone,
      email: s.operator_email,
      logoUrl: s.operator_logo_url,
    },
    howToPay: s.how_to_pay,
    account: sub ? await accountOf(sub) : null,
    canPayOnline,
    redeem,
  };
  ctx.meta.$responseHeaders = securityHeaders(s.operator_logo_url);
  return renderPortalHtml(model);
}

export const portalService: ServiceSchema = {
  name: 'captive-portal',
  actions: {
    page: {
      rest: 'GET /portal',
      http: {
        auth: 'public',
        access: 'none (the subscriber is the one whose open session has the client address)',
        summary:
          "Captive portal: the account, why access is blocked, open invoices and how to pay, for the caller's address",
        tag: 'captive portal',
        query: object({}),
        produces: 'html',
        rateLimit: 'public',
      } satisfies HttpRoute,
      async handler(ctx: Ctx): Promise<string> {
        return portalPage(ctx, null);
      },
    },

    pay: {
      rest: 'GET /portal/pay',
      http: {
        auth: 'public',
        access: 'none (the subscriber is the one whose open session has the client address)',
        summary: "The portal's Pay link: a checkout for the caller's renewal price, answered with a redirect to it",
        tag: 'captive portal',
        query: object({}),
        produces: 'html',
        success: 303,
        rateLimit: 'public',
        errors: { 404: 'no subscription at this address', 409: 'online payment is not configured; nothing to pay' },
      } satisfies HttpRoute,
      async handler(ctx: Ctx): Promise<string> {
        const address = sessionAddress(ctx.meta.ip);
        const sub = address ? await subscriberAt(db(), address) : null;
        if (!sub) throw fail('subscriberNotFound');
        const { url } = await ctx.call<{ url: string }, { purpose: 'renewal'; subscriberId: number }>(
          'payments.checkout',
          {
            purpose: 'renewal',
            subscriberId: sub.id,
          },
        );
        ctx.meta.$statusCode = 303;
        ctx.meta.$responseHeaders = { Location: url, 'Cache-Control': 'no-store' };
        return `<!doctype html><meta charset="utf-8"><a href="${escapeHtml(url)}">Continue to payment</a>`;
      },
    },

    redeem: {
      rest: 'POST /portal/redeem',
      http: {
        auth: 'public',
        access: 'none (the subscriber is the one whose open session has the client address)',
        summary:
          "The portal's recharge-card form (application/x-www-form-urlencoded `pin`): the card redeemed for the caller, the page again with the outcome",
        tag: 'captive portal',
        produces: 'html',
        rawBody: true,
        rateLimit: 'public',
      } satisfies HttpRoute,
      async handler(ctx: Ctx): Promise<string> {
        const pin = new URLSearchParams(ctx.meta.rawBody ?? '').get('pin') ?? '';
        const address = sessionAddress(ctx.meta.ip);
        const sub = address ? await subscriberAt(db(), address) : null;
        if (!sub) return portalPage(ctx, null);
        let outcome: { ok: boolean; message: string };
        try {
          const r = await ctx.call<RedeemedView, { subscriberId: number; pin: string; address: string | null }>(
            'cards.redeemFor',
            { subscriberId: sub.id, pin, address: ctx.meta.ip ?? null },
          );
          outcome = {
            ok: true,
            message: r.kind === 'money' ? `${r.amount} ${r.currency}` : (r.plan_name ?? 'renewal'),
          };
        } catch (err) {
          const status = (err as { code?: number }).code;
          if (!(err instanceof Error) || typeof status !== 'number' || status >= 500) throw err;
          ctx.meta.$statusCode = status;
          outcome = { ok: false, message: err.message };
        }
        return portalPage(ctx, outcome);
      },
    },
  },
};
