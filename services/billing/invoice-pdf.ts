/**
 * An invoice's PDF, rendered once (docs/documents.md, "PDF cache"). The cache key is a hash of
 * everything the page shows: the invoice row, its items and payments, the subscriber's printed
 * fields and the document settings (one SQL statement hashes them where they live), plus the
 * paper, the template's source, the setting defaults and the public-link origin and key. Any
 * change that could alter the page gives a new key, so an entry can never be stale; a miss
 * renders from one snapshot of the same rows the key was computed from.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { PoolClient } from 'pg';
import { clientOf } from '../../shared/billing/pg';
import { db, pgPool, type DbOrTx } from '../../shared/db/client';
import type { PaperSize } from '../../shared/paper';
import { publicUrl } from '../../shared/public-links';
import { SETTING_DEFS, type SettingKey } from '../../shared/settings';
import type { PdfStore } from './pdf-cache';

/** Settings a document prints (or that pick its paper). */
export const DOCUMENT_SETTINGS = [
  'language',
  'operator_name',
  'operator_address',
  'operator_phone',
  'operator_email',
  'operator_logo_url',
  'how_to_pay',
  'default_paper_size',
] as const satisfies readonly SettingKey[];

export interface PdfSource {
  id: number;
  resellerId: number;
  invoiceNumber: string;
  publicTokenHash: string | null;
  defaultPaper: PaperSize;
  /** Hash of the rows the page shows, as of this statement's snapshot. */
  fingerprint: string;
}

// Fields are joined with separators no value holds (unit and record separators), and absent parts
// are empty strings, so two different documents never concatenate to the same text.
const SOURCE = `select i.id, i.reseller_id as "resellerId", i.invoice_number as "invoiceNumber",
    i.public_token_hash as "publicTokenHash",
    coalesce((select value #>> '{}' from settings where key = 'default_paper_size'), $3) as "defaultPaper",
    md5(concat_ws(E'\\x1f', i::text,
      coalesce((select string_agg(t::text, E'\\x1e' order by t.position, t.id) from invoice_items t where t.invoice_id = i.id), ''),
      coalesce((select string_agg(p::text, E'\\x1e' order by p.id) from invoice_payments p where p.invoice_id = i.id), ''),
      coalesce((select row(s.id, s.username, s.full_name, s.phone, s.address)::text from subscribers s where s.id = i.subscriber_id), ''),
      coalesce((select string_agg(k.key || '=' || k.value::text, E'\\x1e' order by k.key) from settings k where k.key = any($2::text[])), '')
    )) as fingerprint
  from invoices i where i.id = $1`;

/** What the key needs and the routes check (scope, public token, file name), in one statement. */
export async function pdfSource(id: number, client?: PoolClient): Promise<PdfSource | undefined> {
  const query = {
    name: 'billing_pdf_source',
    text: SOURCE,
    values: [id, DOCUMENT_SETTINGS, SETTING_DEFS.default_paper_size.default],
  };
  const {
    rows: [row],
  } = await (client ?? pgPool()).query<PdfSource>(query);
  return row;
}

/** Source files whose change alters pages: the template, its labels and the model built for it. */
function templateSources(): string[] {
  const dir = path.join(__dirname, 'templates');
  const ext = path.extname(__filename);
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(ext))
    .sort()
    .map((f) => path.join(dir, f));
  return [...files, path.join(__dirname, `documents-model${ext}`)];
}

let version: string | undefined;

/**
 * What else a page depends on, fixed for a process: the template's code, the settings' defaults,
 * and the public link's origin and key (a probe link changes with either).
 */
function renderVersion(): string {
  if (version) return version;
  const h = crypto.createHash('sha256');
  for (const file of templateSources()) h.update(fs.readFileSync(file));
  h.update(JSON.stringify(DOCUMENT_SETTINGS.map((k) => SETTING_DEFS[k].default)));
  h.update(publicUrl(0, 'cache-key-probe'));
  version = h.digest('hex');
  return version;
}

export function pdfCacheKey(source: PdfSource, paper: PaperSize): string {
  return crypto.createHash('sha256').update(`${source.fingerprint}\x1f${paper}\x1f${renderVersion()}`).digest('hex');
}

const CHUNK_BYTES = 64 * 1024;

/** Bytes as a stream of 64 KiB chunks: each is one transporter message (NATS caps them at 1 MB). */
export function pdfStream(bytes: Buffer): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += CHUNK_BYTES) parts.push(bytes.subarray(i, i + CHUNK_BYTES));
  return Readable.from(parts, { objectMode: false });
}

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.isBuffer(part) ? part : Buffer.from(part));
  return Buffer.concat(parts);
}

export interface PdfCacheDeps {
  store: PdfStore | undefined;
  /** The page's HTML, read through `conn` (in the snapshot the key is computed in, when caching). */
  html(conn: DbOrTx, paper: PaperSize): Promise<string>;
  /** HTML to PDF (the pdf-renderer call). */
  render(html: string, paper: PaperSize): Promise<Readable>;
  onStoreError(err: unknown): void;
}

/**
 * The PDF of the invoice `source` describes: from the store when its key is there, else rendered
 * from rows read in one REPEATABLE READ snapshot together with the fingerprint that keys them, so
 * the stored bytes are exactly what the key says (a change committed meanwhile only yields a newer
 * key). A store that fails costs a render, never the request. Without a store: the renderer's stream.
 */
export async function cachedPdf(source: PdfSource, paper: PaperSize, deps: PdfCacheDeps): Promise<Buffer | Readable> {
  if (!deps.store) return deps.render(await deps.html(db(), paper), paper);
  const hit = await deps.store.get(pdfCacheKey(source, paper)).catch((err: unknown) => deps.onStoreError(err));
  if (hit) return hit;
  const snap = await snapshotHtml(source.id, paper, deps);
  const pdf = await collect(await deps.render(snap.html, paper));
  if (snap.source) {
    await deps.store
      .put({ key: pdfCacheKey(snap.source, paper), invoiceId: source.id, paper, pdf })
      .catch((err: unknown) => deps.onStoreError(err));
  }
  return pdf;
}

async function snapshotHtml(
  id: number,
  paper: PaperSize,
  deps: PdfCacheDeps,
): Promise<{ html: string; source: PdfSource | undefined }> {
  return db().transaction(
    async (tx) => {
      const source = await pdfSource(id, clientOf(tx));
      return { html: await deps.html(tx, paper), source };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
