/**
 * The session writer (shared/import/sessions.ts) with a source that repeats its unique ids across
 * chunks: two chunks are written at once, and each inserts its ids in one order, so two chunks
 * holding the same ids in opposite orders wait for each other instead of deadlocking.
 */
import { importSessions, type ImportSession, type SessionReader } from '../../shared/import/sessions';
import { startTestApp, type TestApp } from '../helpers/app';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const START = Date.parse('2026-01-10T00:00:00Z') / 1000;

const session = (k: number): ImportSession => ({
  uniqueId: `uid-${String(k).padStart(6, '0')}`,
  sessionId: `s${k}`,
  username: 'dup',
  realm: null,
  nasIp: '192.0.2.1',
  nasPortId: null,
  nasPortType: null,
  start: START + k,
  update: START + k + 60,
  stop: START + k + 60,
  interval: null,
  sessionTime: 60,
  authentic: null,
  connectInfoStart: null,
  connectInfoStop: null,
  input: '1',
  output: '2',
  calledStationId: null,
  callingStationId: null,
  terminateCause: 'User-Request',
  serviceType: null,
  framedProtocol: null,
  framedIp: null,
  framedIpv6Address: null,
  framedIpv6Prefix: null,
  framedInterfaceId: null,
  delegatedIpv6Prefix: null,
  class: null,
});

test('chunks repeating each other’s ids in opposite orders are written at once, each id once', async () => {
  const PAIRS = 6;
  const SIZE = 2000;
  const reader: SessionReader = {
    async *chunks() {
      for (let p = 0; p < PAIRS; p++) {
        const ids = Array.from({ length: SIZE }, (_, k) => session(p * SIZE + k));
        yield ids;
        yield [...ids].reverse();
      }
    },
  };
  const totals = await importSessions(t.db, reader, {
    dryRun: false,
    accepted: new Set(['dup']),
    listed: new Set(['dup']),
    skip: () => undefined,
    retainedFrom: null,
  });
  expect(totals).toMatchObject({
    read: 2 * PAIRS * SIZE,
    imported: PAIRS * SIZE,
    unchanged: PAIRS * SIZE,
    skipped: 0,
    reconciled: true,
  });
  const { rows } = await t.pool.query(
    `select count(*)::int as n, count(distinct acctuniqueid)::int as ids from radacct where username = 'dup'`,
  );
  expect(rows).toEqual([{ n: PAIRS * SIZE, ids: PAIRS * SIZE }]);
});
