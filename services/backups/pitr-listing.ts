/**
 * What point-in-time recovery holds in BACKUP_DIR (docs/operations.md, "Point-in-time recovery"):
 * the base backups (`base/base-<UTC time>/base.json`, newest first; one still being copied is a
 * `.partial` folder and is not listed) and the archived WAL that replays from them.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { listBaseBackups } from '../../shared/backup/base-backup';
import type { BaseBackupInfo } from '../../shared/backup/wal-archive';
import { isoDateTime, object } from '../../shared/http/schemas';

export interface WalArchiveSummary {
  segments: number;
  bytes: number;
  /** The newest segment's name and when it was archived: a recovery can reach about that far. */
  newest_segment: string | null;
  newest_archived_at: string | null;
}

const SEGMENT = /^[0-9A-F]{24}$/;

export function baseBackupsNewestFirst(backupDir: string): BaseBackupInfo[] {
  return listBaseBackups(backupDir).reverse();
}

/** Read without blocking: GET /api/backups runs in the gateway's process, and the archive can hold thousands of segments. */
export async function walArchiveSummary(backupDir: string): Promise<WalArchiveSummary> {
  const dir = path.join(backupDir, 'wal');
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => SEGMENT.test(n));
  let segments = 0;
  let bytes = 0;
  let newest: { name: string; mtime: Date } | undefined;
  for (const name of names) {
    // Retention may delete a segment between the listing and this look at it: not counted.
    const stat = await fs.stat(path.join(dir, name)).catch(() => undefined);
    if (!stat) continue;
    segments++;
    bytes += stat.size;
    if (!newest || name > newest.name) newest = { name, mtime: stat.mtime };
  }
  return {
    segments,
    bytes,
    newest_segment: newest?.name ?? null,
    newest_archived_at: newest?.mtime.toISOString() ?? null,
  };
}

const text = { type: 'string' } as const;
const nullableText = { type: ['string', 'null'] } as const;

/** OpenAPI: one base backup, as its base.json says. */
export const baseBackupSchema = object({
  name: { ...text, description: 'the folder under BACKUP_DIR/base' },
  system_identifier: { ...text, description: "the PostgreSQL cluster's; a recovery uses only its own cluster's" },
  timeline: { type: 'integer' },
  start_lsn: text,
  stop_lsn: text,
  start_wal: { ...text, description: 'the first archived WAL segment a recovery from it replays' },
  start_time: isoDateTime,
  stop_time: { ...isoDateTime, description: 'the earliest moment a recovery from this base can stop at' },
  server_version: text,
  app_version: text,
  bytes: { type: 'integer' },
  key_fingerprint: { ...nullableText, description: 'truncated SHA-256 of the encryption key (the key is not in it)' },
});

/** OpenAPI: the archived WAL, summed. */
export const walArchiveSchema = object({
  segments: { type: 'integer' },
  bytes: { type: 'integer' },
  newest_segment: nullableText,
  newest_archived_at: { type: ['string', 'null'], format: 'date-time' },
});
