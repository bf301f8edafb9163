/**
 * New invoices paid from their subscribers' wallets as one set (renewals: bulk renew and the
 * lifecycle sweep's auto-renew renew thousands at once). Writes exactly what `payFromWallet` writes
 * for each invoice (an `invoice_payment` ledger row with method `wallet`, its `invoice_payments`
 * row, a negative `wallet_entries` row and the wallet balance) in one statement instead of about
 * ten per invoice. The caller holds the subscriber rows' locks and has just created the invoices in
 * its transaction, so the balances it passes are current and no other payment can touch them.
 */
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import type { InvoiceRow } from './types';

export interface WalletDraw {
  invoice: Pick<InvoiceRow, 'id' | 'invoiceNumber' | 'total' | 'paidAmount' | 'currency' | 'resellerId'>;
  subscriber: { id: number; username: string; walletBalance: number };
}

/**
 * Pays each invoice as much as its subscriber's wallet holds, up to its balance, when the invoice is
 * in the wallet's currency (`walletCurrency`, the system currency); returns the minor units applied
 * per invoice id (0 or absent: nothing written for it).
 */
export async function payNewInvoicesFromWallets(
  tx: Tx,
  draws: WalletDraw[],
  walletCurrency: string,
  createdBy: number | null,
): Promise<Map<number, number>> {
  const applied = new Map<number, number>();
  const rows = draws
    .map((d) => ({
      ...d,
      take:
        d.invoice.currency === walletCurrency
          ? Math.min(d.subscriber.walletBalance, d.invoice.total - d.invoice.paidAmount)
          : 0,
    }))
    .filter((d) => d.take > 0);
  if (rows.length === 0) return applied;
  const col = <T>(f: (d: (typeof rows)[number]) => T) => sql.param(rows.map(f));
  await tx.execute(sql`
    with v as (
      select * from unnest(${col((d) => d.invoice.id)}::int[], ${col((d) => d.subscriber.id)}::int[],
                           ${col((d) => d.take)}::bigint[], ${col((d) => d.subscriber.username)}::text[],
                           ${col((d) => d.invoice.resellerId)}::int[], ${col((d) => d.invoice.invoiceNumber)}::text[])
        as v(invoice_id, subscriber_id, take, username, reseller_id, invoice_number)
    ), upd as (
      update invoices i
         set paid_amount = i.paid_amount + v.take,
             status = case when i.paid_amount + v.take >= i.total then 'paid' else 'partial' end,
             paid_at = case when i.paid_amount + v.take >= i.total then now() else i.paid_at end,
             updated_at = now()
        from v where i.id = v.invoice_id
      returning i.id
    ), t as (
      insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, invoice_id, method, created_by)
      select 'invoice_payment', v.take, ${walletCurrency}, v.subscriber_id, v.username, v.reseller_id, v.invoice_id, 'wallet', ${createdBy}::int
        from v order by v.invoice_id
      returning id, invoice_id
    ), pay as (
      insert into invoice_payments (invoice_id, transaction_id, amount, method, paid_at, created_by)
      select t.invoice_id, t.id, v.take, 'wallet', now(), ${createdBy}::int from t join v on v.invoice_id = t.invoice_id
    ), entries as (
      insert into wallet_entries (subscriber_id, amount, transaction_id, reason)
      select v.subscriber_id, -v.take, t.id, 'invoice ' || v.invoice_number from t join v on v.invoice_id = t.invoice_id
    ), wallets as (
      update subscribers s set wallet_balance = s.wallet_balance - v.take from v where s.id = v.subscriber_id
    )
    select count(*) from upd`);
  for (const d of rows) applied.set(d.invoice.id, d.take);
  return applied;
}
