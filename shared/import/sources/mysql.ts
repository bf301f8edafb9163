/**
 * A MySQL/MariaDB connection for the database sources (mysql2): dates and decimals as the source
 * stored them. Through the API the host is under the outgoing-address policy
 * (shared/net/address-policy.ts), checked before connecting and again for every address the name
 * resolves to when connecting, so a name cannot rebind to a private address in between; a refused
 * address gets no connection at all. Every way of not reaching a MySQL server (refused, unreachable,
 * silent, another protocol) fails alike and only once the connect timeout has passed, so the
 * outcome of an import does not map the ports of a network (issue 43). The command line trusts its
 * operator: `npm run import` allows any address.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { checkOutgoingHost, guardedLookup } from '../../net/address-policy';
import { parseMysqlUrl } from './mysql-url';

export type MysqlRow = Record<string, unknown>;

export interface SourceConnection {
  /** Private, loopback and reserved addresses too (the `allow_private_targets` setting; the CLI). */
  allowPrivateTargets?: boolean;
  /** Time for the server to answer its greeting; a failure is reported no sooner. */
  connectTimeoutMs?: number;
}

const CONNECT_TIMEOUT_MS = 10_000;

export async function connectMysql(url: string, access: SourceConnection = {}): Promise<mysql.Connection> {
  const target = parseMysqlUrl(url);
  const allowPrivate = access.allowPrivateTargets === true;
  const timeoutMs = access.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  await checkOutgoingHost('source', target.host, allowPrivate);
  const started = Date.now();
  try {
    return await mysql.createConnection({
      host: target.host,
      port: target.port,
      user: target.user,
      password: target.password,
      database: target.database,
      ssl: target.ssl ? { rejectUnauthorized: true, verifyIdentity: true } : undefined,
      stream: () =>
        net.connect({ host: target.host, port: target.port, noDelay: true, lookup: guardedLookup(allowPrivate) }),
      connectTimeout: timeoutMs,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
      decimalNumbers: false,
      charset: 'utf8mb4',
    });
  } catch (err) {
    const where = `cannot connect to the source database (${redactUrl(url)})`;
    // The server's own refusal (a wrong password, an unknown database) is what the operator needs.
    if (typeof (err as { sqlState?: unknown }).sqlState === 'string') {
      // eslint-disable-next-line preserve-caught-error -- the cause may carry the connection options, password included
      throw new Error(`${where}: ${(err as Error).message}`);
    }
    await sleep(Math.max(0, started + timeoutMs - Date.now()));
    // eslint-disable-next-line preserve-caught-error -- its code would tell a closed port from a silent one
    throw new Error(`${where}: no MySQL server answered within ${timeoutMs / 1000} s`);
  }
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'an unreadable URL';
  }
}

/** Rows of `query`, or [] when its table is missing and `optional` (an install without the billing add-ons). */
export async function rows(conn: mysql.Connection, query: string, optional = false): Promise<MysqlRow[]> {
  try {
    const [result] = await conn.query({ sql: query, rowsAsArray: false });
    return result as MysqlRow[];
  } catch (err) {
    if (optional && (err as { code?: string }).code === 'ER_NO_SUCH_TABLE') return [];
    throw err;
  }
}

/**
 * The rows of `from` (a `select ... from <table>` whose table has an integer `id`) in batches by
 * `id`, on a connection of its own per reading: each batch one indexed range of the primary key, so
 * a reading costs the same whatever its position, and two readings see the same rows in the same order.
 * A missing table, when `optional`, reads as none.
 */
export function batchesById<T>(
  url: string,
  access: SourceConnection,
  from: string,
  toRecord: (row: MysqlRow) => T,
  optional = false,
): { batches(size: number): AsyncIterable<T[]> } {
  return {
    async *batches(size: number) {
      const conn = await connectMysql(url, access);
      try {
        let after: string | null = null;
        for (;;) {
          let result;
          try {
            [result] = await conn.query({
              sql: `${from} ${after === null ? '' : 'where id > ?'} order by id limit ?`,
              values: after === null ? [size] : [after, size],
              rowsAsArray: false,
            });
          } catch (err) {
            if (optional && (err as { code?: string }).code === 'ER_NO_SUCH_TABLE') return;
            throw err;
          }
          const rows = result as MysqlRow[];
          if (!rows.length) return;
          after = str(rows[rows.length - 1].id);
          yield rows.map(toRecord);
        }
      } finally {
        await conn.end();
      }
    },
  };
}

/** `2025-01-31 00:00:00` style end of access -> the last day paid (the day before, at midnight). */
export function lastDayOf(date: string | null, time: string | null): string | null {
  if (!date) return null;
  if (time === null || /^0?0:00(:00)?$/.test(time.trim())) {
    const t = Date.parse(`${date}T00:00:00Z`) - 86_400_000;
    return new Date(t).toISOString().slice(0, 10);
  }
  return date;
}

export const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
