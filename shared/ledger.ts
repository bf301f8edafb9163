/**
 * The ledger: every movement of money writes one `transactions` row, inside the caller's
 * transaction. Amounts are signed minor units from the operator's point of view: money received
 * or credited is positive, money given back or debited is negative.
 */
import type { DbOrTx } from './db/client';
import { transactions } from './db/schema';

export const TRANSACTION_TYPES = [
  'invoice_payment',
  'wallet_credit',
  'wallet_debit',
  // Unused days of a plan given back to the wallet on a plan change: a revenue reversal, not cash
  // received, so negative like any money given back.
  'plan_change_credit',
  'reseller_credit',
  'reseller_debit',
  'renewal',
  'rename_fee',
  'refill_fee',
] as const;
export type TransactionType = (typeof TRANSACTION_TYPES)[number];

export interface LedgerEntry {
  type: TransactionType;
  amount: number;
  currency: string;
  subscriberId?: number | null;
  username?: string | null;
  resellerId?: number | null;
  invoiceId?: number | null;
  method?: string | null;
  reference?: string | null;
  notes?: string | null;
  createdBy?: number | null;
  createdAt?: Date;
}

export async function recordTransaction(tx: DbOrTx, entry: LedgerEntry): Promise<number> {
  const [row] = await tx.insert(transactions).values(entry).returning({ id: transactions.id });
  return row.id;
}
