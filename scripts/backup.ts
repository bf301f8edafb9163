/**
 * `npm run backup -- --out <file> [--passphrase-file <file>] [--json]` (docs/operations.md): a
 * consistent, compressed backup of DATABASE_URL, or of the embedded database under DATA_DIR (the
 * running server's, else one started for the backup). The encryption key is sealed into it with
 * the passphrase (--passphrase-file or BACKUP_PASSPHRASE), or a loud warning says it is not there
 * and where it is. Exits 1 on failure, leaving no file.
 *
 * `npm run backup -- --base`: a base backup of the embedded cluster into BACKUP_DIR/base for
 * point-in-time recovery (the running server's, whose WAL goes to BACKUP_DIR/wal; else one
 * started with that archiving for the backup). `npm start` takes these on its own schedule too.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { createBackup, keyWarning } from '../shared/backup/backup';
import { takeBaseBackup } from '../shared/backup/base-backup';
import { keyFingerprint } from '../shared/backup/key';
import { backupOptionsFromEnv } from '../services/backups/options';
import { installationKey, passphraseFrom } from '../shared/backup/key-source';
import { runningEmbeddedPostgres, startEmbeddedPostgres } from '../shared/db/database-setup';

const USAGE = [
  'usage: npm run backup -- --out <file> [--passphrase-file <file>] [--json]',
  '       npm run backup -- --base   (embedded: a base backup into BACKUP_DIR/base)',
].join('\n');

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      'passphrase-file': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
      base: { type: 'boolean', default: false },
    },
  });
  if (values.base && !values.help) return baseBackup();
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

async function baseBackup(): Promise<number> {
  const backupDir = process.env.BACKUP_DIR;
  if (process.env.DATABASE_URL || !backupDir) {
    console.error('backup --base is for the embedded mode: unset DATABASE_URL and set BACKUP_DIR');
    return 1;
  }
  const dataDir = process.env.DATA_DIR || './data';
  const source = installationKey(process.env, dataDir);
  const running = await runningEmbeddedPostgres({ dataDir, database: 'postgres' });
  const pg = running
    ? undefined
    : await startEmbeddedPostgres({ dataDir, log: () => undefined, walArchive: path.resolve(backupDir, 'wal') });
  try {
    const { info, deleted } = await takeBaseBackup({
      url: running?.url ?? pg!.adminUrl,
      clusterDir: running?.clusterDir ?? pg!.clusterDir,
      dataDir: path.resolve(dataDir),
      backupDir: path.resolve(backupDir),
      keep: backupOptionsFromEnv().keep,
      keyFingerprint: source.key ? keyFingerprint(source.key) : null,
    });
    console.log(
      `base backup written: ${path.join(backupDir, 'base', info.name)} (${info.bytes} bytes, WAL from ${info.start_wal}); recovers to any time after ${info.stop_time}`,
    );
    if (deleted.length > 0) console.log(`deleted beyond BACKUP_KEEP: ${deleted.length} files and folders`);
    return 0;
  } finally {
    await pg?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`backup failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
