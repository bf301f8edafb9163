/**
 * Subscriber prepaid credit. `subscribers.wallet_balance` is the running sum of `wallet_entries`;
 * both change together with one ledger row. The wallet holds the system currency.
 *
 * Ledger convention: money put into the wallet is a `wallet_credit` transaction (cash received);
 * paying an invoice from the wallet is an `invoice_payment` transaction with method `wallet` whose
 * wallet side is a negative `wallet_entries` row pointing at that same transaction.
 */
import { eq, sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { subscribers, walletEntries } from '../db/schema';
import { fail } from '../failures';
import { recordTransaction } from '../ledger';
import { loadSettings } from '../settings';
import { restoreIfSuspended } from './restore';
import { lockInvoice } from './invoices';
import { recordPayment } from './record-payment';
import { lockSubscriber } from './subscribers';
import type { PaymentMethod, PaymentResult } from './types';

export interface WalletCreditInput {
  subscriberId: number;
  /** Minor units, > 0. */
  amount: number;
  /** Default: setting `currency`. */
  currency?: string;
  /** Why, stored on the wallet entry (e.g. `add-balance`, `quick-pay excess`, `service change credit`). */
  reason: string;
  method?: PaymentMethod | null;
  reference?: string | null;
  notes?: string | null;
  createdBy?: number | null;
  /**
   * `plan_change_credit`: value given back (a plan change's unused days), written negative in the
   * ledger, so the reports take it off revenue instead of counting it as a top-up received.
   */
  ledgerType?: 'wallet_credit' | 'plan_change_credit';
}

export interface WalletCreditResult {
  transactionId: number;
  walletEntryId: number;
  walletBalance: number;
}

/**
 * The system currency, held against a change: shared by every wallet credit until it commits, taken
 * alone by a currency change before it checks that every wallet is 0. Without it a credit made
 * while the currency changed landed in an emptied wallet in the old currency's minor units.
 */
export async function lockWalletCurrency(tx: Tx, mode: 'credit' | 'change'): Promise<string> {
  const lock = mode === 'credit' ? sql`pg_advisory_xact_lock_shared` : sql`pg_advisory_xact_lock`;
  await tx.execute(sql`select ${lock}(hashtext('settings.currency'))`);
  // Read after the lock, in a statement of its own: its snapshot sees a change that committed meanwhile.
  return (await loadSettings(tx, ['currency'])).currency;
}

export async function creditWallet(tx: Tx, input: WalletCreditInput): Promise<WalletCreditResult> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0) throw fail('amountNotPositive');
  const currency = await lockWalletCurrency(tx, 'credit');
  if (input.currency !== undefined && input.currency !== currency)
    throw fail('walletCreditCurrency', currency, input.currency);
  const [sub] = await tx
    .update(subscribers)
    .set({ walletBalance: sql`${subscribers.walletBalance} + ${input.amount}` })
    .where(eq(subscribers.id, input.subscriberId))
    .returning({
      username: subscribers.username,
      resellerId: subscribers.resellerId,
      walletBalance: subscribers.walletBalance,
    });
  if (!sub) throw fail('subscriberNotFound');
  const given = input.ledgerType === 'plan_change_credit';
  const transactionId = await recordTransaction(tx, {
    type: input.ledgerType ?? 'wallet_credit',
    amount: given ? -input.amount : input.amount,
    currency,
    subscriberId: input.subscriberId,
    username: sub.username,
    resellerId: sub.resellerId,
    method: input.method ?? null,
    reference: input.reference ?? null,
    notes: input.notes ?? input.reason,
    createdBy: input.createdBy ?? null,
  });
  const [entry] = await tx
    .insert(walletEntries)
    .values({ subscriberId: input.subscriberId, amount: input.amount, transactionId, reason: input.reason })
    .returning({ id: walletEntries.id });
  return { transactionId, walletEntryId: entry.id, walletBalance: sub.walletBalance };
}

export interface WalletPaymentInput {
  invoiceId: number;
  /** Minor units. Omitted: as much as the wallet and the balance allow. */
  amount?: number;
  /** With `amount`: refuse (400) rather than pay less when the wallet holds less. */
  exact?: boolean;
  /** A void invoice pays nothing instead of 409 (a settlement over invoices read before their locks). */
  skipVoid?: boolean;
  reference?: string | null;
  notes?: string | null;
  paidAt?: Date;
  createdBy?: number | null;
}

export type WalletPaymentResult = { applied: number } & (
  PaymentResult | { invoice: null; payment: null; transactionId: null }
);

/**
 * Pays an invoice from its subscriber's wallet (renewals: "paid from the wallet first when it holds
 * credit"). Returns applied 0 and writes nothing when the wallet is empty, the invoice has no
 * balance, or the invoice is not in the wallet's currency. A void invoice is 409 `invoice is void`.
 */
export async function payFromWallet(tx: Tx, input: WalletPaymentInput): Promise<WalletPaymentResult> {
  const [head] = await tx
    .execute<{ subscriber_id: number }>(sql`select subscriber_id from invoices where id = ${input.invoiceId}`)
    .then((r) => r.rows);
  if (!head) throw fail('invoiceNotFound');
  const subscriber = await lockSubscriber(tx, head.subscriber_id);
  const invoice = await lockInvoice(tx, input.invoiceId);
  if (invoice.status === 'void') {
    if (input.skipVoid) return { applied: 0, invoice: null, payment: null, transactionId: null };
    throw fail('invoiceVoid');
  }
  const { currency } = await loadSettings(tx, ['currency']);
  const balance = invoice.total - invoice.paidAmount;
  const wanted = input.amount ?? balance;
  if (input.exact) {
    if (wanted > balance) throw fail('amountExceedsBalance');
    if (invoice.currency !== currency) throw fail('walletCurrencyMismatch', currency, invoice.currency);
    if (subscriber.walletBalance < wanted) throw fail('amountExceedsWallet');
  }
  const take = invoice.currency === currency ? Math.min(wanted, balance, subscriber.walletBalance) : 0;
  if (take <= 0) {
    if (input.exact) throw fail('amountNotPositive');
    return { applied: 0, invoice: null, payment: null, transactionId: null };
  }
  const result = await recordPayment(
    tx,
    { ...invoice, username: subscriber.username },
    { ...input, amount: take, method: 'wallet' },
  );
  await tx.insert(walletEntries).values({
    subscriberId: subscriber.id,
    amount: -take,
    transactionId: result.transactionId,
    reason: `invoice ${invoice.invoiceNumber}`,
  });
  await tx
    .update(subscribers)
    .set({ walletBalance: sql`${subscribers.walletBalance} - ${take}` })
    .where(eq(subscribers.id, subscriber.id));
  await restoreIfSuspended(tx, subscriber.id, [invoice.dueDate]);
  return { applied: take, ...result };
}
