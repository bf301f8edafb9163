/**
 * The embedded mode's base backups on a schedule (docs/operations.md, "Point-in-time recovery"):
 * one at start when the archive has none of this cluster younger than the interval (WAL alone
 * recovers nothing), then one every interval. One process owns an embedded cluster, so no lock.
 */
import { withClientAt } from '../db/client-at';
import { listBaseBackups, takeBaseBackup, type BaseBackupOptions } from './base-backup';

export interface BaseScheduleOptions extends BaseBackupOptions {
  intervalSeconds: number;
  log: { info(msg: string, extra?: unknown): void; error(msg: string, extra?: unknown): void };
}

async function systemIdentifier(url: string): Promise<string> {
  return withClientAt(
    url,
    async (client) =>
      (await client.query<{ id: string }>('select system_identifier::text as id from pg_control_system()')).rows[0].id,
  );
}

/** Starts the schedule; the returned function stops it, waiting for a base backup under way. */
export function scheduleBaseBackups(opts: BaseScheduleOptions): () => Promise<void> {
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (running || stopped) return;
    running = takeBaseBackup(opts)
      .then(({ info, deleted }) =>
        opts.log.info('base backup written', { name: info.name, bytes: info.bytes, stop_lsn: info.stop_lsn, deleted }),
      )
      .catch((err: unknown) => opts.log.error('base backup failed', (err as Error).message))
      .finally(() => {
        running = undefined;
      });
  };
  const first = systemIdentifier(opts.url).then(
    (id) => {
      const fresh = Date.now() - opts.intervalSeconds * 1000;
      const ours = listBaseBackups(opts.backupDir).filter(
        (b) => b.system_identifier === id && Date.parse(b.stop_time) > fresh,
      );
      if (ours.length === 0) run();
    },
    (err: unknown) => opts.log.error('base backup failed', (err as Error).message),
  );
  const timer = opts.intervalSeconds > 0 ? setInterval(run, opts.intervalSeconds * 1000) : undefined;
  timer?.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await first;
    await running;
  };
}
