/** Helpers of the import tests (test/integration/import-*.test.ts). */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import mysql from 'mysql2/promise';
import type { Pool } from 'pg';
import type { ImportReport } from '../../shared/import';
import { startMariadb, type MariaDb } from '../helpers/mariadb';

const TABLES = [
  'subscribers',
  'services',
  'resellers',
  'reseller_service_limits',
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
  'radacct',
  'daily_usage',
  'usage_seen',
  'fup_queue',
  'import_usage',
  'deferred_indexes',
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

/**
 * A MariaDB database of its own, loaded from `test/fixtures/import/<folder>/{schema,data}.sql`, for
 * the daloRADIUS and phpnuxbill sources, on a MariaDB server the fixture starts itself
 * (test/helpers/mariadb.ts) and stops on drop(). TEST_MARIADB_URL points it at a running server
 * instead. Without mariadb-server installed the test fails naming the package, it does not skip.
 */
export async function mariadbFixture(folder: string): Promise<{ url: string; drop(): Promise<void> }> {
  const server: MariaDb | undefined = process.env.TEST_MARIADB_URL ? undefined : await startMariadb();
  const admin = process.env.TEST_MARIADB_URL ?? server!.url;
  const name = `import_test_${randomSuffix()}`;
  try {
    const conn = await mysql.createConnection({ uri: admin, multipleStatements: true });
    try {
      await conn.query(`create database \`${name}\` character set utf8mb4`);
      await conn.query(`use \`${name}\``);
      await conn.query(`set session sql_mode = ''`);
      for (const file of ['radacct.sql', `${folder}/schema.sql`, `${folder}/data.sql`]) {
        await conn.query(fs.readFileSync(path.join(__dirname, '../fixtures/import', file), 'utf8'));
      }
    } finally {
      await conn.end();
    }
  } catch (err) {
    await server?.stop();
    throw err;
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      if (server) return server.stop();
      const c = await mysql.createConnection({ uri: admin });
      await c.query(`drop database if exists \`${name}\``);
      await c.end();
    },
  };
}

/**
 * The invoice number's trigram index after an import: back without GIN's fast update (migration
 * 0036; a batch switches it on for its own insert only) and holding every invoice's number, read
 * through that index alone. Returns how many invoices it found.
 */
export async function numberIndexWhole(pool: Pool, search: string): Promise<number> {
  const trgm = await pool.query(`select reloptions from pg_class where relname = 'invoices_number_trgm'`);
  expect(trgm.rows).toEqual([{ reloptions: ['fastupdate=off'] }]);
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('set local enable_seqscan = off; set local enable_indexscan = off');
    const plan = await client.query(`explain select id from invoices where invoice_number ilike '%' || $1 || '%'`, [
      search,
    ]);
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('invoices_number_trgm');
    const found = await client.query(
      `select count(*)::int as n from invoices where invoice_number ilike '%' || $1 || '%'`,
      [search],
    );
    await client.query('rollback');
    const all = await pool.query(
      `select count(*)::int as n from invoices where strpos(lower(invoice_number), lower($1)) > 0`,
      [search],
    );
    expect(found.rows[0].n).toBe(all.rows[0].n);
    return found.rows[0].n;
  } finally {
    client.release();
  }
}
