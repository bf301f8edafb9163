/**
 * `npm run import` as an operator runs it (docs/import.md): on a database nobody migrated yet, and
 * beside a running `npm start` on the same DATA_DIR; the reseller it creates can sell its
 * subscribers' plans at once, and every issue goes to a file while the report groups them.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { repoRoot } from '../../shared/paths';
import { login, serverEnv, startServer, stopServer, tempDirs, type Running } from '../helpers/server-process';

jest.setTimeout(180_000);

const FIXTURES = path.join(__dirname, '../fixtures/import');
const CLI = path.join(repoRoot(), 'dist', 'scripts', 'import.js');
const temp = tempDirs();
afterAll(() => temp.cleanup());

function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: serverEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface Reason {
  reason: string;
  count: number;
  examples: string[];
}

/** The report groups issues by reason with a few examples; the file holds each one. */
function expectIssuesFile(report: { reasons: Reason[]; issuesFile: string }, file: string): void {
  expect(report.issuesFile).toBe(file);
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  expect(lines[0]).toBe('entity,key,outcome,reason');
  expect(lines.length - 1).toBe(report.reasons.reduce((n, r) => n + r.count, 0));
  for (const r of report.reasons) {
    expect(r.examples.length).toBe(Math.min(r.count, 3));
    for (const key of r.examples) expect(lines.some((l) => l.split(',')[1] === key)).toBe(true);
  }
}

test('on a database nobody migrated, the import migrates it first, and writes every issue to a file', async () => {
  const admin = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  const name = `${process.env.TEST_RUN_ID}_fresh_${crypto.randomBytes(4).toString('hex')}`;
  await admin.query(`create database "${name}"`);
  try {
    const url = new URL(process.env.TEST_PG_ADMIN_URL!);
    url.pathname = `/${name}`;
    const issues = path.join(temp.make('import-issues-'), 'issues.csv');
    const run = await runCli(
      ['--from', 'csv', '--source', path.join(FIXTURES, 'csv'), '--json', '--issues-file', issues],
      { DATABASE_URL: url.toString(), ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex') },
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.entities.subscribers).toMatchObject({ imported: 5, skipped: 5 });
    expect(report.money.reconciled).toBe(true);
    expectIssuesFile(report, issues);
  } finally {
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
});

describe('beside a running server on the same DATA_DIR', () => {
  let server: Running;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = temp.make('import-beside-');
    server = await startServer({ dataDir, env: { SERVICES: 'gateway,billing,subscribers,network-access' } });
  });
  afterAll(async () => {
    if (server) await stopServer(server);
  });

  test("the import writes into the server's database, and its resellers can sell their subscribers' plans", async () => {
    const issues = path.join(os.tmpdir(), `import-beside-${crypto.randomBytes(4).toString('hex')}.csv`);
    try {
      const run = await runCli(['--from', 'csv', '--source', path.join(FIXTURES, 'csv'), '--issues-file', issues], {
        DATA_DIR: dataDir,
      });
      expect(run.stderr).toContain(`importing into the database of the server running on ${dataDir}`);
      expect(run.stderr).not.toContain('DATA_DIR is in use');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/service_limits\s+\d+\s+\d+/);
    } finally {
      fs.rmSync(issues, { force: true });
    }

    const token = await login(server.base);
    const get = async (p: string) =>
      (await (await fetch(`${server.base}${p}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        data: { id: number; name: string; username: string }[];
      };
    const subscribers = await get('/api/subscribers?search=alice');
    expect(subscribers.data.map((s) => s.username)).toContain('alice');
    const resellers = await get('/api/resellers');
    const north = resellers.data.find((r) => r.name === 'North')!;
    const plans = await get('/api/services');
    const home = plans.data.find((p) => p.name === 'Home 10M')!;
    // The subscriber page's history: the imported sessions, the open one live.
    const alice = subscribers.data.find((x) => x.username === 'alice')!;
    const bandwidth = (await (
      await fetch(`${server.base}/api/subscribers/${alice.id}/bandwidth`, {
        headers: { authorization: `Bearer ${token}` },
      })
    ).json()) as { data: { sessions: { session_id: string; online: boolean; download_bytes: number }[] } };
    expect(bandwidth.data.sessions.map((x) => [x.session_id, x.online, x.download_bytes])).toEqual([
      ['c2', true, 5],
      ['c1', false, 900],
    ]);
    // Without the import's service limit this was 403 "reseller has no service limit for this plan".
    const created = await fetch(`${server.base}/api/subscribers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        username: 'new-after-import',
        password: 'pw-123456',
        service_id: home.id,
        reseller_id: north.id,
      }),
    });
    expect(created.status).toBe(201);
  });
});
