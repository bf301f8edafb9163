/**
 * The renewal an online renewal payment paid for. The payment commits with the checkout's
 * `renewal_due` set (settle.ts); the renewal is made through the subscribers unit from the wallet,
 * which clears `renewal_due` in the renewal's own transaction, so a payment renews once whatever
 * the tries (a first try whose answer was lost, the sweep of another replica). A try that failed
 * for a reason that may pass (a reseller balance short, the unit away, the process stopped before
 * it ran) stays due: the sweep retries it every PAYMENT_RENEWAL_RETRY_SECONDS, each checkout at
 * most every RETRY_BACKOFF_MINUTES, for RETRY_DAYS days after the payment.
 */
import { sql } from 'drizzle-orm';
import { systemAuth } from '../../shared/auth/claims';
import { db } from '../../shared/db/client';
import { FAILURES } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';

/** Days after the payment the sweep keeps trying; then the checkout's note asks for a renewal by hand. */
export const RETRY_DAYS = 3;
const RETRY_BACKOFF_MINUTES = 5;

export interface DueRenewal {
  checkoutId: number;
  subscriberId: number;
}

export type RenewalTry = 'renewed' | 'already_renewed' | 'not_made' | 'retry';

/** Answers after which no renewal will be made for the payment: the reason goes to the checkout's note. */
const NOT_MADE = [FAILURES.walletShort, FAILURES.subscriberNotFound, FAILURES.renewedToday];

async function notMade(checkoutId: number, why: string): Promise<void> {
  await db().execute(sql`
    update online_checkouts set renewal_due = false, note = concat_ws('; ', note, ${`renewal not made: ${why}`}::text)
     where id = ${checkoutId} and renewal_due`);
}

/** One try; the checkout stays due only when it failed for a reason that may pass. */
export async function renewPaid(ctx: Ctx<unknown>, due: DueRenewal): Promise<RenewalTry> {
  try {
    await ctx.call(
      'subscribers.renewFromWallet',
      { id: due.subscriberId, checkout_id: due.checkoutId },
      { meta: { auth: systemAuth('online-payment') } },
    );
    return 'renewed';
  } catch (err) {
    const e = err as { type?: string; code?: number; message?: string };
    const answer = e.type === 'API_ERROR' ? { status: Number(e.code), message: e.message } : null;
    const is = (f: { status: number; message: string }) => answer?.status === f.status && answer.message === f.message;
    if (is(FAILURES.renewedForPayment)) return 'already_renewed';
    const final = NOT_MADE.find(is);
    if (final) {
      await notMade(due.checkoutId, final.message);
      return 'not_made';
    }
    await db().execute(sql`update online_checkouts set renewal_tried_at = now() where id = ${due.checkoutId}`);
    ctx.service?.logger.warn(
      `online payment: renewal of subscriber ${due.subscriberId} (checkout ${due.checkoutId}) failed, retried later: ${e.message}`,
    );
    return 'retry';
  }
}

/**
 * The sweep: gives up on payments older than RETRY_DAYS, then tries the due renewals whose payment
 * is at least `graceSeconds` old (the webhook's own try runs meanwhile) and not tried in the last
 * RETRY_BACKOFF_MINUTES, the never tried first, one at a time.
 */
export async function retryDueRenewals(
  ctx: Ctx<unknown>,
  graceSeconds: number,
  limit = 100,
): Promise<Record<RenewalTry | 'given_up', number>> {
  const givenUp = await db().execute(sql`
    update online_checkouts
       set renewal_due = false,
           note = concat_ws('; ', note, ${`renewal not made within ${RETRY_DAYS} days of the payment: renew by hand`}::text)
     where renewal_due and completed_at < now() - make_interval(days => ${RETRY_DAYS})`);
  const { rows } = await db().execute<{ id: number; subscriber_id: number }>(sql`
    select id, subscriber_id from online_checkouts
     where renewal_due and completed_at < now() - make_interval(secs => ${graceSeconds})
       and (renewal_tried_at is null or renewal_tried_at < now() - make_interval(mins => ${RETRY_BACKOFF_MINUTES}))
     order by renewal_tried_at nulls first, completed_at limit ${limit}`);
  const counts = { renewed: 0, already_renewed: 0, not_made: 0, retry: 0, given_up: givenUp.rowCount ?? 0 };
  for (const r of rows) counts[await renewPaid(ctx, { checkoutId: r.id, subscriberId: r.subscriber_id })]++;
  return counts;
}
