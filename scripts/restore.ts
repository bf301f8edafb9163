/**
 * `npm run restore -- <file> [--force] [--passphrase-file <file>] [--key-out <file>]`
 * (docs/operations.md): restores a backup into DATABASE_URL, or into the embedded database under
 * DATA_DIR (no server may be running on it). Refuses a target that holds anything unless --force,
 * checks the checksums first, migrates an older backup forward, and prints the manifest's figures
 * beside the restored ones. The carried key, opened with the passphrase, goes to
 * DATA_DIR/encryption.key (embedded) or --key-out. Exits 0 when every figure agrees, 3 when one
 * differs, 1 when refused or failed.
 *
 * `npm run restore -- --pitr --to <time> [--force]`: point-in-time recovery of the embedded mode
 * into DATA_DIR from the base backups and WAL archive in BACKUP_DIR (shared/backup/pitr.ts).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { parseEncryptionKey } from '../shared/config';
import { installationKey, passphraseFrom } from '../shared/backup/key-source';
import { keyFingerprint } from '../shared/backup/key';
import { compareFigures, inspectBackup, restoreBackup } from '../shared/backup/restore';
import { recoverToTime } from '../shared/backup/pitr';
import { runningEmbeddedPostgres, startEmbeddedPostgres } from '../shared/db/database-setup';

const USAGE = [
  'usage: npm run restore -- <file> [--force] [--passphrase-file <file>] [--key-out <file>]',
  '       npm run restore -- --pitr --to <time> [--force]   (embedded: DATA_DIR from BACKUP_DIR)',
].join('\n');

function loud(lines: string[]): void {
  console.error(lines.map((l) => `!!! ${l}`).join('\n'));
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      force: { type: 'boolean', default: false },
      'passphrase-file': { type: 'string' },
      'key-out': { type: 'string' },
      help: { type: 'boolean', default: false },
      pitr: { type: 'boolean', default: false },
      to: { type: 'string' },
    },
  });
  if (values.pitr) return pointInTime(values.to, values.force, positionals.length > 0);
  const file = positionals[0];
  if (values.help || !file || positionals.length > 1) {
    console.error(USAGE);
    return values.help ? 0 : 1;
  }
  const dataDir = process.env.DATA_DIR || './data';
  const embedded = !process.env.DATABASE_URL;
  const passphrase = passphraseFrom(values['passphrase-file'], process.env);
  // Everything about the file is checked before the target is touched.
  const inspected = await inspectBackup(file, passphrase);
  const { manifest } = inspected.header;
  console.error(
    `backup of ${manifest.created_at}, release ${manifest.app_version}, migration ${manifest.migration.tag}: checksums good`,
  );

  const current = installationKey(process.env, dataDir);
  const carried = inspected.key;
  if (carried && embedded && current.key && !current.key.equals(carried) && !values.force) {
    console.error(
      `restore refused: ${current.location} holds another key than the backup's: pass --force to replace it`,
    );
    return 1;
  }

  let url = process.env.DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  if (!url) {
    if (await runningEmbeddedPostgres({ dataDir })) {
      console.error(`restore refused: a server is running on ${dataDir}: stop it first`);
      return 1;
    }
    const pg = await startEmbeddedPostgres({ dataDir, log: () => undefined });
    url = pg.url;
    stop = () => pg.stop();
  }
  let result;
  try {
    result = await restoreBackup({
      url,
      file,
      force: values.force,
      passphrase,
      inspected,
      progress: (line) => console.error(line),
    });
  } finally {
    await stop?.();
  }

  if (carried) {
    const target = embedded ? current.file : values['key-out'];
    if (target) {
      // A different key already there (refused above unless --force) is kept aside, never lost.
      if (fs.existsSync(target) && !parseEncryptionKey(fs.readFileSync(target, 'utf8').trim()).equals(carried)) {
        fs.renameSync(target, `${target}.replaced-${Date.now()}`);
      }
      fs.writeFileSync(target, carried.toString('hex'), { mode: 0o600 });
      console.error(`encryption key restored to ${target}`);
    } else {
      console.error(
        'the backup carries the encryption key: pass --key-out <file> to write it, then set ENCRYPTION_KEY from it',
      );
    }
  } else {
    const runWith = current.key ? keyFingerprint(current.key) : undefined;
    if (runWith !== manifest.encryption_key.fingerprint) {
      loud([
        runWith
          ? `the key at ${current.location} is not the one this backup's secrets are encrypted under (${manifest.encryption_key.fingerprint}).`
          : `no encryption key here: this backup's secrets are encrypted under key ${manifest.encryption_key.fingerprint}.`,
        `At backup time it was in ${manifest.encryption_key.location}${manifest.encryption_key.carried ? '; the backup carries it: pass --passphrase-file' : ''}.`,
        'Put that key in place before starting, or the stored passwords, credentials and links cannot be read.',
      ]);
    }
  }

  const { lines, same } = compareFigures(manifest, result.restored);
  console.log(lines.join('\n'));
  console.log(
    same
      ? 'restored: every figure matches the manifest'
      : 'restored, but some figures differ from the manifest (above)',
  );
  return same ? 0 : 3;
}

async function pointInTime(to: string | undefined, force: boolean, extra: boolean): Promise<number> {
  const target = to === undefined ? undefined : new Date(to);
  if (!target || extra || Number.isNaN(target.getTime())) {
    console.error(`${USAGE}\n<time>: a date and time with its zone, e.g. 2026-11-28T22:50:00Z`);
    return 1;
  }
  if (process.env.DATABASE_URL) {
    console.error('restore refused: --pitr recovers the embedded database; unset DATABASE_URL and set DATA_DIR');
    return 1;
  }
  if (!process.env.BACKUP_DIR) {
    console.error('restore refused: set BACKUP_DIR to the folder holding base/ and wal/');
    return 1;
  }
  const dataDir = process.env.DATA_DIR || './data';
  if (await runningEmbeddedPostgres({ dataDir })) {
    console.error(`restore refused: a server is running on ${dataDir}: stop it first`);
    return 1;
  }
  const result = await recoverToTime({ dataDir, backupDir: process.env.BACKUP_DIR, target, force });
  console.error(
    `recovered to ${target.toISOString()} from base ${result.base.name} (finished ${result.base.stop_time}) in ${result.seconds.toFixed(1)} s`,
  );
  if (result.stoppedAt) console.error(`server: ${result.stoppedAt}`);
  const current = installationKey(process.env, dataDir);
  const runWith = current.key ? keyFingerprint(current.key) : null;
  if (result.base.key_fingerprint && runWith !== result.base.key_fingerprint) {
    loud([
      runWith
        ? `the key at ${current.location} is not the one this installation ran with (${result.base.key_fingerprint}).`
        : `no encryption key here: this installation's secrets are encrypted under key ${result.base.key_fingerprint}.`,
      'Copy encryption.key from the old DATA_DIR (or set ENCRYPTION_KEY) before starting,',
      'or the stored passwords, credentials and links cannot be read.',
    ]);
  }
  for (const [table, n] of Object.entries(result.rows)) if (n > 0) console.log(`rows ${table}: ${n}`);
  for (const [key, value] of Object.entries(result.ledger)) console.log(`ledger ${key}: ${value}`);
  console.log(`recovered: start the server with DATA_DIR=${dataDir}`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`restore failed: ${(err as Error).message}`);
    process.exit(1);
  },
);
