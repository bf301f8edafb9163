/**
 * Named (prepared) statements inside a Drizzle transaction, for the hottest billing writes: the
 * statement is parsed and planned once per connection and no SQL is rebuilt per call (Drizzle's
 * query building was the largest CPU cost of a payment). Drizzle keeps the transaction's pg client
 * on `session.client`; that is not public API, so the lookup is checked and fails loudly (the
 * integration tests run through here) rather than silently leaving the transaction.
 */
import type { PoolClient, QueryResultRow } from 'pg';
import type { Tx } from '../db/client';

export function clientOf(tx: Tx): PoolClient {
  const client = (tx as unknown as { session?: { client?: PoolClient } }).session?.client;
  if (!client || typeof client.query !== 'function')
    throw new Error('drizzle transaction without a pg client (drizzle-orm internals changed)');
  return client;
}

export async function txQuery<T extends QueryResultRow>(
  tx: Tx,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  const res = await clientOf(tx).query<T>({ name, text, values });
  return res.rows;
}

/** Invoice columns under the Drizzle row's property names, so raw rows are `InvoiceRow`s. */
export const INVOICE_COLUMNS = `i.id, i.invoice_number as "invoiceNumber", i.subscriber_id as "subscriberId",
  i.reseller_id as "resellerId", i.kind, i.amount, i.tax_rate as "taxRate", i.tax_amount as "taxAmount", i.total,
  i.paid_amount as "paidAmount", i.status, i.currency, i.issue_date as "issueDate", i.due_date as "dueDate",
  i.paid_at as "paidAt", i.notes, i.commission_rate as "commissionRate", i.commission_amount as "commissionAmount",
  i.consolidated_into as "consolidatedInto", i.public_token_nonce as "publicTokenNonce",
  i.public_token_hash as "publicTokenHash", i.created_by as "createdBy", i.created_at as "createdAt",
  i.updated_at as "updatedAt"`;
