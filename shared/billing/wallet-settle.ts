/**
 * Wallet money goes to the open invoices (pending, partial, overdue) in the wallet's currency,
 * oldest issue date first then lowest id, as quick-pay orders them: what a prepaid card or an online
 * payment that no longer fits put into the wallet pays what the subscriber owes. Each invoice paid is
 * a wallet payment (payFromWallet: an `invoice_payment` with method `wallet`), so the money
 * received stays one `wallet_credit` ledger row; an overdue suspension ends through its restore path.
 */
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { invoiceBlocksSql } from '../access/blocked';
import { OPEN_STATUSES } from '../domain/invoice-state';
import { payFromWallet } from './wallet';

export interface WalletSettlement {
  /** Invoices paid from the wallet, in the order paid, with the minor units each got. */
  paid: { invoiceId: number; amount: number }[];
  /** What the wallet holds afterwards (minor units). */
  walletBalance: number;
}

/**
 * `known`: what the caller read under the subscriber's row lock, which it holds: the wallet balance
 * and the system currency; `upTo`, when set, the most that may be spent (a refund pays with itself,
 * not with what the wallet held before it); `blockingOnly`: only the invoices that block access
 * (invoiceBlocksSql: overdue past `suspend_overdue_after_days`).
 */
export async function settleFromWallet(
  tx: Tx,
  subscriberId: number,
  known: { walletBalance: number; currency: string; upTo?: number; blockingOnly?: boolean },
): Promise<WalletSettlement> {
  let wallet = known.walletBalance;
  let budget = Math.min(wallet, known.upTo ?? wallet);
  const paid: WalletSettlement['paid'] = [];
  if (budget <= 0) return { paid, walletBalance: wallet };
  const { currency } = known;
  const open = await tx.execute<{ id: number }>(sql`
    select id from invoices i
     where subscriber_id = ${subscriberId} and currency = ${currency}
       and status = any(${sql.param([...OPEN_STATUSES])}::text[])
       ${known.blockingOnly ? sql`and ${invoiceBlocksSql()}` : sql``}
     order by issue_date, id`);
  for (const row of open.rows) {
    if (budget <= 0) break;
    const r = await payFromWallet(tx, { invoiceId: Number(row.id), amount: budget, skipVoid: true });
    if (r.applied > 0) {
      paid.push({ invoiceId: Number(row.id), amount: r.applied });
      wallet -= r.applied;
      budget -= r.applied;
    }
  }
  return { paid, walletBalance: wallet };
}
