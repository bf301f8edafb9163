/**
 * Import from another system (docs/import.md): read a source into the model, then write it (or
 * plan it: dry run) and report. Used by `npm run import` (scripts/import.ts) and the benchmark.
 */
import type { Db } from '../db/client';
import type { ImportData, SourceName } from './model';
import type { ImportReport } from './report';
import { readCsvSource } from './sources/csv';
import { readDaloradius } from './sources/daloradius';
import type { SourceConnection } from './sources/mysql';
import { readPhpnuxbill } from './sources/phpnuxbill';
import { writeImport, type WriteOptions } from './writer';

export { SOURCES, type ImportData, type SourceName } from './model';
export { formatReport, type ImportReport } from './report';
export { ImportInputError } from './sources/csv';

export interface ImportRequest extends WriteOptions {
  from: SourceName;
  /** A MySQL URL (daloradius, phpnuxbill) or a file or folder (csv). */
  source: string;
  /** CSV header mapping, `their=ours,...`. */
  columns?: string;
  /** How a database source may be reached: by default, public addresses only. */
  connection?: SourceConnection;
}

export async function readSource(
  req: Pick<ImportRequest, 'from' | 'source' | 'columns' | 'connection'>,
): Promise<ImportData> {
  switch (req.from) {
    case 'csv':
      return readCsvSource(req.source, req.columns);
    case 'daloradius':
      return readDaloradius(req.source, req.connection);
    case 'phpnuxbill':
      return readPhpnuxbill(req.source, req.connection);
  }
}

export async function runImport(db: Db, req: ImportRequest): Promise<ImportReport> {
  const data = await readSource(req);
  req.progress?.(`read ${data.subscribers.length} subscribers, ${data.plans.length} plans`);
  return writeImport(db, data, req);
}
