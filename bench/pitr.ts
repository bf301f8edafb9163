/**
 * `npm run bench:pitr` (issue 42): the time of a point-in-time recovery of the embedded mode at the
 * issue's scale, by the steps of test/integration/pitr.test.ts. An embedded PostgreSQL archiving
 * its WAL (as `npm start` with BACKUP_DIR runs it) is seeded by seedBillingBase
 * (bench/seed-billing-base.ts), a base backup taken (shared/backup/base-backup.ts), more ledger
 * rows written with their triggers, the ledger's totals read and the moment T taken, a few rows
 * more after T, the segment switched and archived, the server stopped; then recoverToTime (what
 * `npm run restore -- --pitr --to T` runs) into a new DATA_DIR. Checked: the recovered ledger is
 * the one read at T, the rows after T are not there.
 *
 * Environment (all optional):
 *   BENCH_PITR_SUBSCRIBERS  1000000    BENCH_PITR_LEDGER  10000000 (ledger rows before the base)
 *   BENCH_PITR_WRITES       1000000    ledger rows written after the base, before T
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Pool } from 'pg';
import { takeBaseBackup } from '../shared/backup/base-backup';
import { ledgerTotals } from '../shared/backup/facts';
import { recoverToTime } from '../shared/backup/pitr';
import { intVar } from '../shared/config';
import { runMigrations, startEmbeddedPostgres } from '../shared/db/database-setup';
import { scratchDataDir } from './scratch';
import { seedBillingBase } from './seed-billing-base';
import { timedStep } from './load';

const SUBSCRIBERS = intVar(process.env, 'BENCH_PITR_SUBSCRIBERS', 1_000_000, 1000);
const LEDGER = intVar(process.env, 'BENCH_PITR_LEDGER', 10_000_000, 1000);
const WRITES = intVar(process.env, 'BENCH_PITR_WRITES', 1_000_000, 1000);
const AFTER_T = 1000;
const CHUNK = 100_000;

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

function dirBytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    total += entry.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return total;
}

/** Ledger rows as payments make them: through the ledger's triggers (ledger_rollup kept up to date). */
async function writeLedger(c: Client, from: number, count: number): Promise<void> {
  await c.query(
    `insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, method, service_id)
     select 'invoice_payment', 100 + g % 50000, 'USD', s, 'user' || s || '@bench', 1 + s % 200, 'cash', 1 + s % 10
       from (select g, (1 + (g::bigint * 104729) % $3::int)::int as s from generate_series($1::int, $2::int) g) x`,
    [from, from + count - 1, SUBSCRIBERS],
  );
}

async function main(): Promise<void> {
  const data = scratchDataDir('pitr');
  const recovered = scratchDataDir('pitr-recovered');
  // Not made here: the embedded start makes BACKUP_DIR/wal reachable by the server user.
  const backup = scratchDataDir('pitr-archive');
  try {
    const pg = await startEmbeddedPostgres({
      dataDir: data.dir,
      walArchive: path.join(backup.dir, 'wal'),
      log: () => undefined,
    });
    // Both set before the server stops, or the bench has thrown.
    let target!: Date;
    let atT!: Record<string, string>;
    try {
      await timedStep('migrations', () => runMigrations(pg.url));
      const version = await (async () => {
        const c = new Client({ connectionString: pg.url });
        await c.connect();
        const v = (await c.query('show server_version')).rows[0].server_version as string;
        await c.end();
        return v;
      })();
      console.log(`embedded PostgreSQL ${version}, ${os.cpus().length} cores`);
      const pool = new Pool({ connectionString: pg.url, max: 2 });
      try {
        await timedStep('seed', () => seedBillingBase(pool, SUBSCRIBERS, LEDGER));
      } finally {
        await pool.end();
      }
      const c = new Client({ connectionString: pg.url });
      await c.connect();
      try {
        const size = Number((await c.query('select pg_database_size(current_database()) as b')).rows[0].b);
        console.log(`database size: ${mb(size)}`);
        const { value: base } = await timedStep('base backup', () =>
          takeBaseBackup({
            url: pg.url,
            clusterDir: pg.clusterDir,
            dataDir: data.dir,
            backupDir: backup.dir,
            keep: 2,
            keyFingerprint: null,
          }),
        );
        console.log(`base backup: ${mb(base.info.bytes)}`);
        await timedStep(`${WRITES.toLocaleString('en')} ledger rows after the base`, async () => {
          for (let from = 1; from <= WRITES; from += CHUNK)
            await writeLedger(c, from, Math.min(CHUNK, WRITES - from + 1));
        });
        await c.query('begin isolation level repeatable read read only');
        atT = await ledgerTotals(c);
        await c.query('commit');
        target = new Date((await c.query<{ t: Date }>('select clock_timestamp() as t')).rows[0].t);
        const wal = await c.query<{ b: string }>(
          `select pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text as b`,
          [base.info.stop_lsn],
        );
        console.log(`WAL written since the base backup: ${mb(Number(wal.rows[0].b))}`);
        await new Promise((r) => setTimeout(r, 1100));
        await writeLedger(c, WRITES + 1, AFTER_T);
        const segment = (await c.query<{ w: string }>('select pg_walfile_name(pg_switch_wal()) as w')).rows[0].w;
        await timedStep('last segment archived', async () => {
          for (;;) {
            const { rows } = await c.query<{ last: string | null }>(
              'select last_archived_wal as last from pg_stat_archiver',
            );
            if (rows[0].last !== null && rows[0].last >= segment) return;
            await new Promise((r) => setTimeout(r, 250));
          }
        });
      } finally {
        await c.end();
      }
    } finally {
      await pg.stop();
    }
    console.log(`WAL archive: ${mb(dirBytes(path.join(backup.dir, 'wal')))}`);
    const { value: result } = await timedStep('recovery to T (recoverToTime, what restore --pitr runs)', () =>
      recoverToTime({ dataDir: recovered.dir, backupDir: backup.dir, target, force: false }),
    );
    console.log(`server: ${result.stoppedAt}`);
    const ledgerRows = result.rows.transactions;
    console.log(
      `recovered ${ledgerRows.toLocaleString('en')} ledger rows (expected ${(LEDGER + WRITES).toLocaleString('en')}; the ${AFTER_T} after T not)`,
    );
    const differs = Object.keys(atT).filter((k) => atT[k] !== result.ledger[k]);
    if (ledgerRows !== LEDGER + WRITES || differs.length > 0) {
      throw new Error(`the recovered database is not the one at T (ledger figures differing: ${differs.join(', ')})`);
    }
    console.log(
      `\n${SUBSCRIBERS.toLocaleString('en')} subscribers, ${LEDGER.toLocaleString('en')} ledger rows + ${WRITES.toLocaleString('en')} after the base: point-in-time recovery ${result.seconds.toFixed(1)} s`,
    );
  } finally {
    recovered.dispose();
    data.dispose();
    backup.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
