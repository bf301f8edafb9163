/**
 * Names in the embedded mode's point-in-time archive (docs/operations.md, "Point-in-time
 * recovery"): BACKUP_DIR/wal holds the archived WAL segments, BACKUP_DIR/base one folder per base
 * backup. Pure: the callers do the I/O.
 */

/** What a base backup's base.json records. */
export interface BaseBackupInfo {
  /** The folder's name under BACKUP_DIR/base. */
  name: string;
  system_identifier: string;
  timeline: number;
  start_lsn: string;
  stop_lsn: string;
  /** The WAL segment the recovery starts from: the archive keeps it and every later one. */
  start_wal: string;
  start_time: string;
  /** The earliest time a recovery from this base can stop at (it is consistent from here on). */
  stop_time: string;
  server_version: string;
  app_version: string;
  bytes: number;
  /** Truncated SHA-256 of the encryption key the installation ran with (the key is not in the base). */
  key_fingerprint: string | null;
}

const BASE_NAME = /^base-\d{8}T\d{6}Z$/;
const SEGMENT = /^[0-9A-F]{24}/;

/** `base-20261128T230000Z`: sorts by time as text. */
export function baseBackupName(at: Date): string {
  return `base-${at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}`;
}

export function isBaseBackupName(name: string): boolean {
  return BASE_NAME.test(name);
}

/** The newest base of this installation that finished before `target`, or undefined. */
export function baseFor(bases: BaseBackupInfo[], target: Date): BaseBackupInfo | undefined {
  return bases
    .filter((b) => Date.parse(b.stop_time) <= target.getTime())
    .sort((a, b) => Date.parse(a.stop_time) - Date.parse(b.stop_time))
    .pop();
}

/** Base folders beyond the newest `keep`, oldest first. */
export function basesBeyondRetention(names: string[], keep: number): string[] {
  const ours = names.filter(isBaseBackupName).sort();
  return ours.slice(0, Math.max(0, ours.length - keep));
}

/**
 * Archived files no kept base needs: segments (and their .backup notes) before the oldest kept
 * base's first segment. Positions only grow across timelines, so the timeline part (the first 8
 * characters) is left out of the comparison; timeline histories (.history) are always kept.
 */
export function walBeyondRetention(names: string[], oldestStartWal: string): string[] {
  const from = oldestStartWal.slice(8, 24);
  return names.filter((n) => SEGMENT.test(n) && !n.endsWith('.history') && n.slice(8, 24) < from).sort();
}
