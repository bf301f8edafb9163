/**
 * The database a source URL names (`mysql://user:password@host:3306/db`, or `mariadb://`), read
 * field by field: the URL is never handed to mysql2, whose URL parser turns any query parameter
 * into a connection option (`socketPath`, `multipleStatements`, `localInfile`, ...). The only
 * query parameter read is `ssl` (docs/import.md); any other is refused.
 */
import { ImportInputError } from './csv';

export interface MysqlTarget {
  host: string;
  port: number;
  user: string | undefined;
  password: string | undefined;
  database: string;
  /** TLS with the server's certificate checked against the system's CAs and the host name. */
  ssl: boolean;
}

const SHAPE = 'source must be a database URL: mysql://user:password@host:3306/db';

export function parseMysqlUrl(raw: string): MysqlTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ImportInputError(SHAPE);
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') throw new ImportInputError(SHAPE);
  if (!url.hostname || url.pathname.length < 2)
    throw new ImportInputError('source must name a host and a database: mysql://user:password@host:3306/db');
  let ssl = false;
  for (const [name, value] of url.searchParams) {
    if (name !== 'ssl' || (value !== 'true' && value !== 'false'))
      throw new ImportInputError(`source: the query parameter ${name} is not accepted (only ssl=true or ssl=false)`);
    ssl = value === 'true';
  }
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : 3306,
    user: decoded(url.username) || undefined,
    password: decoded(url.password) || undefined,
    database: decoded(url.pathname.slice(1)),
    ssl,
  };
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ImportInputError('source has a % that is not followed by two hexadecimal digits');
  }
}
