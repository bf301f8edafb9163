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

let pool: Pool | undefined;
let database: Db | undefined;

export function initDatabase(url: string, max = Number(process.env.PG_POOL_SIZE || 20)): Db {
  if (database) return database;
  pool = new Pool({ connectionString: url, max });
  // An idle client that loses its server must not crash the process.
  pool.on('error', () => undefined);
  database = drizzle(pool, { schema });
  return database;
}

export function db(): Db {
  if (!database) throw new Error('database not initialised: call initDatabase() at start');
  return database;
}

export function pgPool(): Pool {
  if (!pool) throw new Error('database not initialised: call initDatabase() at start');
  return pool;
}

export async function closeDatabase(): Promise<void> {
  const p = pool;
  pool = undefined;
  database = undefined;
  if (p) await p.end();
}
