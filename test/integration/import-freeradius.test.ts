/**
 * After an import, FreeRADIUS (the shipped configuration, through radclient) authenticates the
 * imported subscribers with their old passwords: cleartext ones rewritten as the password mode
 * asks, hashes (NT, MD5) kept as stored; a disabled one, a wrong password and a MAC-bound one from
 * another MAC are refused.
 */
import path from 'node:path';
import { runImport } from '../../shared/import';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { startFreeradius, type Radius } from '../helpers/freeradius';
import { mariadbFixture } from './import-helpers';

const SECRET = 'radius-import-secret';
let t: TestApp;
let radius: Radius;
let dalo: { url: string; drop(): Promise<void> };
let nux: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  dalo = await mariadbFixture('daloradius');
  nux = await mariadbFixture('phpnuxbill');
  t = await startTestApp();
  const api = client(t.baseUrl);
  const nas = await api.post(
    '/api/nas',
    { name: 'lab', ip_address: '127.0.0.1', secret: SECRET },
    { token: adminToken() },
  );
  expect(nas.status).toBe(201);
  for (const [from, source] of [
    ['daloradius', dalo.url],
    ['phpnuxbill', nux.url],
    ['csv', path.join(__dirname, '../fixtures/import/csv')],
  ] as const) {
    const report = await runImport(t.db, { from, source, dryRun: false, connection: { allowPrivateTargets: true } });
    expect(report.money.reconciled).toBe(true);
  }
  radius = await startFreeradius(t, SECRET);
}, 90_000);

afterAll(async () => {
  await radius?.stop();
  await t?.close();
  await dalo?.drop();
  await nux?.drop();
});

test.each([
  ['dalo.clear', 'clear-secret', 'cleartext in daloRADIUS, NT hash here'],
  ['dalo.nt', 'bob-password', 'NT-Password kept as stored'],
  ['dalo.md5', 'md5-secret', 'MD5-Password kept as stored'],
  ['dalo.legacy', 'legacy-secret', "daloRADIUS's older User-Password"],
  ['nux.pppoe', 'pppoe-secret', "phpnuxbill's PPPoE password"],
  ['alice', 'alice-secret', 'CSV cleartext'],
  ['bob', 'bob-password', 'CSV NT hash'],
  ['ivan@realm.example', 'ivan pass with spaces', 'CSV, realm and spaces kept exactly'],
])('%s authenticates with its old password (%s: %s)', async (username, password, why) => {
  const answer = await radius.login(username, password);
  expect(answer.code).toBe('Access-Accept');
  expect(why).toBeTruthy();
});

test('a wrong password, disabled subscribers and a MAC-bound one from another MAC are refused', async () => {
  expect((await radius.login('nux.banned', 'banned-secret')).code).toBe('Access-Reject');
  expect((await radius.login('dalo.clear', 'not-the-password')).code).toBe('Access-Reject');
  expect((await radius.login('dalo.off', 'off-secret')).code).toBe('Access-Reject');
  expect((await radius.login('dalo.mac', 'mac-secret', '66:77:88:99:AA:BB')).code).toBe('Access-Reject');
  expect((await radius.login('dalo.mac', 'mac-secret', '00:11:22:33:44:55')).code).toBe('Access-Accept');
});
