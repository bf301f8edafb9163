/**
 * radacct's two B-trees over every session (migration 0001): the session lists, the subscriber page
 * and `session_hours_owner` read them. A bulk load of sessions (an import of an accounting history,
 * docs/import.md "Sessions") writes them in random order, about half of its insert's cost, so it
 * drops them and builds them once after the load. A load stopped in between (a crash, a kill) would
 * leave radacct without them: `repairRadacctIndexes` builds what is missing or invalid (a failed
 * CONCURRENTLY build leaves an invalid index behind), at every start (after the migrations) and at
 * the start of every import. A load holds the advisory lock LOCK for as long as they are dropped, so
 * a repair meanwhile leaves them to it; the lock goes with its session when the process dies.
 */
import type { ClientBase } from 'pg';

export const RADACCT_BULK_INDEXES = [
  { name: 'radacct_username_start_idx', columns: 'username, acctstarttime' },
  { name: 'radacct_start_idx', columns: 'acctstarttime' },
] as const;

const LOCK = `hashtext('radacct.bulk_indexes')`;
/** Their sort in memory: 10,000,000 sessions' keys are a few hundred MB. */
const BUILD_MEMORY = '512MB';

/** Takes the lock if no load holds it; false when one does. */
export async function tryLockRadacctIndexes(client: ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK}) as locked`);
  return rows[0]?.locked === true;
}

export async function unlockRadacctIndexes(client: ClientBase): Promise<void> {
  await client.query(`select pg_advisory_unlock(${LOCK})`);
}

/** Those of RADACCT_BULK_INDEXES that are not there and valid, by name. */
export async function brokenRadacctIndexes(client: ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select w.name from unnest($1::text[]) as w(name)
      where not exists (select 1 from pg_index i join pg_class c on c.oid = i.indexrelid
                         where c.oid = to_regclass('public.' || w.name) and i.indisvalid and i.indisready)`,
    [RADACCT_BULK_INDEXES.map((i) => i.name)],
  );
  return rows.map((r) => r.name);
}

/**
 * Drops them (CONCURRENTLY: FreeRADIUS's inserts are not blocked). Outside a transaction; the caller
 * holds the lock.
 */
export async function dropRadacctIndexes(client: ClientBase): Promise<void> {
  for (const { name } of RADACCT_BULK_INDEXES) await client.query(`drop index concurrently if exists public.${name}`);
}

/**
 * Builds the named ones again, one after the other (CONCURRENTLY takes a lock that two builds on one
 * table cannot share; each uses parallel workers for its scan and sort): FreeRADIUS goes on writing
 * radacct meanwhile, where a plain CREATE INDEX would block its inserts for the whole build. An
 * invalid one (a build stopped half-way) is dropped first. Outside a transaction; the caller holds the
 * lock.
 */
export async function buildRadacctIndexes(client: ClientBase, names: string[]): Promise<void> {
  if (!names.length) return;
  await client.query(`set maintenance_work_mem = '${BUILD_MEMORY}'`);
  try {
    for (const { name, columns } of RADACCT_BULK_INDEXES.filter((i) => names.includes(i.name))) {
      await client.query(`drop index concurrently if exists public.${name}`);
      await client.query(`create index concurrently ${name} on public.radacct using btree (${columns})`);
    }
  } finally {
    await client.query('reset maintenance_work_mem');
  }
}

/**
 * Builds those missing or invalid, unless a load holds the lock (it builds them at its end, or its
 * stop frees the lock for the next repair). Returns the names built.
 */
export async function repairRadacctIndexes(client: ClientBase): Promise<string[]> {
  if (!(await tryLockRadacctIndexes(client))) return [];
  try {
    const broken = await brokenRadacctIndexes(client);
    await buildRadacctIndexes(client, broken);
    return broken;
  } finally {
    await unlockRadacctIndexes(client);
  }
}
