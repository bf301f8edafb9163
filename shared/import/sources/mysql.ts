/** A MySQL/MariaDB connection for the database sources (mysql2): dates and decimals as the source stored them. */
import mysql from 'mysql2/promise';

export type MysqlRow = Record<string, unknown>;

export async function connectMysql(url: string): Promise<mysql.Connection> {
  try {
    return await mysql.createConnection({
      uri: url,
      dateStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: true,
      decimalNumbers: false,
      charset: 'utf8mb4',
    });
  } catch (err) {
    // eslint-disable-next-line preserve-caught-error -- the cause may carry the connection options, password included
    throw new Error(`cannot connect to the source database (${redactUrl(url)}): ${(err as Error).message}`);
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
