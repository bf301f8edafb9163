/**
 * The backup file: one file, written in one pass.
 *
 *   "ISP-BILLING-BACKUP 1\n"  the table data: one gzip member per table (COPY text format)
 *   header JSON               the manifest, where each table's data lies, sequences, the sealed key
 *   trailer (40 bytes)        header length (u64 big-endian) and the header's SHA-256
 *
 * The header goes last because the data's size and checksum are known only once it is written.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { SealedKey } from './key';
import type { MigrationLevel } from './migration-level';

export const MAGIC = Buffer.from('ISP-BILLING-BACKUP 1\n');
export const TRAILER_BYTES = 40;

export interface Manifest {
  app_version: string;
  created_at: string;
  /** Seconds the backup took. */
  seconds: number;
  server_version: string;
  migration: MigrationLevel;
  row_counts: Record<string, number>;
  ledger: Record<string, string>;
  encryption_key: {
    carried: boolean;
    /** shared/backup/key.ts keyFingerprint of the key the data's secrets are encrypted under. */
    fingerprint: string;
    /** Where the key was found at backup time (a path or the ENCRYPTION_KEY variable). */
    location: string;
  };
  checksum: { algorithm: 'sha256'; data: string; bytes: number };
}

export interface Segment {
  table: string;
  columns: string[];
  /** Byte offset in the file and length of the table's gzip member. */
  offset: number;
  bytes: number;
  rows: number;
}

export interface Header {
  manifest: Manifest;
  segments: Segment[];
  sequences: { name: string; value: string | null }[];
  key?: SealedKey;
}

export class BackupFileError extends Error {
  override name = 'BackupFileError';
}

export function trailerFor(headerJson: Buffer): Buffer {
  const trailer = Buffer.alloc(TRAILER_BYTES);
  trailer.writeBigUInt64BE(BigInt(headerJson.length), 0);
  crypto.createHash('sha256').update(headerJson).digest().copy(trailer, 8);
  return trailer;
}

/** The header and where the data ends; refuses a file that is not a whole backup. */
export async function readHeader(file: string): Promise<{ header: Header; dataEnd: number }> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const { size } = await fh.stat();
    if (size < MAGIC.length + TRAILER_BYTES) throw new BackupFileError(`${file} is not a backup (too short)`);
    const magic = Buffer.alloc(MAGIC.length);
    await fh.read(magic, 0, MAGIC.length, 0);
    if (!magic.equals(MAGIC)) throw new BackupFileError(`${file} is not a backup of this application`);
    const trailer = Buffer.alloc(TRAILER_BYTES);
    await fh.read(trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    const length = Number(trailer.readBigUInt64BE(0));
    const dataEnd = size - TRAILER_BYTES - length;
    if (length <= 0 || dataEnd < MAGIC.length) throw new BackupFileError(`${file} is truncated or damaged`);
    const json = Buffer.alloc(length);
    await fh.read(json, 0, length, dataEnd);
    const digest = crypto.createHash('sha256').update(json).digest();
    if (!digest.equals(trailer.subarray(8)))
      throw new BackupFileError(`${file} is damaged: its header checksum differs`);
    return { header: JSON.parse(json.toString('utf8')) as Header, dataEnd };
  } finally {
    await fh.close();
  }
}

/** Recomputes the data's SHA-256 and refuses a file whose data is not what the manifest states. */
export async function verifyData(file: string, header: Header, dataEnd: number): Promise<void> {
  const { checksum } = header.manifest;
  if (dataEnd - MAGIC.length !== checksum.bytes) {
    throw new BackupFileError(
      `${file} is damaged: ${dataEnd - MAGIC.length} bytes of data, the manifest says ${checksum.bytes}`,
    );
  }
  const hash = crypto.createHash('sha256');
  if (checksum.bytes > 0) {
    for await (const chunk of fs.createReadStream(file, { start: MAGIC.length, end: dataEnd - 1 }))
      hash.update(chunk as Buffer);
  }
  if (hash.digest('hex') !== checksum.data)
    throw new BackupFileError(`${file} is damaged: its data checksum differs from the manifest's`);
}
