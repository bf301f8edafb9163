/**
 * A plan change priced by the shared proration function, used by POST /api/invoices/prorate and by
 * the subscribers' change-service endpoints, so the quote and the charge can never differ.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import type { DbOrTx, Tx } from '../db/client';
import { services, subscribers } from '../db/schema';
import { daysBetween, prorate, type Proration } from '../domain/proration';
import { fail } from '../failures';
import { withTax } from '../money';
import { loadSettings } from '../settings';
import { todayUtc } from './dates';
import { createInvoice } from './invoices';
import type { InvoiceRecord } from './types';
import { creditWallet, type WalletCreditResult } from './wallet';
import { settleFromWallet } from './wallet-settle';

export interface ServiceChangeQuote extends Proration {
  subscriberId: number;
  resellerId: number;
  oldServiceId: number;
  oldServiceName: string;
  newServiceId: number;
  newServiceName: string;
  currency: string;
}

/**
 * Old price is what the subscriber pays now (its own price when `override_price`, else the plan's);
 * new price is the new plan's. Errors: 404 `subscriber not found`; 400 `<serviceField> not found`;
 * 400 when the two plans are priced in different currencies; with `withinPeriod`, 409 while more
 * than one period of the current plan is left.
 *
 * `withinPeriod` is for a subscriber changing its own plan: the proration counts at most one period
 * of the current plan, so a change made with more left is priced on fewer days than it moves, and
 * back and forth between a short and a long plan credited money every round (a 7-day plan with 30
 * days left counts 7 going up, the 30-day plan counts 30 coming back).
 */
export async function quoteServiceChange(
  db: DbOrTx,
  input: { subscriberId: number; newServiceId: number; today?: string; serviceField?: string; withinPeriod?: boolean },
): Promise<ServiceChangeQuote> {
  const field = input.serviceField ?? 'new_service_id';
  const [sub] = await db
    .select({
      id: subscribers.id,
      resellerId: subscribers.resellerId,
      price: subscribers.price,
      overridePrice: subscribers.overridePrice,
      expiryDate: subscribers.expiryDate,
      serviceId: subscribers.serviceId,
    })
    .from(subscribers)
    .where(and(eq(subscribers.id, input.subscriberId), isNull(subscribers.deletedAt)));
  if (!sub) throw fail('subscriberNotFound');
  const [oldPlan] = await db.select().from(services).where(eq(services.id, sub.serviceId));
  const [newPlan] = await db
    .select()
    .from(services)
    .where(and(eq(services.id, input.newServiceId), isNull(services.deletedAt)));
  if (!newPlan) throw fail('referenceNotFound', field);
  if (!oldPlan) throw fail('noCurrentPlan');
  if (oldPlan.currency !== newPlan.currency) {
    throw fail('planCurrencyMismatch', field, newPlan.currency, oldPlan.currency);
  }
  const today = input.today ?? todayUtc();
  const daysLeft = daysBetween(today, sub.expiryDate);
  if (input.withinPeriod && daysLeft > oldPlan.durationDays) {
    throw fail('planChangeBeyondPeriod', daysLeft, oldPlan.durationDays);
  }
  const oldPrice = sub.overridePrice && sub.price !== null ? sub.price : oldPlan.price;
  const p = prorate({
    oldPrice,
    oldPeriodDays: oldPlan.durationDays,
    newPrice: newPlan.price,
    newPeriodDays: newPlan.durationDays,
    today,
    expiryDate: sub.expiryDate,
  });
  return {
    ...p,
    subscriberId: sub.id,
    resellerId: sub.resellerId,
    oldServiceId: oldPlan.id,
    oldServiceName: oldPlan.name,
    newServiceId: newPlan.id,
    newServiceName: newPlan.name,
    currency: newPlan.currency,
  };
}

/** The tax rate of the subscriber's latest renewal or plan-change invoice, else the default rate. */
async function paidTaxRate(tx: Tx, subscriberId: number): Promise<string | number> {
  const { rows } = await tx.execute<{ tax_rate: string }>(sql`
    select tax_rate from invoices
     where subscriber_id = ${subscriberId} and kind in ('renewal', 'service_change') and status <> 'void'
     order by issue_date desc, id desc limit 1`);
  return rows[0]?.tax_rate ?? (await loadSettings(tx, ['default_tax_rate'])).default_tax_rate;
}

export interface ServiceChangeSettlement {
  /** Set when the subscriber owes money: one pending invoice for the net amount due. */
  invoice: InvoiceRecord | null;
  /** Set when the subscriber is owed money: the wallet credit, of `refund` minor units (the net refund and its tax). */
  walletCredit: (WalletCreditResult & { refund: number }) | null;
}

/**
 * charge_difference: an invoice for the net due (its tax on top), paid from the wallet as far as it
 * holds the system currency (oldest open invoice first), or a wallet credit for a net refund with the same tax (the caller has checked it is in the wallet's currency) that pays open
 * invoices first, or nothing.
 */
export async function settleServiceChange(
  tx: Tx,
  quote: ServiceChangeQuote,
  opts: { createdBy?: number | null; taxRate?: number | string } = {},
): Promise<ServiceChangeSettlement> {
  const description = `Plan change ${quote.oldServiceName} -> ${quote.newServiceName} (${quote.daysRemaining} days)`;
  if (quote.netAmountDue > 0) {
    const invoice = await createInvoice(tx, {
      subscriberId: quote.subscriberId,
      resellerId: quote.resellerId,
      items: [{ description, qty: 1, unitPrice: quote.netAmountDue }],
      currency: quote.currency,
      taxRate: opts.taxRate,
      kind: 'service_change',
      createdBy: opts.createdBy,
    });
    // Wallet money pays what is owed, as it pays a renewal's invoice: left pending, the invoice
    // waited for a provider checkout while the wallet held its price, and blocked access once due.
    const { currency } = await loadSettings(tx, ['currency']);
    const { rows } = await tx.execute<{ wallet_balance: number }>(
      sql`select wallet_balance from subscribers where id = ${quote.subscriberId}`,
    );
    await settleFromWallet(tx, quote.subscriberId, { walletBalance: Number(rows[0].wallet_balance), currency });
    return { invoice, walletCredit: null };
  }
  if (quote.netAmountDue < 0) {
    // The unused days were paid with their tax: the refund returns it at the rate they were paid at
    // (the latest renewal's or plan change's invoice; the default when there is none), so an upgrade
    // and straight back leaves no tax owed, and a rate raised since refunds no tax never paid.
    const taxRate = opts.taxRate ?? (await paidTaxRate(tx, quote.subscriberId));
    const refund = withTax(-quote.netAmountDue, taxRate);
    const walletCredit = await creditWallet(tx, {
      subscriberId: quote.subscriberId,
      amount: refund,
      currency: quote.currency,
      reason: 'service change credit',
      notes: description,
      createdBy: opts.createdBy,
      ledgerType: 'plan_change_credit',
    });
    // The credit pays what is still owed first, oldest first, as a money card's does: the unused
    // days of a plan whose invoice is unpaid (an upgrade, then straight back) are not money to spend.
    await settleFromWallet(tx, quote.subscriberId, {
      walletBalance: walletCredit.walletBalance,
      currency: quote.currency,
      upTo: refund,
    });
    return { invoice: null, walletCredit: { ...walletCredit, refund } };
  }
  return { invoice: null, walletCredit: null };
}
