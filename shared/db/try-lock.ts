/**
 * One run per installation: a PostgreSQL session advisory lock, taken with pg_try_advisory_lock on
 * a client of the pool held for the whole run. A replica that finds it held skips its run; the
 * lock goes with the session, so a process that dies mid-run frees it for the next replica.
 */
import { pgPool } from './client';

/**
 * Runs `fn` under the lock `key` (a bigint key, or a name hashed by hashtext); `undefined` when
 * another session holds it.
 */
export async function withTryLock<T>(key: number | string, fn: () => Promise<T>): Promise<T | undefined> {
  const keySql = typeof key === 'number' ? '$1::bigint' : 'hashtext($1)';
  const client = await pgPool().connect();
  let locked: boolean;
  try {
    const { rows } = await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(${keySql}) as locked`, [key]);
    locked = rows[0]?.locked === true;
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
  if (!locked) {
    client.release();
    return undefined;
  }
  try {
    return await fn();
  } finally {
    try {
      await client.query(`select pg_advisory_unlock(${keySql})`, [key]);
      client.release();
    } catch (err) {
      // The session is unusable: destroying the client ends it, and the lock with it.
      client.release(err as Error);
    }
  }
}
