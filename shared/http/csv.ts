import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { escapeLiteral } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import Cursor from 'pg-cursor';
import { readPool } from '../db/client';

export type CsvValue = string | number | boolean | bigint | Date | null | undefined;

// A cell a spreadsheet would run as a formula (CWE-1236) gets a leading apostrophe, as OWASP advises.
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  let text = value instanceof Date ? value.toISOString() : String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly CsvValue[]): string {
  return values.map(csvCell).join(',') + '\r\n';
}

export interface CsvColumn<Row> {
  header: string;
  value: (row: Row) => CsvValue;
}

/**
 * The byte order mark every CSV starts with: without it Excel reads UTF-8 as the machine's code page
 * and garbles Arabic names and notes; other readers (and fetch's text()) skip it.
 */
const BOM = '\uFEFF';

/**
 * Lines are handed on in chunks of about this many characters: a chunk per line cost a write (and
 * an HTTP chunk header) per row, which held a million-row export to a few thousand rows a second.
 */
const CHUNK_CHARS = 64 * 1024;

/** Rows to CSV with back-pressure: the iterator is pulled only as fast as the client reads. */
export function csvStream<Row>(columns: readonly CsvColumn<Row>[], rows: AsyncIterable<Row>): Readable {
  async function* chunks(): AsyncGenerator<string> {
    let chunk = BOM + csvLine(columns.map((c) => c.header));
    for await (const row of rows) {
      chunk += csvLine(columns.map((c) => c.value(row)));
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
    yield chunk;
  }
  return Readable.from(chunks(), { objectMode: false });
}

/**
 * A query's rows in batches through a server-side cursor, so a million-row export holds one batch in
 * memory. The connection is held until the rows are read or the reader stops.
 */
export async function* cursorRows<Row>(text: string, values: unknown[], batch = 5000): AsyncGenerator<Row> {
  // Exports tolerate a second of replica lag (DATABASE_READ_URL).
  const client = await readPool().connect();
  const cursor = client.query(new Cursor<Row>(text, values));
  try {
    for (;;) {
      const rows = await cursor.read(batch);
      if (rows.length === 0) return;
      yield* rows;
    }
  } finally {
    await cursor.close().catch(() => undefined);
    client.release();
  }
}

/**
 * A SQL text cell as csvCell writes it: empty for null or '', a leading apostrophe before a formula
 * start. For statements that COPY out, where the server writes the CSV (copyCsv).
 */
export function csvTextSql(expr: string): string {
  return `case when left(${expr}, 1) in ('=', '+', '-', '@', E'\\t', E'\\r') then '''' || ${expr} else nullif(${expr}, '') end`;
}

const QUOTE = 0x22;
const LF = 0x0a;
const CRLF = Buffer.from('\r\n');

/**
 * COPY's CSV ends a record with LF; RFC 4180 (and csvLine) with CRLF. A newline inside a quoted
 * cell is the cell's own and is left alone, so the quote state is carried across chunks.
 */
class CrlfRecords extends Transform {
  private quoted = false;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const parts: Buffer[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === QUOTE) this.quoted = !this.quoted;
      else if (b === LF && !this.quoted) {
        parts.push(chunk.subarray(start, i), CRLF);
        start = i + 1;
      }
    }
    parts.push(chunk.subarray(start));
    done(null, Buffer.concat(parts));
  }
}

/** `$n` placeholders as literals: COPY takes no parameters. */
function inline(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)\b/g, (_, n: string) => {
    const v = values[Number(n) - 1];
    if (v === null || v === undefined) return 'null';
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    return escapeLiteral(String(v));
  });
}

/** The COPY that writes a query's rows as CSV with a header line (copyCsv). */
export function copyStatement(text: string, values: readonly unknown[]): string {
  return `copy (${inline(text, values)}) to stdout with (format csv, header)`;
}

/**
 * A query's rows as CSV written by the server (`COPY ... TO STDOUT`, header from the column names)
 * and piped on with back-pressure: no row is parsed or formatted in Node, so an export runs at the
 * server's rate and holds a socket buffer in memory. The statement must format its own cells
 * (csvTextSql for text). The connection is held until the copy ends, and dropped if the reader
 * stops early (it is mid-COPY).
 */
export async function copyCsv(text: string, values: readonly unknown[]): Promise<Readable> {
  // An export may lag a second behind: DATABASE_READ_URL's replica when set (docs/operations.md).
  const client = await readPool().connect();
  const copy = client.query(copyTo(copyStatement(text, values)));
  const out = new CrlfRecords();
  out.push(BOM);
  pipeline(copy, out, (err) => client.release(err ?? undefined));
  return out;
}

/** The query property of a route that also answers CSV (`http.csv`). */
export const formatProperty = { format: { type: 'string', enum: ['json', 'csv'] } } as const;

/** CSV when `?format=csv`, or when no format is named and the client accepts text/csv. */
export function wantsCsv(format: string | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  return /(^|[\s,])text\/csv\b/i.test(accept ?? '');
}

/** The response headers of a CSV download named `filename`. */
export function csvHeaders(filename: string): Record<string, string> {
  return {
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="${filename}"`,
    'Cache-Control': 'no-store',
  };
}
