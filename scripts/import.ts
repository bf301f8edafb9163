/**
 * `npm run import -- --from daloradius|phpnuxbill|csv --source <url-or-file> [--dry-run] [--json]`
 * (docs/import.md). Writes into DATABASE_URL (or the embedded database under DATA_DIR) and prints
 * the reconciliation report; exits 1 when the input is unusable, 2 when the money totals or the
 * sessions per month do not reconcile.
 * Options: --columns 'their=ours,...' (CSV headers), --reseller <name> (default reseller),
 * --batch <n> (subscribers per transaction), --issues-file <csv> (every skip, conflict and warning;
 * default import-<source>-<time>-issues.csv here, written only when there is one).
 */
import { parseArgs } from 'node:util';
import { loadConfig, resolveEncryptionKey, setConfig, type Config } from '../shared/config';
import { closeDatabase, initDatabase } from '../shared/db/client';
import { runMigrations, runningEmbeddedPostgres, startEmbeddedPostgres } from '../shared/db/database-setup';
import { formatReport, ImportInputError, runImport, SOURCES, type SourceName } from '../shared/import';
import { boundHeapGrowth } from '../shared/import/heap';

boundHeapGrowth();

const USAGE =
  'usage: npm run import -- --from daloradius|phpnuxbill|csv --source <mysql-url-or-csv-file-or-folder> [--dry-run] [--json] [--columns their=ours,...] [--reseller <name>] [--batch <n>] [--issues-file <csv>]';

const OPTIONS = {
  from: { type: 'string' },
  source: { type: 'string' },
  'dry-run': { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  columns: { type: 'string' },
  reseller: { type: 'string' },
  batch: { type: 'string' },
  'issues-file': { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;
type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

async function main(): Promise<number> {
  const { values } = parseArgs({ options: OPTIONS });
  if (values.help || !values.from || !values.source) {
    console.error(USAGE);
    return values.help ? 0 : 1;
  }
  if (!SOURCES.includes(values.from as SourceName)) {
    console.error(`--from must be one of ${SOURCES.join(', ')}\n${USAGE}`);
    return 1;
  }
  const env = { ...process.env, JWT_SECRET: process.env.JWT_SECRET || 'not-used-by-the-import' };
  const cfg = loadConfig(env);
  let stopEmbedded: (() => Promise<void>) | undefined;
  let url = cfg.databaseUrl;
  if (!url) {
    // Beside a running `npm start` on the same DATA_DIR, its server is the database: use it.
    const running = await runningEmbeddedPostgres({ dataDir: cfg.dataDir });
    if (running) {
      console.error(`importing into the database of the server running on ${cfg.dataDir} (port ${running.port})`);
      url = running.url;
    } else {
      const pg = await startEmbeddedPostgres({ dataDir: cfg.dataDir });
      url = pg.url;
      stopEmbedded = () => pg.stop();
    }
  }
  try {
    return await importInto(url, cfg, values);
  } finally {
    await stopEmbedded?.();
  }
}

async function importInto(url: string, cfg: Config, values: Options): Promise<number> {
  // Embedded, the key the server generates into DATA_DIR (made here first when the import comes first).
  setConfig({ ...cfg, encryptionKey: resolveEncryptionKey(cfg, !cfg.databaseUrl) });
  // A fresh database needs no step first: the schema is migrated as `npm start` does.
  await runMigrations(url);
  const db = initDatabase(url, 4);
  try {
    const report = await runImport(db, {
      from: values.from as SourceName,
      source: values.source!,
      dryRun: values['dry-run'],
      columns: values.columns,
      defaultReseller: values.reseller,
      batchSize: values.batch ? Number(values.batch) : undefined,
      issuesFile:
        values['issues-file'] ?? `import-${values.from}-${new Date().toISOString().replace(/[:.]/g, '-')}-issues.csv`,
      progress: values.json ? undefined : (m) => console.error(m),
      // The operator's own command, on their own machine: any address, as their mysql client would.
      connection: { allowPrivateTargets: true },
    });
    console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return report.money.reconciled && (report.sessions?.reconciled ?? true) ? 0 : 2;
  } catch (err) {
    if (err instanceof ImportInputError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  } finally {
    await closeDatabase();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`import failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
