/**
 * Indexes a bulk load leaves out while it writes (docs/import.md, "The history's indexes during a
 * large load"): row by row they cost more than the rows themselves, built once after the load a
 * sort each. Their definitions are recorded in `deferred_indexes` (committed) before they are
 * dropped, so a load that dies in between leaves what to build: `repairDeferredIndexes` does, at
 * every start (after the migrations). A load holds the advisory lock LOCK while they are out, so a
 * repair meanwhile leaves them to it; the lock goes with its session when the process dies.
 *
 * Only indexes no constraint stands on and that check nothing (not unique): a load keeps every check.
 * Dropped and built CONCURRENTLY: the app goes on writing those tables meanwhile.
 */
import type { ClientBase } from 'pg';
import { secondaryIndexes } from './secondary-indexes';

const LOCK = `hashtext('deferred_indexes')`;
/** One build's sort in memory (a million invoices' keys are well under it). */
const BUILD_MEMORY = '256MB';

export async function tryLockDeferredIndexes(client: ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK}) as locked`);
  return rows[0]?.locked === true;
}

export async function unlockDeferredIndexes(client: ClientBase): Promise<void> {
  await client.query(`select pg_advisory_unlock(${LOCK})`);
}

/**
 * Records, then drops, the non-unique secondary indexes of `tables`; their names. Outside a
 * transaction; the caller holds the lock.
 */
export async function deferIndexes(client: ClientBase, tables: string[]): Promise<string[]> {
  if (!tables.length) return [];
  const indexes = (await secondaryIndexes(client, tables)).filter((i) => !/^CREATE UNIQUE /.test(i.definition));
  await client.query(
    `insert into deferred_indexes (name, definition)
     select * from unnest($1::text[], $2::text[]) on conflict (name) do nothing`,
    [indexes.map((i) => i.name), indexes.map((i) => i.definition)],
  );
  for (const { name } of indexes) await client.query(`drop index concurrently if exists public.${name}`);
  return indexes.map((i) => i.name);
}

/**
 * Builds every recorded index again, one after the other (two CONCURRENTLY builds wait for each
 * other, on one table or two: measured, no faster side by side), each dropped first if a stopped
 * build left it invalid, and forgets it; the names built. Outside a transaction; the caller holds
 * the lock.
 */
export async function buildDeferredIndexes(client: ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string; definition: string; valid: boolean }>(
    `select d.name, d.definition,
            exists (select 1 from pg_index i where i.indexrelid = to_regclass('public.' || d.name)
                     and i.indisvalid and i.indisready) as valid
       from deferred_indexes d order by d.deferred_at, d.name`,
  );
  if (!rows.length) return [];
  await client.query(`set maintenance_work_mem = '${BUILD_MEMORY}'`);
  try {
    for (const { name, definition, valid } of rows) {
      if (!valid) {
        await client.query(`drop index concurrently if exists public.${name}`);
        await client.query(definition.replace(/^CREATE INDEX /, 'CREATE INDEX CONCURRENTLY '));
      }
      await client.query(`delete from deferred_indexes where name = $1`, [name]);
    }
  } finally {
    await client.query('reset maintenance_work_mem');
  }
  return rows.map((r) => r.name);
}

/** Builds what a stopped load left out, unless a load holds the lock; the names built. */
export async function repairDeferredIndexes(client: ClientBase): Promise<string[]> {
  if (!(await tryLockDeferredIndexes(client))) return [];
  try {
    return await buildDeferredIndexes(client);
  } finally {
    await unlockDeferredIndexes(client);
  }
}
