/**
 * Bulk loads (a restore, a bench's seed) build the indexes no constraint stands on once, after the
 * rows are in, as pg_restore does, instead of updating each of them row by row during the load.
 */
import type { ClientBase } from 'pg';

export interface SecondaryIndex {
  name: string;
  definition: string;
}

/**
 * The indexes of public tables (all, or those named) that no constraint stands on (not a primary
 * key, unique or exclusion constraint's, not one a foreign key references), nor the replica
 * identity or a CLUSTER mark, with the statement that makes each again as it is (method, columns,
 * predicate, storage options).
 */
export async function secondaryIndexes(client: ClientBase, tables?: string[]): Promise<SecondaryIndex[]> {
  const { rows } = await client.query<SecondaryIndex>(
    `select quote_ident(ic.relname) as name, pg_get_indexdef(i.indexrelid) as definition
       from pg_index i
       join pg_class ic on ic.oid = i.indexrelid
       join pg_class t on t.oid = i.indrelid
       join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = 'public' and t.relkind = 'r' and not i.indisreplident and not i.indisclustered
        and ($1::text[] is null or t.relname = any($1::text[]))
        and not exists (select 1 from pg_constraint c where c.conindid = i.indexrelid)
      order by ic.relname`,
    [tables ?? null],
  );
  return rows;
}

/** Drops those indexes; the caller loads its rows, then makes them again with createIndexes. */
export async function dropSecondaryIndexes(client: ClientBase, tables?: string[]): Promise<SecondaryIndex[]> {
  const indexes = await secondaryIndexes(client, tables);
  for (const index of indexes) await client.query(`drop index public.${index.name}`);
  return indexes;
}

export async function createIndexes(client: ClientBase, indexes: SecondaryIndex[]): Promise<void> {
  for (const index of indexes) await client.query(index.definition);
}
