/**
 * Migration 0063: rows FreeRADIUS would expand, stored before the rules that refuse them (an
 * imported password or rate), are deleted; values with a backtick or quote inside stay.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app';

const MIGRATION = path.join(__dirname, '../../shared/db/migrations/0063_stored_expansions.sql');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

it('deletes radcheck and radreply values wrapped in backticks and group rows with an expansion, and nothing else', async () => {
  await t.pool.query(`insert into radcheck (username, attribute, op, value) values
    ('m63-a', 'Cleartext-Password', ':=', '\`/bin/id\`'),
    ('m63-b', 'Cleartext-Password', ':=', 'it\`s fine\`'),
    ('m63-c', 'NT-Password', ':=', '9BE9DDDA7F13BACA64215B589A5A4031')`);
  await t.pool.query(`insert into radreply (username, attribute, op, value) values
    ('m63-a', 'Mikrotik-Rate-Limit', ':=', '\`/bin/id\`'),
    ('m63-b', 'Mikrotik-Rate-Limit', ':=', '0/512k')`);
  await t.pool.query(`insert into radgroupreply (groupname, attribute, op, value) values
    ('m63-group', 'Mikrotik-Rate-Limit', '=', '1M/1M %{exec:/bin/id}'),
    ('m63-group', 'Framed-Pool', '=', 'pool-1')`);
  for (const statement of fs.readFileSync(MIGRATION, 'utf8').split('--> statement-breakpoint'))
    await t.pool.query(statement);
  const rows = async (table: string, key: string) =>
    (await t.pool.query(`select ${key} as key, value from ${table} where ${key} like 'm63-%' order by id`)).rows;
  expect(await rows('radcheck', 'username')).toEqual([
    { key: 'm63-b', value: 'it`s fine`' },
    { key: 'm63-c', value: '9BE9DDDA7F13BACA64215B589A5A4031' },
  ]);
  expect(await rows('radreply', 'username')).toEqual([{ key: 'm63-b', value: '0/512k' }]);
  expect(await rows('radgroupreply', 'groupname')).toEqual([{ key: 'm63-group', value: 'pool-1' }]);
});
