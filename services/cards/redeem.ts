/**
 * Redeeming a card (docs/cards.md). One transaction: the card row locked by its PIN's hash (so of 50
 * concurrent redemptions of one PIN exactly one finds it unused) and its batch's row shared (a batch
 * suspended meanwhile is waited for and refuses the card), the checks (used, suspended,
 * expired, the batch's reseller tree), the reseller's charge when its batch is charged at redemption,
 * the wallet credited through the one writer (method `prepaid_card`, the serial as reference: one
 * ledger row), the card marked used, and for a money card the open invoices paid from the wallet
 * oldest first (an overdue suspension ends there). Renewals (a plan card; a money card of an expired
 * auto-renew subscriber) run after commit through the subscribers unit.
 *
 * Guessing: every try is a row of card_redeem_attempts; MAX_FAILS_SUBSCRIBER invalid PINs for one
 * subscriber or MAX_FAILS_ADDRESS from one address within WINDOW_MINUTES lock further tries out
 * (429) until the window passes or a manager lifts it. The lockout check, the PIN's lookup and the
 * invalid PIN's row are one transaction under the subscriber's and the address's advisory locks, so
 * concurrent guesses are counted one after the other and a burst gets no more of them checked.
 */
import { sql } from 'drizzle-orm';
import { recordAudit } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import { db, type DbOrTx } from '../../shared/db/client';
import { cardRedeemAttempts } from '../../shared/db/schema';
import {
  creditWallet,
  RENEWAL_COLUMNS,
  renewalParties,
  settleFromWallet,
  todayUtc,
  type RenewalColumns,
} from '../../shared/billing';
import { ApiError } from '../../shared/errors';
import { walletCoversRenewal } from '../../shared/domain/subscriber';
import { fail, FAILURES } from '../../shared/failures';
import { SETTING_DEFS } from '../../shared/settings';
import { chargeReseller } from './batches';
import { normalizePin, pinHash } from './pins';

export const MAX_FAILS_SUBSCRIBER = 5;
export const MAX_FAILS_ADDRESS = 20;
export const WINDOW_MINUTES = 15;

export interface RedeemRequest {
  subscriberId: number;
  pin: string;
  address: string | null;
  managerId: number | null;
  /** The operator redeeming for a subscriber: its audit row is written with the redemption. */
  auth?: Auth;
}

export interface Redeemed {
  cardId: number;
  serial: string;
  batchId: number;
  kind: 'money' | 'plan';
  /** Minor units credited to the wallet. */
  amount: number;
  currency: string;
  serviceId: number | null;
  /** The plan card's plan, by name. */
  planName: string | null;
  transactionId: number;
  paidInvoices: { invoiceId: number; amount: number }[];
  walletBalance: number;
  /** Renew after commit: a plan card, or a money card of an expired auto-renew subscriber whose wallet covers it. */
  renew: boolean;
}

type CardLocked = {
  id: number;
  serial: string;
  status: string;
  batch_id: number;
  batch_status: string;
  value: number | null;
  service_id: number | null;
  currency: string;
  expires_at: string | null;
  reseller_id: number | null;
  charge_mode: string;
  reseller_path: string | null;
};

/** The advisory lock of one subscriber's tries, and of one address's (hashed: a collision only waits). */
const LOCK_SUBSCRIBER = sql`hashtext('cards.redeem.subscriber')`;
const LOCK_ADDRESS = sql`hashtext('cards.redeem.address')`;

/**
 * Refuses a try while its subscriber or address is locked out (429), or a PIN that names no card
 * (400), each recorded with its count under the same locks, taken always subscriber first so two
 * tries cannot wait for each other. A PIN that names a card passes and is recorded by the redemption.
 */
