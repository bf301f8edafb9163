import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Pool, types } from 'pg';
import { HostPicker, parseHostList, pickingClient } from './hosts';
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
 * JIT off for the app's sessions: its statements take milliseconds, and LLVM compiles a statement
 * at every execution once its plan is estimated over jit_above_cost. A generic plan on tables
 * without statistics (a new database, autovacuum off) is: a kept list page's statement took 750 ms
 * of compiling on Debian's PostgreSQL 15 for 0.3 ms of work (docs/billing.md). Set on each new
 * connection rather than as a startup option, which PgBouncer refuses by default and a URL's own
 * `options` would replace. `PG_JIT=server` leaves the server's setting.
 */
export function sessionSetup(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.PG_JIT === 'server' ? undefined : 'set jit = off';
}

/**
 * One pool per process, since services reach it through db() rather than through their broker. A
 * second app in the same process (replicas of a test cluster) shares it when it names the same
 * database; a different database is refused instead of silently reading the first one.
 */
let pool: Pool | undefined;
let database: Db | undefined;
let poolUrl: string | undefined;
let readPool_: Pool | undefined;
let readDatabase: Db | undefined;
let users = 0;

/** A pool on `url`; one naming several hosts or a target_session_attrs connects through hosts.ts. */
function makePool(url: string, max: number): Pool {
  const setup = sessionSetup();
  const hosts = parseHostList(url);
  const p = new Pool({
    connectionString: hosts ? hosts.base : url,
    max,
    // Connections kept open however long idle: each new one is a new PostgreSQL backend whose
    // catalog caches start empty, and a bulk job after a quiet spell opened several at once while
    // the server was busiest (bench:coa, docs/network-access.md).
    min: Math.min(max, Number(process.env.PG_POOL_MIN || 4)),
    ...(hosts ? { Client: pickingClient(new HostPicker(hosts)) } : {}),
    // Awaited before the pool hands the connection out. A server without the setting (before
    // PostgreSQL 11) has no JIT either, so its error is of no consequence.
    onConnect:
      setup === undefined
        ? undefined
        : (client) =>
            client.query(setup).then(
              () => undefined,
              () => undefined,
            ),
  });
  // An idle client that loses its server must not crash the process.
  p.on('error', () => undefined);
  return p;
}

/**
 * `readUrl` (DATABASE_READ_URL): a second pool for the reads that may lag a replica by a second
 * (readDb()); unset, those reads use the main pool.
 */
export function initDatabase(url: string, max = Number(process.env.PG_POOL_SIZE || 20), readUrl?: string): Db {
  if (database) {
    if (url !== poolUrl)
      throw new Error('this process already uses another database: start one app per database, one per process');
    users++;
    return database;
  }
  pool = makePool(url, max);
  database = drizzle(pool, { schema });
  if (readUrl) {
    readPool_ = makePool(readUrl, max);
    readDatabase = drizzle(readPool_, { schema });
  }
  poolUrl = url;
  users = 1;
  return database;
}

export function db(): Db {
  if (!database) throw new Error('database not initialised: call initDatabase() at start');
  return database;
}

/**
 * The database for reads that tolerate a second of replication lag (reports, long lists:
 * docs/operations.md, "DATABASE_READ_URL"): DATABASE_READ_URL's pool when set, else db(). Never
 * for a read that must see the caller's own write or that decides a write.
 */
export function readDb(): Db {
  return readDatabase ?? db();
}

/** Whether `d` is the process's database (no transaction): reads may then use pgPool() directly. */
export function isPoolDb(d: DbOrTx): boolean {
  return d === database;
}

export function pgPool(): Pool {
  if (!pool) throw new Error('database not initialised: call initDatabase() at start');
  return pool;
}

/** readDb()'s pool: DATABASE_READ_URL's when set, else pgPool(). */
export function readPool(): Pool {
  return readPool_ ?? pgPool();
}

/** Releases this app's share of the pool; the last one closes it. */
export async function closeDatabase(): Promise<void> {
  if (users > 1) {
    users--;
    return;
  }
  const p = pool;
  const r = readPool_;
  pool = undefined;
  database = undefined;
  readPool_ = undefined;
  readDatabase = undefined;
  poolUrl = undefined;
  users = 0;
  if (p) await p.end();
  if (r) await r.end();
}
