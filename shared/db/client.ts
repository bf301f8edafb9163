import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Pool, types } from 'pg';
import * as schema from './schema';

export type Db = NodePgDatabase<typeof schema>;
/** A transaction handle: the shared billing writes take one so a caller can compose them atomically. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

// DATE columns stay 'YYYY-MM-DD' strings: no time-zone shift through JS Date.
types.setTypeParser(types.builtins.DATE, (v: string) => v);
// bigint (int8) columns hold minor units and byte counts, always below 2^53.
types.setTypeParser(types.builtins.INT8, (v: string) => Number(v));

/**
 * One pool per process, since services reach it through db() rather than through their broker. A
 * second app in the same process (replicas of a test cluster) shares it when it names the same
 * database; a different database is refused instead of silently reading the first one.
 */
let pool: Pool | undefined;
let database: Db | undefined;
let poolUrl: string | undefined;
let users = 0;

export function initDatabase(url: string, max = Number(process.env.PG_POOL_SIZE || 20)): Db {
  if (database) {
    if (url !== poolUrl)
      throw new Error('this process already uses another database: start one app per database, one per process');
    users++;
    return database;
  }
  pool = new Pool({ connectionString: url, max });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => undefined);
  database = drizzle(pool, { schema });
  poolUrl = url;
  users = 1;
  return database;
}

export function db(): Db {
  if (!database) throw new Error('database not initialised: call initDatabase() at start');
  return database;
}

/** Whether `d` is the process's database (no transaction): reads may then use pgPool() directly. */
export function isPoolDb(d: DbOrTx): boolean {
  return d === database;
}

export function pgPool(): Pool {
  if (!pool) throw new Error('database not initialised: call initDatabase() at start');
  return pool;
}

/** Releases this app's share of the pool; the last one closes it. */
export async function closeDatabase(): Promise<void> {
  if (users > 1) {
    users--;
    return;
  }
  const p = pool;
  pool = undefined;
  database = undefined;
  poolUrl = undefined;
  users = 0;
  if (p) await p.end();
}
