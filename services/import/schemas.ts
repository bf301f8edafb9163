import { SOURCES } from '../../shared/import/model';
import { object, type Infer } from '../../shared/http/schemas';

/** Longest server-side path or database URL accepted. */
export const MAX_SOURCE = 2048;

/**
 * POST /api/imports (docs/import.md, "Through the API"). `source` is a MySQL/MariaDB URL for the
 * database sources, or for CSV a file or folder on the server under IMPORT_DIR; CSV may instead come
 * in the body as `files` (text of subscribers.csv and optionally plans.csv, history.csv), bounded by
 * the API's 1 MB request limit.
 */
export const importBody = object(
  {
    from: { type: 'string', enum: [...SOURCES] },
    source: { type: 'string', minLength: 1, maxLength: MAX_SOURCE },
    files: object(
      {
        subscribers: { type: 'string', minLength: 1 },
        plans: { type: 'string' },
        history: { type: 'string' },
      },
      ['subscribers'],
    ),
    dry_run: { type: 'boolean', default: false },
    columns: { type: 'string', maxLength: 4000 },
    reseller: { type: 'string', minLength: 1, maxLength: 200 },
    batch_size: { type: 'integer', minimum: 1, maximum: 10000 },
  },
  ['from'],
);
export type ImportBody = Infer<typeof importBody>;
