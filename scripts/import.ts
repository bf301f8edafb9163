/**
 * `npm run import -- --from daloradius|phpnuxbill|csv --source <url-or-file> [--dry-run] [--json]`
 * (docs/import.md). Writes into DATABASE_URL (or the embedded database under DATA_DIR) and prints
 * the reconciliation report; exits 1 when the input is unusable, 2 when the totals do not reconcile.
 * Options: --columns 'their=ours,...' (CSV headers), --reseller <name> (default reseller),
 * --batch <n> (subscribers per transaction).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig, parseEncryptionKey, setConfig } from '../shared/config';
import { closeDatabase, initDatabase } from '../shared/db/client';
import { startEmbeddedPostgres } from '../shared/db/database-setup';
import { formatReport, ImportInputError, runImport, SOURCES, type SourceName } from '../shared/import';

const USAGE =
  'usage: npm run import -- --from daloradius|phpnuxbill|csv --source <mysql-url-or-csv-file-or-folder> [--dry-run] [--json] [--columns their=ours,...] [--reseller <name>] [--batch <n>]';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      from: { type: 'string' },
      source: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      columns: { type: 'string' },
      reseller: { type: 'string' },
      batch: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.from || !values.source) {
    console.error(USAGE);
    return values.help ? 0 : 1;
  }
  if (!SOURCES.includes(values.from as SourceName)) {
    console.error(`--from must be one of ${SOURCES.join(', ')}\n${USAGE}`);
    return 1;
  }
  const env = { ...process.env, JWT_SECRET: process.env.JWT_SECRET || 'not-used-by-the-import' };
  let cfg = loadConfig(env);
  let stopEmbedded: (() => Promise<void>) | undefined;
  let url = cfg.databaseUrl;
  if (!url) {
    const pg = await startEmbeddedPostgres({ dataDir: cfg.dataDir });
    url = pg.url;
    stopEmbedded = () => pg.stop();
  }
  if (!cfg.encryptionKey) {
    const file = path.resolve(cfg.dataDir, 'encryption.key');
    if (!fs.existsSync(file)) {
      console.error(
        'ENCRYPTION_KEY is not set (nor DATA_DIR/encryption.key): subscriber passwords are stored encrypted with it',
      );
      return 1;
    }
    cfg = { ...cfg, encryptionKey: parseEncryptionKey(fs.readFileSync(file, 'utf8').trim()) };
  }
  setConfig(cfg);
  const db = initDatabase(url, 4);
  try {
    const report = await runImport(db, {
      from: values.from as SourceName,
      source: values.source,
      dryRun: values['dry-run'],
      columns: values.columns,
      defaultReseller: values.reseller,
      batchSize: values.batch ? Number(values.batch) : undefined,
      progress: values.json ? undefined : (m) => console.error(m),
      // The operator's own command, on their own machine: any address, as their mysql client would.
      connection: { allowPrivateTargets: true },
    });
    console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
    return report.money.reconciled ? 0 : 2;
  } catch (err) {
    if (err instanceof ImportInputError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  } finally {
    await closeDatabase();
    await stopEmbedded?.();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`import failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
