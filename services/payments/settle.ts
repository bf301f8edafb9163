/**
 * A verified provider event, acted on exactly once. One transaction: the event's id is inserted into
 * payment_events first (a retry, or the same event arriving twice at once, waits on the key and then
 * finds it there: nothing more is done), then the checkout is found by the provider's session id
 * alone: the checkout id an event names (metadata, `client_reference_id`) is chosen by whoever made
 * the session, so it only tells that the session may not be stored yet (503, the provider redelivers).
 * What arrived is judged against what the checkout asked (received.ts) and booked through the one
 * payment writer: on the invoice as much as still fits (applyPayment, method `card`, the provider's
 * reference; an overdue suspension ends in the same transaction), the rest, if the invoice was paid
 * meanwhile, into the wallet (creditWallet). A renewal checkout credits the wallet; the renewal runs
 * after commit (the subscribers unit), and only when the full price arrived: the checkout keeps
 * `renewal_due` until it is made or cannot be, so a failed or lost one is retried (renewals.ts). Every event's outcome,
 * session, amount and note stay on its payment_events row for the operator.
 */
import { sql } from 'drizzle-orm';
import { applyPayment, creditWallet, lockSubscriberEvenDeleted, settleFromWallet } from '../../shared/billing';
import { db, type Tx } from '../../shared/db/client';
import { isOpen } from '../../shared/domain/invoice-state';
import { fail } from '../../shared/failures';
import { fromMinor } from '../../shared/money';
import { loadSettings } from '../../shared/settings';
import type { ProviderEvent } from './providers/types';
import { judgeReceived } from './received';

export type Outcome =
  'duplicate' | 'ignored' | 'unmatched' | 'expired' | 'already_paid' | 'paid' | 'underpaid' | 'mismatch';

