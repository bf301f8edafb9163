/**
 * Making a checkout: the row first (its id and random return reference go to the provider), then the
 * provider's session, then its id and URL on the row: the webhook finds the checkout by that session
 * id only, and the payer gets the URL only after it is stored.
 */
import crypto from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import { RENEWAL_COLUMNS, renewalParties, type RenewalColumns } from '../../shared/billing';
import { db } from '../../shared/db/client';
import { onlineCheckouts } from '../../shared/db/schema';
import { blockingBalances } from '../../shared/access/blocked';
import { isOpen } from '../../shared/domain/invoice-state';
import { renewalCharge } from '../../shared/domain/subscriber';
import { fail } from '../../shared/failures';
import { config } from '../../shared/config';
import { loadSettings, type Settings } from '../../shared/settings';
import { checkOutgoingUrl } from '../../shared/net/address-policy';
import { activeProvider } from './providers';
import { NotConfiguredError } from './providers/types';

export const PAYMENT_SETTINGS = [
  'currency',
  'payment_provider',
  'stripe_secret_key',
  'stripe_webhook_secret',
  'stripe_api_base_url',
  'allow_private_targets',
  'payment_currencies',
  'operator_name',
  'default_tax_rate',
] as const;

export type CheckoutTarget = { purpose: 'invoice'; invoiceId: number } | { purpose: 'renewal'; subscriberId: number };

export interface PayableTarget {
  subscriberId: number;
  resellerId: number;
  invoiceId: number | null;
  amount: number;
  currency: string;
  description: string;
}

function currencyAllowed(s: Settings, currency: string): boolean {
  const allowed = s.payment_currencies as string[];
  return allowed.length === 0 || allowed.includes(currency);
}

/** What a checkout of `target` would charge now; null when there is nothing to pay online. */
export async function payable(target: CheckoutTarget, s: Settings): Promise<PayableTarget | null> {
  if (target.purpose === 'invoice') {
    const { rows } = await db().execute<{
      id: number;
      subscriber_id: number | null;
      reseller_id: number;
      status: string;
      total: number;
      paid_amount: number;
      currency: string;
      invoice_number: string;
    }>(sql`select id, subscriber_id, reseller_id, status, total, paid_amount, currency, invoice_number
             from invoices where id = ${target.invoiceId}`);
    const inv = rows[0];
    if (!inv) throw fail('invoiceNotFound');
    const balance = Number(inv.total) - Number(inv.paid_amount);
    if (!isOpen(inv.status) || balance <= 0 || inv.subscriber_id === null || !currencyAllowed(s, inv.currency))
      return null;
    return {
      subscriberId: Number(inv.subscriber_id),
      resellerId: Number(inv.reseller_id),
      invoiceId: Number(inv.id),
      amount: balance,
      currency: inv.currency,
      description: `Invoice ${inv.invoice_number}`,
    };
  }
  const { rows } = await db().execute<RenewalColumns & { reseller_id: number; name: string }>(sql`
    select s.reseller_id, p.name, ${RENEWAL_COLUMNS}
      from subscribers s join services p on p.id = s.service_id
     where s.id = ${target.subscriberId} and s.deleted_at is null`);
  const sub = rows[0];
  if (!sub) throw fail('subscriberNotFound');
  const { subscriber, plan } = renewalParties(sub);
  // What the renewal invoice will ask (price and default tax), paid from the wallet, which holds the system currency.
  const { total } = renewalCharge(subscriber, plan, s.default_tax_rate);
  if (total <= 0 || plan.currency !== s.currency || !currencyAllowed(s, plan.currency)) return null;
  // The invoices that block access are paid first from this money (settle.ts): asked for as well,
  // so that the renewal it was paid for is made.
  const blocking = (await blockingBalances(db(), [target.subscriberId], plan.currency)).get(target.subscriberId) ?? 0;
  return {
    subscriberId: target.subscriberId,
    resellerId: Number(sub.reseller_id),
    invoiceId: null,
    amount: total + blocking,
    currency: plan.currency,
    description: blocking > 0 ? `Renewal: ${sub.name}, and the overdue balance` : `Renewal: ${sub.name}`,
  };
}

/** Whether a Pay button makes sense for `target` now (a provider configured, something to pay). */
export async function canPay(target: CheckoutTarget): Promise<boolean> {
  const s = await loadSettings(db(), [...PAYMENT_SETTINGS]);
  if (s.payment_provider === 'none') return false;
  return (await payable(target, s)) !== null;
}

/** Where the payer comes back: by a 192-bit random reference, so no one reads another's checkout. */
function returnUrl(returnRef: string): string {
  return `${config().publicBaseUrl}/api/payments/return/${returnRef}`;
}

export async function createCheckout(target: CheckoutTarget): Promise<{ id: number; url: string }> {
  const s = await loadSettings(db(), [...PAYMENT_SETTINGS]);
  let provider;
  try {
    provider = activeProvider(s);
  } catch (err) {
    if (err instanceof NotConfiguredError) throw fail('paymentsNotConfigured');
    throw err;
  }
  if (!provider) throw fail('paymentsNotConfigured');
  // The secret key goes to this address: the address policy holds at each call as at saving
  // (docs/security.md); Stripe's own default host needs no check.
  if (s.stripe_api_base_url) {
    await checkOutgoingUrl('stripe_api_base_url', s.stripe_api_base_url, s.allow_private_targets === true);
  }
  const what = await payable(target, s);
  if (!what) throw fail('nothingToPay');
  // An open checkout of the same amount is reused (a second click, a reload): one session per debt.
  const { rows: open } = await db().execute<{ id: number; url: string }>(sql`
    select id, url from online_checkouts
     where provider = ${provider.name} and status = 'open' and url is not null and purpose = ${target.purpose}
       and subscriber_id = ${what.subscriberId} and invoice_id is not distinct from ${what.invoiceId}
       and amount = ${what.amount} and currency = ${what.currency} and created_at > now() - interval '23 hours'
     order by id desc limit 1`);
  if (open[0]) return { id: Number(open[0].id), url: open[0].url };
  const [row] = await db()
    .insert(onlineCheckouts)
    .values({
      provider: provider.name,
      purpose: target.purpose,
      invoiceId: what.invoiceId,
      subscriberId: what.subscriberId,
      resellerId: what.resellerId,
      amount: what.amount,
      currency: what.currency,
      returnRef: crypto.randomBytes(24).toString('base64url'),
    })
    .returning({ id: onlineCheckouts.id, returnRef: onlineCheckouts.returnRef });
  const back = returnUrl(row.returnRef);
  let created;
  try {
    created = await provider.createCheckout({
      checkoutId: row.id,
      amount: what.amount,
      currency: what.currency,
      description: `${s.operator_name}: ${what.description}`,
      successUrl: back,
      cancelUrl: `${back}?cancelled=1`,
    });
  } catch (err) {
    const why = (err as Error).message;
    await db()
      .update(onlineCheckouts)
      .set({ status: 'failed', note: why.slice(0, 500) })
      .where(eq(onlineCheckouts.id, row.id));
    throw fail('providerUnexpected', provider.name, why);
  }
  // Only the session's id and URL: the status is the webhook's to write.
  await db()
    .update(onlineCheckouts)
    .set({ providerSessionId: created.sessionId, url: created.url })
    .where(eq(onlineCheckouts.id, row.id));
  return { id: row.id, url: created.url };
}
