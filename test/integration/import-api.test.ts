/**
 * The import through the API (docs/import.md, "Through the API"): POST /api/imports starts a
 * background job (202 { id }), GET /api/imports/:id shows its status, progress and report. Admin
 * only; bad input is a 400 naming the field with no job written; a source URL's password is never
 * answered back.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { adminToken, client, token, startTestApp, type TestApp } from '../helpers/app';
import { freePort } from '../helpers/server-process';
import { mariadbFixture, rowCounts } from './import-helpers';

const FIXTURES = path.join(__dirname, '../fixtures/import');

let t: TestApp;
let api: ReturnType<typeof client>;
let dalo: { url: string; drop(): Promise<void> };
const admin = adminToken();
const savedImportDir = process.env.IMPORT_DIR;
// Read when a job connects: a failed connection is reported once this much time has passed. Set
// only in the test of failed connections: the real imports' connections need the default on a
// loaded machine (one per table read).
const CONNECT_TIMEOUT_MS = 1500;

beforeAll(async () => {
  process.env.IMPORT_DIR = FIXTURES;
  dalo = await mariadbFixture('daloradius');
  t = await startTestApp();
  api = client(t.baseUrl);
});
afterAll(async () => {
  if (savedImportDir === undefined) delete process.env.IMPORT_DIR;
  else process.env.IMPORT_DIR = savedImportDir;
  await dalo?.drop();
  await t?.close();
});

const importJobs = async () =>
  Number((await t.pool.query(`select count(*)::int as n from bulk_jobs where action = 'import'`)).rows[0].n);

/** Polls the job until it is done or failed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads whatever the route answers
async function finished(id: number): Promise<Record<string, any>> {
  for (let i = 0; i < 600; i++) {
    const res = await api.get(`/api/imports/${id}`, { token: admin });
    expect(res.status).toBe(200);
    if (res.body.data.status === 'done' || res.body.data.status === 'failed') return res.body.data;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`import job ${id} did not finish`);
}

const readCsv = (name: string) => fs.readFileSync(path.join(FIXTURES, 'csv', name), 'utf8');

describe('POST /api/imports', () => {
  test('admin only: a reseller or a manager without the role is refused, nothing is started', async () => {
    const reseller = token('reseller', { resellerId: 1 });
    const res = await api.post('/api/imports', { from: 'csv', source: 'csv' }, { token: reseller });
    expect(res.status).toBe(403);
    const manager = token('user', { resellerId: 1, permissions: ['subscribers.create'] });
    expect((await api.post('/api/imports', { from: 'csv', source: 'csv' }, { token: manager })).status).toBe(403);
    expect((await api.post('/api/imports', { from: 'csv', source: 'csv' })).status).toBe(401);
    expect((await api.get('/api/imports/1', { token: reseller })).status).toBe(403);
    expect(await importJobs()).toBe(0);
  });

  test.each([
    [{}, 'from'],
    [{ from: 'sas4', source: 'x' }, 'from'],
    [{ from: 'daloradius' }, 'source'],
    [{ from: 'daloradius', source: 'not a url' }, 'source'],
    [{ from: 'daloradius', source: 'postgres://u:p@h/db' }, 'source'],
    [{ from: 'daloradius', source: 'mysql://h/db', columns: 'a=b' }, 'columns'],
    [{ from: 'phpnuxbill', files: { subscribers: 'username\n' } }, 'files'],
    [{ from: 'csv' }, 'source'],
    [{ from: 'csv', source: 'csv', files: { subscribers: 'username\n' } }, 'files'],
    [{ from: 'csv', source: '../../../../etc/passwd' }, 'source'],
    [{ from: 'csv', source: '/etc' }, 'source'],
    [{ from: 'csv', source: 'no-such-folder' }, 'source'],
    [{ from: 'csv', files: {} }, 'subscribers'],
    [{ from: 'csv', source: 'csv', dry_run: 'yes' }, 'dry_run'],
    [{ from: 'csv', source: 'csv', batch_size: 0 }, 'batch_size'],
    [{ from: 'csv', source: 'csv', extra: 1 }, 'extra'],
  ])('400 naming the field, no job: %j', async (body, field) => {
    const res = await api.post('/api/imports', body, { token: admin });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toContain(field);
    expect(await importJobs()).toBe(0);
  });

  test('404 for an unknown id and for a bulk job that is not an import', async () => {
    expect((await api.get('/api/imports/999999', { token: admin })).status).toBe(404);
    const { rows } = await t.pool.query(
      `insert into bulk_jobs (action, ids, total) values ('renew', '[]'::jsonb, 0) returning id`,
    );
    expect((await api.get(`/api/imports/${rows[0].id}`, { token: admin })).status).toBe(404);
  });
});

/** A TCP listener on 127.0.0.1 that counts its connections and says nothing, or answers like an SSH server. */
async function listener(
  mode: 'silent' | 'ssh',
): Promise<{ port: number; connections: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const state = { port: 0, connections: 0, close: async () => undefined as void };
  const server = net.createServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (mode === 'ssh') socket.write('SSH-2.0-OpenSSH_9.6\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  state.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

const setAllowPrivateTargets = async (on: boolean) =>
  expect((await api.put('/api/settings', { allow_private_targets: on }, { token: admin })).status).toBe(200);

describe('the source database address (issue 43, finding 6)', () => {
  test('a loopback, private or reserved host is refused with 400 before any connection, and no job', async () => {
    const tcp = await listener('silent');
    try {
      for (const host of [
        `127.0.0.1:${tcp.port}`,
        `localhost:${tcp.port}`,
        `[::ffff:0:7f00:1]:${tcp.port}`,
        '10.0.0.5',
        '169.254.169.254',
      ]) {
        const res = await api.post(
          '/api/imports',
          { from: 'daloradius', source: `mysql://radius:pw@${host}/radius` },
          { token: admin },
        );
        expect([res.status, res.body.message]).toEqual([
          400,
          'source refused: a loopback, private or reserved address',
        ]);
      }
      expect(tcp.connections).toBe(0);
      expect(await importJobs()).toBe(0);
    } finally {
      await tcp.close();
    }
  });

  describe('with allow_private_targets', () => {
    beforeAll(() => setAllowPrivateTargets(true));

    test.each([
      'socketPath=/run/mysqld/mysqld.sock',
      'multipleStatements=true',
      'localInfile=true',
      'charset=latin1',
      'ssl=%7B%22rejectUnauthorized%22%3Afalse%7D',
    ])('a query parameter other than ssl=true|false is refused with 400 naming it, no job: ?%s', async (query) => {
      const res = await api.post(
        '/api/imports',
        { from: 'phpnuxbill', source: `${dalo.url}?${query}` },
        { token: admin },
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('source');
      expect(res.body.message).toContain(query.split('=')[0]);
      expect(await importJobs()).toBe(0);
    });

    test('a closed port, a silent one and one that is not MySQL fail alike, and not before the connect timeout', async () => {
      const closed = await freePort();
      const silent = await listener('silent');
      const ssh = await listener('ssh');
      process.env.IMPORT_CONNECT_TIMEOUT_MS = String(CONNECT_TIMEOUT_MS);
      try {
        const outcomes: { error: string; ms: number }[] = [];
        for (const port of [closed, silent.port, ssh.port]) {
          const res = await api.post(
            '/api/imports',
            { from: 'daloradius', source: `mysql://radius:pw@127.0.0.1:${port}/radius` },
            { token: admin },
          );
          expect(res.status).toBe(202);
          const job = await finished(res.body.data.id);
          expect(job.status).toBe('failed');
          outcomes.push({
            error: String(job.error).replace(String(port), '<port>'),
            ms: Date.parse(job.finished_at) - Date.parse(job.created_at),
          });
        }
        expect(outcomes.map((o) => o.error)).toEqual(Array(3).fill(outcomes[0].error));
        expect(outcomes[0].error).toContain('cannot connect to the source database');
        for (const o of outcomes) expect(o.ms).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS);
        expect([silent.connections, ssh.connections]).toEqual([1, 1]);
      } finally {
        delete process.env.IMPORT_CONNECT_TIMEOUT_MS;
        await silent.close();
        await ssh.close();
      }
      await t.pool.query(`delete from bulk_jobs where action = 'import'`);
      await t.pool.query(`delete from audit_log where action = 'import.start'`);
    });
  });
});

describe('an import job', () => {
  beforeAll(() => setAllowPrivateTargets(true));

  test('uploaded CSV, dry run: 202 with an id, the job reports what it would do and writes nothing', async () => {
    const before = await rowCounts(t.pool);
    const res = await api.post(
      '/api/imports',
      {
        from: 'csv',
        files: { subscribers: readCsv('subscribers.csv'), history: readCsv('history.csv') },
        dry_run: true,
      },
      { token: admin },
    );
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ id: expect.any(Number), status: 'queued' });
    const job = await finished(res.body.data.id);
    expect(job).toMatchObject({ status: 'done', phase: 'done', from: 'csv', dry_run: true, error: null });
    expect(job.source).toMatch(/^uploaded files \(\d+ bytes\)$/);
    expect(job.report.dryRun).toBe(true);
    expect(job.report.entities.subscribers).toMatchObject({ read: 10, imported: 5, skipped: 5 });
    expect(job.report.entities.history).toMatchObject({ read: 8, imported: 5 });
    expect(job.report.money.reconciled).toBe(true);
    expect(JSON.stringify(job)).not.toContain('alice-secret');
    // The request is audited (import.start, docs/security.md); the dry run itself writes nothing.
    const { rows: audited } = await t.pool.query(`select action, details from audit_log where entity_id = $1`, [
      res.body.data.id,
    ]);
    expect(audited).toEqual([{ action: 'import.start', details: expect.objectContaining({ dry_run: true }) }]);
    await t.pool.query(`delete from audit_log where action = 'import.start'`);
    expect(await rowCounts(t.pool)).toEqual(before);
  });

  test('a server-side folder under IMPORT_DIR, real run: progress counts every subscriber and history row, the report reconciles', async () => {
    const res = await api.post('/api/imports', { from: 'csv', source: 'csv', batch_size: 2 }, { token: admin });
    expect(res.status).toBe(202);
    const job = await finished(res.body.data.id);
    // 5 subscribers written, then the 8 rows of history.csv gone through (5 written, 3 skipped).
    expect(job).toMatchObject({ status: 'done', source: 'csv', dry_run: false, total: 13, processed: 13 });
    expect(job.finished_at).toEqual(expect.any(String));
    expect(job.report.entities.subscribers).toMatchObject({ imported: 5 });
    expect(job.report.money.reconciled).toBe(true);
    const { rows } = await t.pool.query(`select count(*)::int as n from subscribers where username = 'alice'`);
    expect(rows[0].n).toBe(1);
    // Each imported subscriber's audit row names the admin who started the job, and its reseller.
    const imported = await t.pool.query(
      `select distinct actor_type, manager_id, reseller_id is not null as scoped from audit_log where action = 'import'`,
    );
    expect(imported.rows).toEqual([{ actor_type: 'manager', manager_id: 1, scoped: true }]);
    // Batches of two subscribers: the (prefix, year) counters are bumped per batch, numbers stay gap-free.
    const numbers = await t.pool.query(
      `select extract(year from issue_date)::int as year, array_agg(invoice_number order by invoice_number) as numbers
         from invoices group by 1 order by 1`,
    );
    expect(numbers.rows).toEqual([
      { year: 2019, numbers: ['INV-2019-000001'] },
      { year: 2024, numbers: ['INV-2024-000001', 'INV-2024-000002', 'INV-2024-000003', 'INV-2024-000004'] },
    ]);
    const counters = await t.pool.query(`select year, last_value from invoice_sequences order by year`);
    expect(counters.rows).toEqual([
      { year: 2019, last_value: 1 },
      { year: 2024, last_value: 4 },
    ]);

    // The same again: everything is already there.
    const again = await finished(
      (await api.post('/api/imports', { from: 'csv', source: 'csv/subscribers.csv' }, { token: admin })).body.data.id,
    );
    expect(again.report.entities.subscribers).toMatchObject({ imported: 0, unchanged: 5 });
    expect(again.report.entities.history).toMatchObject({ imported: 0, unchanged: 5 });
  });

  test('daloRADIUS: the job imports from the database URL', async () => {
    const res = await api.post('/api/imports', { from: 'daloradius', source: dalo.url }, { token: admin });
    expect(res.status).toBe(202);
    const job = await finished(res.body.data.id);
    expect(job.status).toBe('done');
    expect(job.report.entities.subscribers).toMatchObject({ read: 8, imported: 6 });
    expect(job.report.money.reconciled).toBe(true);
  });

  test("a source URL's password is never answered back, not even in the failure", async () => {
    const url = new URL(dalo.url);
    url.username = 'nobody';
    url.password = 'hunter2-secret';
    const res = await api.post('/api/imports', { from: 'phpnuxbill', source: url.toString() }, { token: admin });
    expect(res.status).toBe(202);
    expect(res.text).not.toContain('hunter2-secret');
    const job = await finished(res.body.data.id);
    expect(job.status).toBe('failed');
    expect(job.phase).toBe('failed');
    expect(job.error).toContain('cannot connect to the source database');
    expect(job.source).toContain('nobody:***@');
    const shown = await api.get(`/api/imports/${res.body.data.id}`, { token: admin });
    expect(shown.text).not.toContain('hunter2-secret');
    const stored = await t.pool.query(`select payload::text from bulk_jobs where id = $1`, [res.body.data.id]);
    expect(stored.rows[0].payload).not.toContain('hunter2-secret');
  });
});
