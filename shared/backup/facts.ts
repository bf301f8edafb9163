/**
 * What a backup's manifest states about the database and a restore checks again: rows per table
 * and the ledger's totals (exact integers in minor units, as text). Both read inside the caller's
 * transaction, so a backup's figures are those of the very snapshot it copies.
 */
import type { ClientBase } from 'pg';

/** The application's tables: every ordinary table of the public schema, by name. */
export async function appTables(client: ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'r' order by c.relname`,
  );
  return rows.map((r) => r.name);
}

export async function rowCounts(client: ClientBase, tables: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of tables) {
    const { rows } = await client.query<{ n: string }>(`select count(*)::text as n from "${table}"`);
    out[table] = Number(rows[0].n);
  }
  return out;
}

/**
 * Sums of money, per currency where rows carry one: the ledger (`transactions`, per type), invoice
 * payments, wallet entries and the balances they feed. Keys are stable names, values exact sums.
 */
export async function ledgerTotals(client: ClientBase): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const put = (key: string, value: string | null) => {
    out[key] = value ?? '0';
  };
  const ledger = await client.query<{ type: string; currency: string; n: string; total: string }>(
    `select type, currency, count(*)::text as n, sum(amount)::text as total
       from transactions group by type, currency order by type, currency`,
  );
  for (const r of ledger.rows) {
    put(`transactions.${r.type}.${r.currency}.count`, r.n);
    put(`transactions.${r.type}.${r.currency}.amount`, r.total);
  }
  const sums: [string, string][] = [
    ['invoice_payments.amount', `select sum(amount)::text as v from invoice_payments`],
    ['wallet_entries.amount', `select sum(amount)::text as v from wallet_entries`],
    ['invoices.total', `select sum(total)::text as v from invoices`],
    ['invoices.paid_amount', `select sum(paid_amount)::text as v from invoices`],
    ['subscribers.wallet_balance', `select sum(wallet_balance)::text as v from subscribers`],
    ['resellers.balance', `select sum(balance)::text as v from resellers`],
  ];
  for (const [key, sql] of sums) {
    const { rows } = await client.query<{ v: string | null }>(sql);
    put(key, rows[0].v);
  }
  return out;
}
