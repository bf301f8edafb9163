/**
 * The temporary DATA_DIR of a bench's embedded PostgreSQL. A bench names it and lets the embedded
 * start make it (`startEmbeddedPostgres`, shared/db/bootstrap.mjs), which opens a DATA_DIR it creates
 * to the postgres user that runs PostgreSQL under root, and keeps the cluster under ROOT_STORE when a
 * parent is closed to that user. A directory the bench made itself with mkdtemp is 0700: as root the
 * app refused it and the bench died at start (issue 26).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ScratchDataDir {
  /** Not created yet: the embedded start creates it. */
  dir: string;
  /** Removes it, and the cluster kept elsewhere when DATA_DIR/pg links to one. Safe to call twice. */
  dispose(): void;
}

export function scratchDataDir(prefix: string, parent = os.tmpdir()): ScratchDataDir {
  // 96 random bits: no one can guess the path to make it first (what mkdtemp guarantees otherwise).
  const dir = path.join(parent, `bench-${prefix}-${crypto.randomBytes(12).toString('hex')}`);
  const dispose = () => {
    process.off('exit', dispose);
    const link = path.join(dir, 'pg');
    if (fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) {
      fs.rmSync(path.resolve(dir, fs.readlinkSync(link)), { recursive: true, force: true });
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // A bench that dies (process.exit after a failed start) leaves no database behind either.
  process.on('exit', dispose);
  return { dir, dispose };
}
