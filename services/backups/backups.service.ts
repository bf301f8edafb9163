/**
 * `backups` (docs/operations.md, "Scheduled backups"): with BACKUP_DIR set, a backup of the
 * installation every BACKUP_INTERVAL_SECONDS (one replica at a time, under an advisory lock),
 * keeping the newest BACKUP_KEEP. A failure is logged and, with BACKUP_ALERT_TO, sent to the
 * operator over the chat provider; the listing shows the last one. GET /api/backups lists the
 * folder's backups with their manifests (admin). Runs in the subscribers unit; with several
 * replicas, BACKUP_DIR is a folder they share (or only one replica sets it).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { readHeader, type Manifest } from '../../shared/backup/file-format';
import { requireAdmin } from '../../shared/auth/policy';
import { withTryLock } from '../../shared/db/try-lock';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { adminErrors, object } from '../../shared/http/schemas';
import { backupOptionsFromEnv, type BackupScheduleOptions } from './options';
import { baseBackupSchema, baseBackupsNewestFirst, walArchiveSchema, walArchiveSummary } from './pitr-listing';
import { isBackupFile } from './retention';
import { runScheduledBackup, type BackupDone } from './run-backup';

interface Outcome {
  at: string;
  file?: string;
  error?: string;
}

interface BackupsThis extends Service {
  opts: BackupScheduleOptions;
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  stopping: boolean;
  lastSuccess?: Outcome;
  lastFailure?: Outcome;
  backupNow(): Promise<BackupDone | undefined>;
  scheduled(): void;
}

interface Listed {
  file: string;
  bytes: number;
  manifest: Manifest | null;
  /** Why the manifest could not be read (a damaged or partial file). */
  error: string | null;
}

async function listFolder(dir: string): Promise<Listed[]> {
  if (!fs.existsSync(dir)) return [];
  const names = fs.readdirSync(dir).filter(isBackupFile).sort().reverse();
  const out: Listed[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    // Retention may delete a file between the listing and this look at it.
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    const bytes = stat.size;
    try {
      out.push({ file: name, bytes, manifest: (await readHeader(file)).header.manifest, error: null });
    } catch (err) {
      if (!fs.existsSync(file)) continue;
      out.push({ file: name, bytes, manifest: null, error: (err as Error).message });
    }
  }
  return out;
}

const anObject = { type: 'object' } as const;
const nullableObject = { type: ['object', 'null'] } as const;

/** OpenAPI: the listing (a backup's manifest is the one `npm run backup -- --json` prints). */
const listingData = object({
  schedule: anObject,
  last_success: nullableObject,
  last_failure: nullableObject,
  backups: { type: 'array', items: anObject },
  base_backups: { type: 'array', items: baseBackupSchema },
  wal_archive: { ...walArchiveSchema, type: ['object', 'null'] },
});

const schema: ServiceSchema<ServiceSettingSchema, BackupsThis> = {
  name: 'backups',

  actions: {
    list: {
      rest: 'GET /api/backups',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary:
          'The backups in BACKUP_DIR, newest first, each with its manifest (release, migration level, rows per table, ledger totals, checksum), the schedule and its last success and failure; beside them the point-in-time recovery base backups (BACKUP_DIR/base, newest first, each its base.json) and the archived WAL, summed (docs/operations.md)',
        tag: 'backups',
        data: listingData,
        errors: adminErrors,
      },
      async handler(this: BackupsThis, ctx: Ctx<Record<string, never>>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        const { dir, intervalSeconds, keep, passphrase, alertTo } = this.opts;
        return {
          data: {
            schedule: {
              dir: dir ?? null,
              interval_seconds: dir ? intervalSeconds : 0,
              keep,
              key_carried: passphrase !== undefined,
              alert_to_set: alertTo !== undefined,
            },
            last_success: this.lastSuccess ?? null,
            last_failure: this.lastFailure ?? null,
            backups: dir ? await listFolder(dir) : [],
            base_backups: dir ? baseBackupsNewestFirst(dir) : [],
            wal_archive: dir ? await walArchiveSummary(dir) : null,
          },
        };
      },
    },
  },

  methods: {
    async backupNow(this: BackupsThis): Promise<BackupDone | undefined> {
      const dir = this.opts.dir;
      if (!dir) return undefined;
      return withTryLock('backups.scheduled', () => runScheduledBackup({ ...this.opts, dir }));
    },

    scheduled(this: BackupsThis) {
      if (this.stopping || this.running) return;
      const at = new Date().toISOString();
      this.running = this.backupNow()
        .then((done) => {
          if (!done) return;
          this.lastSuccess = { at, file: path.basename(done.file) };
          this.logger.info('backup written', {
            file: done.file,
            seconds: done.manifest.seconds,
            deleted: done.deleted,
          });
          if (!done.manifest.encryption_key.carried) {
            this.logger.warn(
              `backup ${path.basename(done.file)} does not hold the encryption key (set BACKUP_PASSPHRASE to carry it sealed); the key is in ${done.manifest.encryption_key.location}`,
            );
          }
        })
        .catch(async (err: unknown) => {
          const error = (err as Error).message;
          this.lastFailure = { at, error };
          this.logger.error('backup failed', error);
          if (!this.opts.alertTo) return;
          try {
            await this.broker.call('notifier.sendText', {
              phone: this.opts.alertTo,
              text: `Backup failed at ${at} in ${this.opts.dir}: ${error}`,
            });
          } catch (sendErr) {
            this.logger.error('backup failure alert not sent', (sendErr as Error).message);
          }
        })
        .finally(() => {
          this.running = undefined;
        });
    },
  },

  created(this: BackupsThis) {
    this.opts = backupOptionsFromEnv();
    this.stopping = false;
  },

  started(this: BackupsThis) {
    if (!this.opts.dir || this.opts.intervalSeconds <= 0) return;
    this.timer = setInterval(() => this.scheduled(), this.opts.intervalSeconds * 1000);
    this.timer.unref();
  },

  async stopped(this: BackupsThis) {
    this.stopping = true;
    clearInterval(this.timer);
    await this.running;
  },
};

export const backupsService = schema as ServiceSchema;
