/**
 * One report answers as JSON (a page of rows, with what the report adds beside them) or as CSV (every
 * row of the same query through a server-side cursor, so memory stays flat: shared/http/csv.ts).
 */
import type { Readable } from 'node:stream';
import { readPool } from '../../shared/db/client';
import { csvHeaders, cursorRows, csvStream, wantsCsv, type CsvValue } from '../../shared/http/csv';
import type { Meta } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';

export type ReportRow = Record<string, CsvValue>;

export interface ReportQuery<Row> {
  /** The file name of the CSV, without extension. */
  name: string;
  /** Every row of the report, in its order. */
  text: string;
  values: unknown[];
  /** A database row as the API shows it; its keys, in order, are the CSV's columns. */
  view: (row: Row) => ReportRow;
  columns: readonly string[];
  /** Pages of `limit` rows (reports whose rows can be many); otherwise every row at once. */
  page?: { page: number; limit: number };
  /**
   * The page's own statement, when cutting it from `text` would read every row: the page's rows,
   * in order, each with `report_total_rows` (the count of all).
   */
  pageQuery?: (limit: number, offset: number) => { text: string; values: unknown[] };
  /** What JSON answers carry beside `data` (totals, the range): not part of the CSV. */
  extra?: () => Promise<Record<string, unknown>>;
}

export interface Format {
  format?: 'json' | 'csv';
}

export async function answer<Row>(params: Format, meta: Meta, q: ReportQuery<Row>): Promise<ActionResult | Readable> {
  if (wantsCsv(params.format, meta.accept)) {
    meta.$responseHeaders = csvHeaders(`${q.name}.csv`);
    const rows = cursorRows<Row>(q.text, q.values);
    return csvStream(
      q.columns.map((c) => ({ header: c, value: (row: Row) => q.view(row)[c] })),
      rows,
    );
  }
  // Reports tolerate a second of replica lag (DATABASE_READ_URL).
  const pool = readPool();
  // Awaited together with the page: a rejection left pending while the page query ran (or failed)
  // was unhandled, and Node ends the process on one.
  const extra = q.extra ? q.extra() : Promise.resolve({});
  if (!q.page) {
    const [{ rows }, more] = await Promise.all([pool.query<Row & object>(q.text, q.values), extra]);
    return { data: rows.map(q.view), ...more };
  }
  const [paged, more] = await Promise.all([pageOf(pool, q, q.page), extra]);
  return { ...paged, ...more };
}

/** One page of the report's rows and the count of all of them. */
async function pageOf<Row>(
  pool: ReturnType<typeof readPool>,
  q: ReportQuery<Row>,
  { page, limit }: { page: number; limit: number },
): Promise<ActionResult> {
  const n = q.values.length;
  // The page and the count from one run of the query; a page past the end counts on its own.
  const own = q.pageQuery?.(limit, (page - 1) * limit);
  const list = await pool.query<Row & { report_total_rows: string }>(
    own?.text ??
      `select q.*, count(*) over () as report_total_rows from (${q.text}) q limit $${n + 1} offset $${n + 2}`,
    own?.values ?? [...q.values, limit, (page - 1) * limit],
  );
  const total =
    list.rows.length > 0
      ? Number(list.rows[0].report_total_rows)
      : Number((await pool.query<{ n: string }>(`select count(*) as n from (${q.text}) q`, q.values)).rows[0].n);
  return {
    data: list.rows.map(({ report_total_rows: _, ...row }) => q.view(row as unknown as Row)),
    pagination: { page, limit, total },
  };
}
