/**
 * The source database URL of an import (shared/import/sources/mysql-url.ts): read field by field,
 * only `ssl` among query parameters (issue 43, finding 6), for the API and the command line alike.
 */
import { ImportInputError } from '../../shared/import';
import { parseMysqlUrl } from '../../shared/import/sources/mysql-url';

describe('parseMysqlUrl', () => {
  it('reads host, port, credentials (percent-decoded) and database, and TLS only when asked', () => {
    expect(parseMysqlUrl('mysql://radius:p%40ss@db.example.com:3307/radius')).toEqual({
      host: 'db.example.com',
      port: 3307,
      user: 'radius',
      password: 'p@ss',
      database: 'radius',
      ssl: false,
    });
    expect(parseMysqlUrl('mariadb://[2001:db8::5]/nux?ssl=true')).toEqual({
      host: '2001:db8::5',
      port: 3306,
      user: undefined,
      password: undefined,
      database: 'nux',
      ssl: true,
    });
    expect(parseMysqlUrl('mysql://h/db?ssl=false').ssl).toBe(false);
  });

  it.each([
    'socketPath=/run/mysqld/mysqld.sock',
    'multipleStatements=true',
    'localInfile=true',
    'flags=%2BLOCAL_FILES',
    'infileStreamFactory=x',
    'host=10.0.0.1',
    'ssl=%7B%7D',
    'ssl=true&socketPath=/tmp/x.sock',
  ])('refuses ?%s: no other query parameter becomes a connection option', (query) => {
    expect(() => parseMysqlUrl(`mysql://u:p@db.example.com/radius?${query}`)).toThrow(ImportInputError);
    expect(() => parseMysqlUrl(`mysql://u:p@db.example.com/radius?${query}`)).toThrow(/^source: the query parameter/);
  });

  it.each(['not a url', 'postgres://u:p@h/db', 'mysql://h', 'mysql://h/', 'mysql://u:%zz@h/db'])(
    'refuses %s naming source',
    (raw) => {
      expect(() => parseMysqlUrl(raw)).toThrow(ImportInputError);
      expect(() => parseMysqlUrl(raw)).toThrow(/^source /);
    },
  );
});
