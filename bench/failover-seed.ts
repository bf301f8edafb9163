/**
 * The base `npm run bench:failover` (and, opted in, `npm run test:failover`) loads into the Patroni
 * primary before the kill (test/containers/failover-drill.ts): either seedBillingBase in SQL once
 * the units have migrated the database, or a `pg_dump -Fc` of an already seeded and migrated
 * database restored with pg_restore before the units start (its migrations table comes with it).
 *
 * Environment:
 *   FAILOVER_SEED_SUBSCRIBERS, FAILOVER_SEED_LEDGER   the base seeded in SQL (subscribers, ledger rows)
 *   FAILOVER_SEED_DUMP   a pg_dump -Fc file restored instead (e.g. of bench:reports' seeded database)
 *   PG_BIN               folder of pg_restore (default: found on PATH)
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Pool } from 'pg';
import { intVar } from '../shared/config';
import type { Seed } from '../test/containers/failover-drill';
import { seedBillingBase } from './seed-billing-base';

export function sqlSeed(subscribers: number, ledger: number): Seed {
  return {
    label: `${subscribers.toLocaleString('en')} subscribers and ${ledger.toLocaleString('en')} ledger rows (seedBillingBase)`,
    beforeUnits: false,
    load: async (url) => {
      const pool = new Pool({ connectionString: url, max: 2 });
      try {
        await seedBillingBase(pool, subscribers, ledger);
      } finally {
        await pool.end();
      }
    },
  };
}

export function dumpSeed(file: string): Seed {
  return {
    label: `the dump ${path.basename(file)} (pg_restore -j 2)`,
    beforeUnits: true,
    load: (url) =>
      new Promise<void>((resolve, reject) => {
        const bin = process.env.PG_BIN ? path.join(process.env.PG_BIN, 'pg_restore') : 'pg_restore';
        // Owned by the units' role, as their migrations would have made it.
        const child = spawn(bin, ['-j', '2', '--no-owner', '--role=billing', '--exit-on-error', '-d', url, file], {
          stdio: ['ignore', 'inherit', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('error', reject);
        child.on('exit', (code) =>
          code === 0 ? resolve() : reject(new Error(`pg_restore failed (${code}): ${stderr.slice(-2000)}`)),
        );
      }),
  };
}

/** The seed the environment asks for; `defaults` when it names none (undefined: no seed). */
export function seedFromEnv(
  env: NodeJS.ProcessEnv,
  defaults?: { subscribers: number; ledger: number },
): Seed | undefined {
  if (env.FAILOVER_SEED_DUMP) return dumpSeed(path.resolve(env.FAILOVER_SEED_DUMP));
  if (!env.FAILOVER_SEED_SUBSCRIBERS && !env.FAILOVER_SEED_LEDGER && !defaults) return undefined;
  return sqlSeed(
    intVar(env, 'FAILOVER_SEED_SUBSCRIBERS', defaults?.subscribers ?? 1_000_000, 1000),
    intVar(env, 'FAILOVER_SEED_LEDGER', defaults?.ledger ?? 10_000_000, 1000),
  );
}
