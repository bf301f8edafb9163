/**
 * Where rendered invoice PDFs are kept so that an unchanged invoice is served without a browser
 * (docs/documents.md, "PDF cache"). One small interface, so the store can move to object storage;
 * the one implementation is a PostgreSQL table that every replica shares.
 *
 * Entries are never stale by construction: the key is a hash of everything the page shows
 * (invoice-pdf.ts), so any change yields a key that has no entry yet. Eviction only bounds space.
 */
import type { Pool } from 'pg';
import { intVar } from '../../shared/config';

export interface PdfCacheEntry {
  key: string;
  invoiceId: number;
  paper: string;
  pdf: Buffer;
}

export interface PdfStore {
  get(key: string): Promise<Buffer | undefined>;
  /** Stores an entry and drops the invoice's entries for the same paper under other keys (superseded). */
  put(entry: PdfCacheEntry): Promise<void>;
  /** Drops the least recently used entries until the store holds at most `maxBytes`. */
  evict(maxBytes: number): Promise<number>;
}

export interface PdfCacheOptions {
  /** Upper bound of the store in bytes; 0 turns the cache off (every request renders). */
  maxBytes: number;
}

export function pdfCacheOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): PdfCacheOptions {
  return { maxBytes: intVar(env, 'PDF_CACHE_MAX_MB', 512, 0) * 1024 * 1024 };
}

/** A hit refreshes `used_at` at most this often, so most hits write nothing. */
const TOUCH_AFTER = '10 minutes';

export class PgPdfStore implements PdfStore {
  constructor(private readonly pool: () => Pool) {}

  async get(key: string): Promise<Buffer | undefined> {
    const {
      rows: [row],
    } = await this.pool().query<{ pdf: Buffer }>({
      name: 'pdf_cache_get',
      text: `with touched as (update pdf_cache set used_at = now() where key = $1 and used_at < now() - interval '${TOUCH_AFTER}')
        select pdf from pdf_cache where key = $1`,
      values: [key],
    });
    return row?.pdf;
  }

  async put(e: PdfCacheEntry): Promise<void> {
    await this.pool().query({
      name: 'pdf_cache_put',
      text: `with stored as (insert into pdf_cache (key, invoice_id, paper, pdf, size) values ($1, $2, $3, $4, $5)
          on conflict (key) do nothing)
        delete from pdf_cache where invoice_id = $2 and paper = $3 and key <> $1`,
      values: [e.key, e.invoiceId, e.paper, e.pdf, e.pdf.length],
    });
  }

  async evict(maxBytes: number): Promise<number> {
    const res = await this.pool().query(
      `delete from pdf_cache where key in (
        select key from (select key, sum(size) over (order by used_at desc, key) as upto from pdf_cache) ranked where upto > $1)`,
      [maxBytes],
    );
    return res.rowCount ?? 0;
  }
}

/** Least often the store is trimmed: eviction reads every entry's size, so it runs after puts, at most this often. */
const EVICT_EVERY_MS = 5_000;

/**
 * A store kept under `maxBytes`: trimmed after puts (throttled), least recently used first. The
 * bound can be exceeded by the renders of one throttle window until the next put.
 */
export class BoundedPdfStore implements PdfStore {
  private lastEviction = 0;

  constructor(
    private readonly inner: PdfStore,
    private readonly maxBytes: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  get(key: string): Promise<Buffer | undefined> {
    return this.inner.get(key);
  }

  async put(entry: PdfCacheEntry): Promise<void> {
    await this.inner.put(entry);
    if (Date.now() - this.lastEviction < EVICT_EVERY_MS) return;
    this.lastEviction = Date.now();
    void this.inner.evict(this.maxBytes).catch(this.onError);
  }

  evict(maxBytes: number): Promise<number> {
    return this.inner.evict(maxBytes);
  }
}
