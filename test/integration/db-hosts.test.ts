/**
 * shared/db/hosts.ts: libpq's multi-host URLs and target_session_attrs for node-postgres, against the
 * test server (a primary) and a port where nothing listens (a node that is down).
 */
import { Pool } from 'pg';
import { freePort } from '../../runtime/cluster';
import { HostPicker, parseHostList, pickingClient, resolveUrl } from '../../shared/db/hosts';
import { createTestDatabase } from '../helpers/app';

let url: URL;
let down: number;

beforeAll(async () => {
  url = new URL(await createTestDatabase());
  down = await freePort();
});

/** The test database's URL with `hosts` in place of its one host, and `query` appended. */
function multi(hosts: string, query = ''): string {
  return `postgres://${url.username}${url.password ? `:${url.password}` : ''}@${hosts}${url.pathname}${query}`;
}

test('parses hosts, ports and target_session_attrs; a plain URL is left alone', () => {
  expect(parseHostList('postgres://u:p@db:5432/billing')).toBeUndefined();
  expect(
    parseHostList('postgres://u:p@a:5433,b,[::1]:5435/billing?sslmode=disable&target_session_attrs=read-write'),
  ).toEqual({
    hosts: [
      { host: 'a', port: 5433 },
      { host: 'b', port: 5432 },
      { host: '::1', port: 5435 },
    ],
    attrs: 'read-write',
    base: 'postgres://u:p@a:5433/billing?sslmode=disable',
  });
  expect(parseHostList('postgres://a:1,b:2/x')?.attrs).toBe('any');
  expect(() => parseHostList('postgres://a:1,b:2/x?target_session_attrs=read-only')).toThrow(/not supported/);
});

test('read-write skips a node that is down and connects a pool to the primary', async () => {
  const list = parseHostList(multi(`127.0.0.1:${down},${url.host}`, '?target_session_attrs=read-write'))!;
  const pool = new Pool({ connectionString: list.base, max: 2, Client: pickingClient(new HostPicker(list)) });
  try {
    const { rows } = await pool.query<{ db: string; standby: boolean }>(
      'select current_database() as db, pg_is_in_recovery() as standby',
    );
    expect(rows[0]).toEqual({ db: url.pathname.slice(1), standby: false });
  } finally {
    await pool.end();
  }
  const resolved = new URL(
    await resolveUrl(multi(`127.0.0.1:${down},${url.host}`, '?target_session_attrs=read-write')),
  );
  expect(resolved.host).toBe(url.host);
});

test('standby finds none on a lone primary; prefer-standby falls back to it', async () => {
  const standby = new HostPicker(
    parseHostList(multi(`127.0.0.1:${down},${url.host}`, '?target_session_attrs=standby'))!,
  );
  await expect(standby.pick()).rejects.toThrow(`no standby server among 127.0.0.1:${down}, ${url.host}`);
  const prefer = new HostPicker(
    parseHostList(multi(`${url.host},127.0.0.1:${down}`, '?target_session_attrs=prefer-standby'))!,
  );
  expect(await prefer.pick()).toEqual({ host: url.hostname, port: Number(url.port) });
});

test('no server answering: the error names every host', async () => {
  const other = await freePort();
  const picker = new HostPicker(
    parseHostList(multi(`127.0.0.1:${down},127.0.0.1:${other}`, '?target_session_attrs=read-write'))!,
  );
  await expect(picker.pick()).rejects.toThrow(
    new RegExp(`no read-write server among 127.0.0.1:${down}, 127.0.0.1:${other} \\(.*ECONNREFUSED`),
  );
});
