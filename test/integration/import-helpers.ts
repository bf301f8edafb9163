/** Helpers of the import tests (test/integration/import-*.test.ts). */
import crypto from 'node:crypto';
import type { Pool } from 'pg';
import type { ImportReport } from '../../shared/import';

const TABLES = [
  'subscribers',
  'services',
  'resellers',
  'invoices',
  'invoice_items',
  'invoice_payments',
  'transactions',
  'wallet_entries',
  'radcheck',
  'radreply',
  'radusergroup',
  'radgroupreply',
  'audit_log',
];

/** Row counts of every table an import writes, plus a digest of their contents. */
export async function rowCounts(pool: Pool): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const { rows } = await pool.query(
      `select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ${table} t`,
    );
    out[table] = `${rows[0].n} ${rows[0].h}`;
  }
  return out;
}

/** A report without what differs between two runs of the same plan (time, dry-run flag). */
export function withoutTiming(r: ImportReport): Omit<ImportReport, 'seconds' | 'dryRun'> {
  const { seconds: _s, dryRun: _d, ...rest } = r;
  return rest;
}

export function randomSuffix(): string {
  return crypto.randomBytes(4).toString('hex');
}
