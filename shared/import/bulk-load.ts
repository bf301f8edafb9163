/**
 * When an import's load is large enough to write its tables without their secondary indexes and
 * build those once after (radacct's for the sessions, the ledger's and the invoices' for the history).
 */
import type { ClientBase, Pool } from 'pg';
import type { Db } from '../db/client';
import {
  buildDeferredIndexes,
  deferIndexes,
  tryLockDeferredIndexes,
  unlockDeferredIndexes,
} from '../db/deferred-indexes';

/**
 * A load goes without a table's indexes when it brings at least BULK_FROM rows and over twice what
 * the table holds: building them after costs a sort of every row, writing them costs more than the
 * rows. Twice, not once: the source's count may be an estimate (InnoDB's), and a second run, whose
 * rows are all here already, must not rebuild them for nothing.
 */
export const BULK_FROM = 100_000;
export const outweighs = (incoming: number, held: number, from = BULK_FROM) => incoming >= from && incoming > 2 * held;

/**
 * A table's rows as the planner estimates them: the last ANALYZE's rows per page times its pages now
 * (autovacuum may be off), or, never analyzed, its size over 250 bytes a row (more rows than it has:
 * the rule errs on keeping the indexes).
 */
export async function estimatedRows(client: ClientBase, table: string): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `select (case when c.reltuples > 0 and c.relpages > 0
                  then c.reltuples / c.relpages * (pg_relation_size(c.oid) / current_setting('block_size')::int)
                  else pg_relation_size(c.oid) / 250 end)::float8 as n
       from pg_class c where c.oid = to_regclass('public.' || $1)`,
    [table],
  );
  return rows[0].n;
}

/** The pool behind `db`: a lock is held on one connection while the writes take others. */
export function poolOf(db: Db): Pool {
  const client = (db as unknown as { $client?: Pool }).$client;
  if (!client || typeof client.connect !== 'function' || !('totalCount' in client))
    throw new Error('the import needs a database on a pg Pool');
  return client;
}

/**
 * The tables an imported history row writes: an invoice and its line, and for what was paid a
 * ledger row and the invoice's payment.
 */
export const HISTORY_TABLES = ['invoices', 'invoice_items', 'transactions', 'invoice_payments'] as const;

export interface DeferredLoad {
  /** The indexes left out, by name. */
  indexes: string[];
  /** Builds them again, frees the lock and the connection. */
  finish(): Promise<void>;
}

/**
 * Before a history of `rows` rows is written: the secondary indexes of each history table it
 * outweighs are dropped (shared/db/deferred-indexes.ts), on a connection of its own that holds the
 * lock until they are built again. Undefined when no table is outweighed, or another load holds the
 * lock (its indexes are its own to build).
 */
export async function deferHistoryIndexes(
  db: Db,
  rows: number,
  bulkFrom = BULK_FROM,
): Promise<DeferredLoad | undefined> {
  if (!outweighs(rows, 0, bulkFrom)) return undefined;
  const client = await poolOf(db).connect();
  let indexes: string[];
  try {
    const tables: string[] = [];
    for (const table of HISTORY_TABLES)
      if (outweighs(rows, await estimatedRows(client, table), bulkFrom)) tables.push(table);
    if (!tables.length || !(await tryLockDeferredIndexes(client))) {
      client.release();
      return undefined;
    }
    indexes = await deferIndexes(client, tables);
  } catch (err) {
    // Ending the session frees the lock: what was recorded is built by the next start.
    client.release(err as Error);
    throw err;
  }
  return {
    indexes,
    async finish() {
      try {
        await buildDeferredIndexes(client);
        await unlockDeferredIndexes(client);
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
      client.release();
    },
  };
}
