/**
 * `npm run backup -- --out <file> [--passphrase-file <file>] [--json]` (docs/operations.md): a
 * consistent, compressed backup of DATABASE_URL, or of the embedded database under DATA_DIR (the
 * running server's, else one started for the backup). The encryption key is sealed into it with
 * the passphrase (--passphrase-file or BACKUP_PASSPHRASE), or a loud warning says it is not there
 * and where it is. Exits 1 on failure, leaving no file.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createBackup, keyWarning } from '../shared/backup/backup';
import { installationKey, passphraseFrom } from '../shared/backup/key-source';
import { runningEmbeddedPostgres, startEmbeddedPostgres } from '../shared/db/database-setup';

const USAGE = 'usage: npm run backup -- --out <file> [--passphrase-file <file>] [--json]';

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      'passphrase-file': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.out) {
    console.error(USAGE);
    return values.help ? 0 : 1;
  }
  const dataDir = process.env.DATA_DIR || './data';
  const source = installationKey(process.env, dataDir);
  if (!source.key) {
    console.error(
      process.env.DATABASE_URL
        ? 'backup: ENCRYPTION_KEY is not set: give the key the installation runs with, so the backup records which key its secrets need'
        : `backup: no encryption key at ${source.location}: is DATA_DIR the installation's?`,
    );
    return 1;
  }
  const passphrase = passphraseFrom(values['passphrase-file'], process.env);
  let url = process.env.DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    const running = await runningEmbeddedPostgres({ dataDir });
    if (running) {
      url = running.url;
    } else {
      const pg = await startEmbeddedPostgres({ dataDir, log: () => undefined });
      url = pg.url;
      stop = () => pg.stop();
    }
  }
  try {
    const manifest = await createBackup({
      url,
      out: values.out,
      key: source.key,
      keyLocation: source.location,
      passphrase,
    });
    const size = fs.statSync(values.out).size;
    if (values.json) console.log(JSON.stringify(manifest, null, 2));
    else {
      const rows = Object.values(manifest.row_counts).reduce((a, b) => a + b, 0);
      console.log(
        `backup written: ${values.out} (${size} bytes, ${manifest.seconds.toFixed(1)} s): ${Object.keys(manifest.row_counts).length} tables, ${rows} rows, migration ${manifest.migration.tag}, key ${manifest.encryption_key.carried ? 'carried (sealed with the passphrase)' : 'NOT carried'}`,
      );
    }
    if (!manifest.encryption_key.carried) console.error(keyWarning(source.location));
    return 0;
  } finally {
    await stop?.();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`backup failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
