import { Readable } from 'node:stream';
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
 * Lines are handed on in chunks of about this many characters: a chunk per line cost a write (and
 * an HTTP chunk header) per row, which held a million-row export to a few thousand rows a second.
 */
const CHUNK_CHARS = 64 * 1024;

/** Rows to CSV with back-pressure: the iterator is pulled only as fast as the client reads. */
export function csvStream<Row>(columns: readonly CsvColumn<Row>[], rows: AsyncIterable<Row>): Readable {
  async function* chunks(): AsyncGenerator<string> {
    let chunk = csvLine(columns.map((c) => c.header));
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