export interface Settled {
  outcome: Outcome;
  checkoutId: number | null;
  /** The checkout's subscriber, when money was booked for it. */
  subscriberId: number | null;
  /** Run the renewal after commit for this subscriber (its full price arrived). */
  renewSubscriberId: number | null;
  walletAmount: number;
  /** Why the money was not, or not all, applied as asked (the operator's note). */
  note: string | null;
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

/** Checkouts whose money has been judged: a second event for the same session books nothing. */
const CLOSED = ['paid', 'underpaid', 'mismatch'];

export async function settleEvent(provider: string, e: ProviderEvent): Promise<Settled> {
  return db().transaction(async (tx) => {
    const fresh = await tx.execute(sql`
      insert into payment_events (provider, event_id, type, session_id, amount, currency)
      values (${provider}, ${e.eventId}, ${e.type}, ${e.sessionId}, ${e.amount}, ${e.currency})
      on conflict do nothing returning event_id`);
    const nothingBooked = { subscriberId: null, renewSubscriberId: null, walletAmount: 0 };
    /** The event's outcome, kept on its row for the operator. */
    const settled = async (s: Settled): Promise<Settled> => {
      await tx.execute(sql`
        update payment_events set outcome = ${s.outcome}, checkout_id = ${s.checkoutId}, note = ${s.note}
         where provider = ${provider} and event_id = ${e.eventId}`);
      return s;
    };
    if (fresh.rows.length === 0) return { outcome: 'duplicate', checkoutId: null, note: null, ...nothingBooked };
    if (e.kind === 'ignored') return settled({ outcome: 'ignored', checkoutId: null, note: null, ...nothingBooked });
    const head = e.sessionId
      ? await tx.execute<{ id: number; subscriber_id: number }>(sql`
          select id, subscriber_id from online_checkouts where provider = ${provider} and provider_session_id = ${e.sessionId}`)
      : { rows: [] };
    if (!head.rows[0]) {
      if (await awaitsSession(tx, provider, e.checkoutId)) throw fail('checkoutPending');
      const note =
        e.checkoutId === null
          ? 'the session is no checkout of this server: nothing booked'
          : `the session is not the one of checkout ${e.checkoutId}, which it names: nothing booked`;
      return settled({ outcome: 'unmatched', checkoutId: null, note, ...nothingBooked });
    }
    // Lock order of every billing write: the subscriber, then the checkout, then its invoice. A
    // deleted account's money is booked all the same: refused, it rolled back the event's row and
    // answered 404 to every redelivery, and the payment was recorded nowhere.
    const subscriber = await lockSubscriberEvenDeleted(tx, Number(head.rows[0].subscriber_id));
    if (!subscriber) {
      const note = `checkout ${head.rows[0].id}'s subscriber was removed for good: nothing booked, refund it at the provider`;
      return settled({ outcome: 'unmatched', checkoutId: null, note, ...nothingBooked });
    }
    const locked = await tx.execute<CheckoutLocked>(sql`
      select id, purpose, invoice_id, subscriber_id, amount, currency, status from online_checkouts
       where id = ${head.rows[0].id} for update`);
    const c = locked.rows[0];
    if (e.kind === 'expired') {
      await tx.execute(sql`update online_checkouts set status = 'expired', completed_at = now()
                            where id = ${c.id} and status = 'open'`);
      return settled({ outcome: 'expired', checkoutId: c.id, note: null, ...nothingBooked });
    }
    if (CLOSED.includes(c.status))
      return settled({ outcome: 'already_paid', checkoutId: c.id, note: null, ...nothingBooked });
    const reference = e.reference ?? e.sessionId ?? e.eventId;
    const close = (status: string, applied: number, toWallet: number, note: string | null, renewalDue = false) =>
      tx.execute(sql`
        update online_checkouts set status = ${status}, completed_at = now(), provider_event_id = ${e.eventId},
               provider_reference = ${reference}, applied_amount = ${applied}, wallet_amount = ${toWallet}, note = ${note},
               renewal_due = ${renewalDue}
         where id = ${c.id}`);
    const verdict = judgeReceived({ amount: Number(c.amount), currency: c.currency }, e);
    if (verdict.kind === 'mismatch') {
      await close('mismatch', 0, 0, verdict.note);
      return settled({ outcome: 'mismatch', checkoutId: c.id, note: verdict.note, ...nothingBooked });
    }
    const { amount } = verdict;
    const currency = c.currency;
    const { currency: walletCurrency } = await loadSettings(tx, ['currency']);
    const notes: string[] = verdict.kind === 'short' ? [verdict.note] : [];
    let applied = 0;
    let toWallet = amount;
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
        notes.push(
          `${fromMinor(toWallet, currency)} ${currency} no longer fitted invoice ${i?.invoice_number ?? c.invoice_id} (paid meanwhile)`,
        );
    } else if (verdict.kind === 'short') {
      notes.push('no renewal: the money waits in the wallet');
    }
    let unbooked = false;
    if (toWallet > 0) {
      if (currency === walletCurrency) {
        if (c.purpose === 'invoice') notes.push('credited to the wallet');
        const credit = await creditWallet(tx, {
          subscriberId: subscriber.id,
          amount: toWallet,
          currency,
          reason: c.purpose === 'renewal' ? 'online renewal payment' : 'online payment excess',
          method: 'card',
          reference,
          notes: notes.join('; ') || null,
        });
        // Money paid for an invoice pays what is still owed (its invoice consolidated into another
        // while the payer was away, say), oldest first, rather than waiting while that goes overdue.
        // Money paid whole for a renewal pays the invoices that block access first (overdue past
        // suspend_overdue_after_days): a renewal beside them bought nothing usable; the renewal
        // follows only if the rest still covers it (renewFromWallet's rule).
        // (A deleted account's invoices stay as they are: the wallet payments lock live rows only.)
        const renewalPaid = c.purpose === 'renewal' && verdict.kind === 'full';
        if (!subscriber.deleted && (c.purpose === 'invoice' || renewalPaid)) {
          const { paid } = await settleFromWallet(tx, subscriber.id, {
            walletBalance: credit.walletBalance,
            currency,
            upTo: toWallet,
            blockingOnly: c.purpose === 'renewal',
          });
          if (paid.length)
            notes.push(
              `which paid ${paid.map((x) => `invoice ${x.invoiceId} ${fromMinor(x.amount, currency)}`).join(', ')}`,
            );
        }
      } else {
        unbooked = true;
        notes.push(
          `${fromMinor(toWallet, currency)} ${currency} received but not booked: the wallet holds ${walletCurrency}`,
        );
      }
    }
    if (subscriber.deleted) notes.push('the subscriber is deleted: no renewal');
    // Money received and booked nowhere is a mismatch the operator settles by hand, not `paid`.
    const outcome = unbooked ? 'mismatch' : verdict.kind === 'short' ? 'underpaid' : 'paid';
    const credited = unbooked ? 0 : toWallet;
    const note = notes.join('; ') || null;
    const renews = c.purpose === 'renewal' && verdict.kind === 'full' && !unbooked && !subscriber.deleted;
    await close(outcome, applied, credited, note, renews);
    return settled({
      outcome,
      checkoutId: c.id,
      note,
      subscriberId: subscriber.deleted ? null : subscriber.id,
      renewSubscriberId: renews ? subscriber.id : null,
      walletAmount: credited,
    });
  });
}

/**
 * Whether the checkout an event names still waits for its provider session id (the event beat the
 * create call's answer). A genuine payment cannot be that early (the payer gets the URL only after
 * the id is stored), but an early event must be neither applied nor lost: it is answered 503 with
 * nothing recorded, and the provider's redelivery is judged once the session is known.
 */
async function awaitsSession(tx: Tx, provider: string, checkoutId: number | null): Promise<boolean> {
  if (checkoutId === null) return false;
  const { rows } = await tx.execute(sql`
    select 1 from online_checkouts
     where id = ${checkoutId} and provider = ${provider} and status = 'open' and provider_session_id is null`);
  return rows.length > 0;
}
