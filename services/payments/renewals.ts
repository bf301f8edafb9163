/**
 * The renewal an online renewal payment paid for. The payment commits with the checkout's
 * `renewal_due` set (settle.ts); the renewal is then made through the subscribers unit from the
 * wallet, with the payment's day, so one made meanwhile (a first try that committed just before a
 * restart, an operator's) is never made twice. A try that failed for a passing reason (a lock
 * timeout, the unit away, the process stopped before it ran) stays due, and the sweep retries it
 * every PAYMENT_RENEWAL_RETRY_SECONDS, for RETRY_DAYS days after the payment.
 */
import { sql } from 'drizzle-orm';
import { systemAuth } from '../../shared/auth/claims';
import { db } from '../../shared/db/client';
import type { Ctx } from '../../shared/http/context';

/** Days after the payment the sweep keeps trying; then the checkout's note asks for a renewal by hand. */
export const RETRY_DAYS = 3;

/** A due renewal: the checkout and the day its payment arrived (UTC, as renewals record theirs). */
export interface DueRenewal {
  checkoutId: number;
  subscriberId: number;
  paidOn: string;
}

export type RenewalTry = 'renewed' | 'already_renewed' | 'not_made' | 'retry';

/** Answers after which no renewal will be made: the wallet no longer covers it, the subscriber is deleted. */
const NOT_MADE_STATUSES = [402, 404];

async function settle(checkoutId: number, note: string | null): Promise<void> {
  await db().execute(sql`
    update online_checkouts set renewal_due = false, note = nullif(concat_ws('; ', note, ${note}::text), '')
     where id = ${checkoutId} and renewal_due`);
}

/** One try; the checkout stays due only when it failed for a reason that may pass. */
export async function renewPaid(ctx: Ctx<unknown>, due: DueRenewal): Promise<RenewalTry> {
  try {
    await ctx.call(
      'subscribers.renewFromWallet',
      { id: due.subscriberId, paid_on: due.paidOn },
      { meta: { auth: systemAuth('online-payment') } },
    );
    await settle(due.checkoutId, null);
    return 'renewed';
  } catch (err) {
    const e = err as { type?: string; code?: number; message?: string };
    // 409: renewed today or since the payment (this payment's renewal, or an operator's).
    if (e.type === 'API_ERROR' && Number(e.code) === 409) {
      await settle(due.checkoutId, null);
      return 'already_renewed';
    }
    if (e.type === 'API_ERROR' && NOT_MADE_STATUSES.includes(Number(e.code))) {
      await settle(due.checkoutId, `renewal not made: ${e.message}`);
      return 'not_made';
    }
    ctx.service?.logger.warn(
      `online payment: renewal of subscriber ${due.subscriberId} (checkout ${due.checkoutId}) failed, retried later: ${e.message}`,
    );
    return 'retry';
  }
}

/**
 * The sweep: gives up on payments older than RETRY_DAYS, then tries the due renewals whose payment
 * is at least `graceSeconds` old (the webhook's own try runs meanwhile), oldest first, one at a time.
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
  const { rows } = await db().execute<{ id: number; subscriber_id: number; paid_on: string }>(sql`
    select id, subscriber_id, to_char(completed_at at time zone 'UTC', 'YYYY-MM-DD') as paid_on
      from online_checkouts
     where renewal_due and completed_at < now() - make_interval(secs => ${graceSeconds})
     order by completed_at limit ${limit}`);
  const counts = { renewed: 0, already_renewed: 0, not_made: 0, retry: 0, given_up: givenUp.rowCount ?? 0 };
  for (const r of rows)
    counts[await renewPaid(ctx, { checkoutId: r.id, subscriberId: r.subscriber_id, paidOn: r.paid_on })]++;
  return counts;
}