async function guardGuess(req: RedeemRequest, pin: string): Promise<void> {
  const refusal = await db().transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_SUBSCRIBER}, ${req.subscriberId})`);
    if (req.address !== null)
      await tx.execute(sql`select pg_advisory_xact_lock(${LOCK_ADDRESS}, hashtext(${req.address}))`);
    const { rows } = await tx.execute<{ by_sub: number; by_addr: number; known: boolean }>(sql`
      select count(*) filter (where subscriber_id = ${req.subscriberId})::int as by_sub,
             count(*) filter (where address = ${req.address})::int as by_addr,
             exists (select 1 from cards where pin_hash = ${pinHash(pin)}) as known
        from card_redeem_attempts
       where not ok and reason = ${FAILURES.cardPinInvalid.message} and cleared_at is null
         and created_at > now() - make_interval(mins => ${WINDOW_MINUTES})
         and (subscriber_id = ${req.subscriberId} or address = ${req.address})`);
    const { by_sub: bySub, by_addr: byAddress, known } = rows[0];
    const locked = bySub >= MAX_FAILS_SUBSCRIBER || (req.address !== null && byAddress >= MAX_FAILS_ADDRESS);
    const failure = locked ? 'redeemLocked' : known && /^\d{6,20}$/.test(pin) ? null : 'cardPinInvalid';
    if (failure) await record(tx, req, false, null, FAILURES[failure].message);
    return failure;
  });
  if (refusal) throw fail(refusal);
}

async function record(tx: DbOrTx, req: RedeemRequest, ok: boolean, cardId: number | null, reason: string | null) {
  await tx.insert(cardRedeemAttempts).values({
    subscriberId: req.subscriberId,
    address: req.address,
    ok,
    cardId,
    reason,
    managerId: req.managerId,
  });
}

export async function redeemCard(req: RedeemRequest): Promise<Redeemed> {
  const pin = normalizePin(req.pin);
  await guardGuess(req, pin);
  let cardId: number | null = null;
  try {
    return await db().transaction(async (tx) => {
      const found = await tx.execute<CardLocked>(sql`
        select c.id, c.serial, c.status, c.batch_id, b.status as batch_status, b.value, b.service_id, b.currency,
               to_char(b.expires_at, 'YYYY-MM-DD') as expires_at, b.reseller_id, b.charge_mode, r.path as reseller_path
          from cards c join card_batches b on b.id = c.batch_id left join resellers r on r.id = b.reseller_id
         where c.pin_hash = ${pinHash(pin)}
         for update of c for share of b`);
      const card = found.rows[0];
      if (!card) throw fail('cardPinInvalid');
      cardId = Number(card.id);
      if (card.status === 'used') throw fail('cardUsed');
      if (card.status === 'suspended' || card.batch_status === 'suspended') throw fail('cardSuspended');
      const today = todayUtc();
      if (card.expires_at !== null && card.expires_at < today) throw fail('cardExpired');
      const subs = await tx.execute<
        RenewalColumns & {
          id: number;
          path: string;
          reseller_id: number;
          auto_renew: boolean;
          status: string;
          expired: boolean;
          currency: string;
          default_tax_rate: string;
        }
      >(sql`
        select s.id, r.path, s.reseller_id, s.auto_renew, s.status, s.expiry_date < ${today}::date as expired, ${RENEWAL_COLUMNS},
               coalesce((select value #>> '{}' from settings where key = 'currency'), ${SETTING_DEFS.currency.default}) as currency,
               coalesce((select value #>> '{}' from settings where key = 'default_tax_rate'),
                        ${String(SETTING_DEFS.default_tax_rate.default)}) as default_tax_rate
          from subscribers s join resellers r on r.id = s.reseller_id join services p on p.id = s.service_id
         where s.id = ${req.subscriberId} and s.deleted_at is null
         for update of s`);
      const sub = subs.rows[0];
      if (!sub) throw fail('subscriberNotFound');
      // The subscriber itself (self-care) on an account the operator deactivated: as its other purchases.
      if (req.auth?.subscriberId !== undefined && sub.status !== 'active') throw fail('accountInactive');
      // The settings `currency` and `default_tax_rate`, read in the statement above (defaults from shared/settings.ts when unset).
      if (card.reseller_path !== null && !sub.path.startsWith(card.reseller_path)) throw fail('cardOtherTree');
      const currency = sub.currency;
      let amount: number;
      let planName: string | null = null;
      if (card.value !== null) amount = Number(card.value);
      else {
        const plan = await tx.execute<{ price: number; currency: string; name: string }>(
          sql`select price, currency, name from services where id = ${card.service_id}`,
        );
        if (!plan.rows[0]) throw fail('serviceNotFound');
        // The batch took its plan's currency when made; a plan repriced in another since cannot be paid with it.
        if (plan.rows[0].currency !== card.currency)
          throw fail('cardPlanCurrency', plan.rows[0].currency, card.currency);
        amount = Number(plan.rows[0].price);
        planName = plan.rows[0].name;
      }
      if (card.currency !== currency) throw fail('walletCurrencyMismatch', currency, card.currency);
      if (card.reseller_id !== null && card.charge_mode === 'redemption') {
        await chargeReseller(
          tx,
          Number(card.reseller_id),
          amount,
          card.currency,
          `prepaid card ${card.serial}`,
          card.serial,
          req.managerId,
        );
      }
      const credit = await creditWallet(tx, {
        subscriberId: req.subscriberId,
        amount,
        currency,
        reason: `prepaid card ${card.serial}`,
        method: 'prepaid_card',
        reference: card.serial,
        createdBy: req.managerId,
      });
      // The card used and the try recorded in one statement.
      await tx.execute(sql`
        with used as (
          update cards set status = 'used', used_at = now(), used_by_subscriber_id = ${req.subscriberId},
                           transaction_id = ${credit.transactionId}
           where id = ${card.id} returning id)
        insert into card_redeem_attempts (subscriber_id, address, ok, card_id, manager_id)
        select ${req.subscriberId}, ${req.address}, true, id, ${req.managerId} from used`);
      const kind = card.value !== null ? 'money' : 'plan';
      if (req.auth) {
        await recordAudit(tx, req.auth, {
          action: 'card.redeem',
          entity: 'subscriber',
          entityId: req.subscriberId,
          resellerId: Number(sub.reseller_id),
          details: {
            card_id: Number(card.id),
            serial: card.serial,
            kind,
            amount,
            transaction_id: credit.transactionId,
          },
        });
      }
      const settled =
        kind === 'money'
          ? await settleFromWallet(tx, req.subscriberId, { walletBalance: credit.walletBalance, currency })
          : { paid: [], walletBalance: credit.walletBalance };
      const parties = renewalParties(sub);
      const renew =
        kind === 'plan' ||
        (sub.auto_renew &&
          sub.expired &&
          walletCoversRenewal({ ...parties.subscriber, walletBalance: settled.walletBalance }, parties.plan, {
            currency,
            default_tax_rate: sub.default_tax_rate,
          }));
      return {
        cardId: Number(card.id),
        serial: card.serial,
        batchId: Number(card.batch_id),
        kind,
        amount,
        currency,
        serviceId: card.service_id === null ? null : Number(card.service_id),
        planName,
        transactionId: credit.transactionId,
        paidInvoices: settled.paid,
        walletBalance: settled.walletBalance,
        renew,
      };
    });
  } catch (err) {
    if (err instanceof ApiError) await record(db(), req, false, cardId, err.message);
    throw err;
  }
}
