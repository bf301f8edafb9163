/**
 * Point-in-time recovery of `npm run start:cluster`'s embedded mode (docs/operations.md): the
 * cluster's own PostgreSQL archives its WAL into BACKUP_DIR and the cluster takes the base backup,
 * as `npm start` does (runtime/embedded-pitr.ts). The real `node dist/scripts/cluster.js` process;
 * payments through its gateway before and after a moment T; `restore --pitr --to T` recovers the
 * ledger as it was at T.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ledgerTotals } from '../../shared/backup/facts';
import { repoRoot } from '../../shared/paths';
import { testEnv } from '../helpers/app';
import { archiveCurrentSegment, expectRecoveredTo, waitForBaseBackup } from '../helpers/pitr';
import { freePort, payInvoice, serverEnv, tempDirs } from '../helpers/server-process';
import { suiteTransporter } from '../helpers/transporter';
import { waitFor } from '../helpers/wait';
import { ADMIN, login, seed } from './cluster-harness';

jest.setTimeout(300_000);

// Without TRANSPORTER the cluster joins its processes over Moleculer's loopback TCP.
const suite = suiteTransporter({ transporter: '', name: "Moleculer's loopback TCP transporter" });
const temp = tempDirs();
const dataDir = temp.make();
const backupDir = temp.make('billing-archive-');
let output = '';
let stopCluster: (() => Promise<number | string>) | undefined;

afterAll(async () => {
  await stopCluster?.();
  temp.cleanup();
});

/** `npm run start:cluster` (its build done): resolves once it prints that it is ready. */
async function startClusterProcess(env: NodeJS.ProcessEnv): Promise<void> {
  const child = spawn(process.execPath, [path.join(repoRoot(), 'dist', 'scripts', 'cluster.js')], { env });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  stopCluster = () => {
    stopCluster = undefined;
    child.kill('SIGTERM');
    return exited;
  };
  await waitFor(
    'cluster ready',
    () => {
      if (child.exitCode !== null) throw new Error(`the cluster exited ${child.exitCode}:\n${output.slice(-3000)}`);
      return output.includes('cluster ready');
    },
    180_000,
    250,
  );
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

it(`archives WAL and takes base backups of the cluster's embedded database, over ${suite.label}`, async () => {
  const [port, pgPort] = [await freePort(), await freePort()];
  await startClusterProcess(
    serverEnv(
      testEnv('', {
        DATA_DIR: dataDir,
        BACKUP_DIR: backupDir,
        EMBEDDED_PG_PORT: String(pgPort),
        PORT: String(port),
        SERVICES: 'gateway,billing,subscribers',
        TRANSPORTER: suite.transporter,
        NAMESPACE: `cluster-pitr-${crypto.randomBytes(4).toString('hex')}`,
        LOG_LEVEL: 'warn',
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
      }) as Record<string, string>,
    ),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const password = fs.readFileSync(path.join(dataDir, 'pg-password'), 'utf8').trim();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/billing`;
  const systemId = await withClient(
    url,
    async (c) =>
      (await c.query<{ id: string }>('select system_identifier::text as id from pg_control_system()')).rows[0].id,
  );

  // The cluster took a base backup of its database at start: WAL without a base recovers nothing.
  const base = await waitForBaseBackup(backupDir);
  expect(base.system_identifier).toBe(systemId);
  expect(output).toContain('base backup written');

  const token = await login(baseUrl);
  const { invoiceId } = await seed(baseUrl, token, 'pitr');
  for (let i = 0; i < 3; i++) await payInvoice(baseUrl, token, invoiceId, 2 + i);
  const atT = await withClient(url, (c) => ledgerTotals(c));
  await new Promise((r) => setTimeout(r, 1500));
  const target = new Date();
  await new Promise((r) => setTimeout(r, 1500));
  for (let i = 0; i < 2; i++) await payInvoice(baseUrl, token, invoiceId, 10 + i);
  const afterT = await withClient(url, (c) => ledgerTotals(c));
  expect(afterT).not.toEqual(atT);

  await withClient(url, archiveCurrentSegment);
  expect(await stopCluster!()).toBe(0);
  expect(fs.readdirSync(path.join(backupDir, 'wal')).some((n) => /^[0-9A-F]{24}$/.test(n))).toBe(true);

  // The ledger as it was at T, not as it was at the stop.
  await expectRecoveredTo(backupDir, temp.make(), target, atT);
});
