/**
 * A verified provider event, acted on exactly once. One transaction: the event's id is inserted into
 * payment_events first (a retry, or the same event arriving twice at once, waits on the key and then
 * finds it there: nothing more is done), the checkout row locked, and the money written through the
 * one payment writer: on the invoice as much as still fits (applyPayment, method `card`, the
 * provider's reference; an overdue suspension ends in the same transaction), the rest, if the
 * invoice was paid meanwhile, into the wallet (creditWallet), reported on the checkout. A renewal
 * checkout credits the wallet and the renewal runs after commit (the subscribers unit).
 */
import { sql } from 'drizzle-orm';
import { applyPayment, creditWallet, lockSubscriber } from '../../shared/billing';
import { db } from '../../shared/db/client';
import { isOpen } from '../../shared/domain/invoice-state';
import { fromMinor } from '../../shared/money';
import { loadSettings } from '../../shared/settings';
import type { ProviderEvent } from './providers/types';

export interface Settled {
  outcome: 'duplicate' | 'ignored' | 'expired' | 'already_paid' | 'paid';
  checkoutId: number | null;
  /** The checkout's subscriber, when it was paid. */
  subscriberId: number | null;
  /** Run the renewal after commit for this subscriber. */
  renewSubscriberId: number | null;
  walletAmount: number;
}

type CheckoutLocked = {
  id: number;
  purpose: string;
  invoice_id: number | null;
  subscriber_id: number;
  amount: number;
  currency: string;
  status: string;
};

export async function settleEvent(provider: string, e: ProviderEvent): Promise<Settled> {
  return db().transaction(async (tx) => {
    const none = { checkoutId: e.checkoutId, subscriberId: null, renewSubscriberId: null, walletAmount: 0 };
    const fresh = await tx.execute(sql`
      insert into payment_events (provider, event_id, checkout_id, type) values (${provider}, ${e.eventId}, ${e.checkoutId}, ${e.type})
      on conflict do nothing returning event_id`);
    if (fresh.rows.length === 0) return { outcome: 'duplicate', ...none };
    if (e.kind === 'ignored' || e.checkoutId === null) return { outcome: 'ignored', ...none };
    const head = await tx.execute<{ subscriber_id: number }>(
      sql`select subscriber_id from online_checkouts where id = ${e.checkoutId} and provider = ${provider}`,
    );
    if (!head.rows[0]) return { outcome: 'ignored', ...none };
    // Lock order of every billing write: the subscriber, then the checkout, then its invoice.
    const subscriber = await lockSubscriber(tx, Number(head.rows[0].subscriber_id));
    const locked = await tx.execute<CheckoutLocked>(sql`
      select id, purpose, invoice_id, subscriber_id, amount, currency, status from online_checkouts
       where id = ${e.checkoutId} for update`);
    const c = locked.rows[0];
    if (e.kind === 'expired') {
      await tx.execute(sql`update online_checkouts set status = 'expired', completed_at = now()
                            where id = ${c.id} and status = 'open'`);
      return { outcome: 'expired', ...none };
    }
    if (c.status === 'paid') return { outcome: 'already_paid', ...none };
    const amount = e.amount ?? Number(c.amount);
    const currency = e.currency ?? c.currency;
    const reference = e.reference ?? e.sessionId ?? e.eventId;
    const { currency: walletCurrency } = await loadSettings(tx, ['currency']);
    let applied = 0;
    let toWallet: number;
    let note: string | null = null;
    if (c.purpose === 'invoice' && c.invoice_id !== null) {
      const inv = await tx.execute<{
        status: string;
        total: number;
        paid_amount: number;
        currency: string;
        invoice_number: string;
      }>(
        sql`select status, total, paid_amount, currency, invoice_number from invoices where id = ${c.invoice_id} for update`,
      );
      const i = inv.rows[0];
      const balance = i && isOpen(i.status) && i.currency === currency ? Number(i.total) - Number(i.paid_amount) : 0;
      applied = Math.max(0, Math.min(amount, balance));
      if (applied > 0) {
        await applyPayment(tx, {
          invoiceId: c.invoice_id,
          amount: applied,
          method: 'card',
          reference,
          notes: `online payment (${provider} checkout ${c.id})`,
        });
      }
      toWallet = amount - applied;
      if (toWallet > 0)
        note = `${fromMinor(toWallet, currency)} ${currency} no longer fitted invoice ${i?.invoice_number ?? c.invoice_id} (paid meanwhile): credited to the wallet`;
    } else {
      toWallet = amount;
    }
    if (toWallet > 0) {
      if (currency === walletCurrency) {
        await creditWallet(tx, {
          subscriberId: subscriber.id,
          amount: toWallet,
          currency,
          reason: c.purpose === 'renewal' ? 'online renewal payment' : 'online payment excess',
          method: 'card',
          reference,
          notes: note,
        });
      } else {
        note = `${fromMinor(toWallet, currency)} ${currency} received but not booked: the wallet holds ${walletCurrency}`;
      }
    }
    await tx.execute(sql`
      update online_checkouts set status = 'paid', completed_at = now(), provider_event_id = ${e.eventId},
             provider_reference = ${reference}, provider_session_id = coalesce(provider_session_id, ${e.sessionId}),
             applied_amount = ${applied}, wallet_amount = ${toWallet}, note = ${note}
       where id = ${c.id}`);
    return {
      outcome: 'paid',
      checkoutId: c.id,
      subscriberId: subscriber.id,
      renewSubscriberId: c.purpose === 'renewal' ? subscriber.id : null,
      walletAmount: toWallet,
    };
  });
}
