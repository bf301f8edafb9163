/**
 * `npm run bench:lifecycle`: a month-end. Seeds subscribers whose paid time ended yesterday, half
 * of them `auto_renew` with a wallet that covers the renewal, under one reseller with the balance
 * for all; times one lifecycle sweep (auto-renew of the funded half, the other half blocked), then
 * puts the same renewed subscribers back as they were and times POST /api/subscribers/bulk-action
 * renew of the same ids, and prints both and their ratio (docs/lifecycle.md, "Benchmark").
 *
 * Environment (all optional):
 *   DATABASE_URL         server to use; a fresh database is created on it and dropped after
 *                        (unset: an embedded PostgreSQL in a temporary folder)
 *   BENCH_SUBSCRIBERS    100000 (expired yesterday)
 *   BENCH_AUTO_RENEW     half of BENCH_SUBSCRIBERS (auto_renew, funded wallets)
 *   BENCH_KEEP=1         keep the bench database
 */
import { Pool } from 'pg';
import { benchAdminToken, IN_PROCESS_SECRETS, scratchStore, startInProcessApp } from './load';
import { encrypt } from '../shared/auth/secrets';
import { intVar, parseEncryptionKey } from '../shared/config';
import type { SweepResult } from '../services/subscribers/lifecycle/lifecycle.service';

const env = (name: string, fallback: number) => intVar(process.env, name, fallback, 1);
const SUBSCRIBERS = env('BENCH_SUBSCRIBERS', 100_000);
const AUTO = Math.min(env('BENCH_AUTO_RENEW', Math.floor(SUBSCRIBERS / 2)), SUBSCRIBERS);
const PRICE = 1000; // minor units: 10.00 USD
const BULK_MAX = 10_000;
const { JWT_SECRET, ENCRYPTION_KEY } = IN_PROCESS_SECRETS;

const seconds = (startNs: bigint) => Number(process.hrtime.bigint() - startNs) / 1e9;

/** Subscribers 1..SUBSCRIBERS expired yesterday with the RADIUS rows of a paid subscriber; 1..AUTO auto-renew. */
async function seed(pool: Pool): Promise<void> {
  const t0 = process.hrtime.bigint();
  const passwordEnc = encrypt('benchpass', parseEncryptionKey(ENCRYPTION_KEY));
  await pool.query(
    `insert into resellers (id, name, path, balance, currency) values (1, 'bench', '/1/', 1000000000000, 'USD')`,
  );
  await pool.query(`select setval(pg_get_serial_sequence('resellers', 'id'), 1)`);
  await pool.query(`insert into services (id, name, price, currency, duration_days, rate_limit, pool_name)
    values (1, 'bench-basic', ${PRICE}, 'USD', 30, '5M/10M', 'basic')`);
  await pool.query(`select setval(pg_get_serial_sequence('services', 'id'), 1)`);
  await pool.query(`insert into reseller_service_limits (reseller_id, service_id) values (1, 1)`);
  await pool.query(
    `insert into subscribers (id, username, password_enc, phone, service_id, reseller_id, status, expiry_date,
                              auto_renew, wallet_balance)
     select g, 'user' || g || '@bench', $1, '+1' || (2000000000 + g), 1, 1, 'active', current_date - 1,
            g <= $3::int, case when g <= $3::int then ${PRICE} else 0 end
       from generate_series(1, $2::int) g`,
    [passwordEnc, SUBSCRIBERS, AUTO],
  );
  await pool.query(`select setval(pg_get_serial_sequence('subscribers', 'id'), $1::int)`, [SUBSCRIBERS]);
  await pool.query(`insert into wallet_entries (subscriber_id, amount, reason)
    select id, wallet_balance, 'bench seed' from subscribers where wallet_balance > 0`);
  // The rows a paid subscriber had until midnight: the sweep finds them stale.
  await pool.query(`insert into radcheck (username, attribute, op, value)
    select username, 'NT-Password', ':=', 'BENCH' from subscribers
    union all
    select username, 'Expiration', ':=', to_char(expiry_date + 1, 'Mon DD YYYY') || ' 00:00:00' from subscribers`);
  await pool.query(
    `insert into radusergroup (username, groupname, priority) select username, 'plan_' || service_id, 1 from subscribers`,
  );
  await pool.query(`vacuum analyze`);
  console.log(
    `seeded ${SUBSCRIBERS} subscribers expired yesterday, ${AUTO} auto_renew with funded wallets, in ${seconds(t0).toFixed(1)} s`,
  );
}

/** The renewed ones as they were before: expired yesterday, not renewed, the wallet funded again. */
async function reset(pool: Pool): Promise<void> {
  await pool.query(
    `update subscribers set expiry_date = current_date - 1, last_renewed_on = null, wallet_balance = ${PRICE}
      where id <= $1::int`,
    [AUTO],
  );
  await pool.query(`insert into wallet_entries (subscriber_id, amount, reason)
    select id, ${PRICE}, 'bench reset' from subscribers where id <= ${AUTO}`);
  await pool.query(`vacuum analyze subscribers`);
}

/**
 * Every router event of the previous phase handled: its disconnects would otherwise compete with
 * the next phase for the same two cores, and the phase that ran first would look faster.
 */
async function drainOutbox(pool: Pool): Promise<void> {
  for (;;) {
    const { rows } = await pool.query<{ left: number }>(
      `select count(*)::int as left from outbox o
        where not exists (select 1 from processed_events p where p.event_id = o.id)`,
    );
    if (rows[0].left === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function counts(pool: Pool) {
  const { rows } = await pool.query<{ invoices: number; paid: number; ledger: number; outbox: number }>(`
    select (select count(*)::int from invoices where kind = 'renewal') as invoices,
           (select count(*)::int from invoices where kind = 'renewal' and status = 'paid') as paid,
           (select count(*)::int from transactions where type = 'renewal') as ledger,
           (select count(*)::int from outbox where payload->>'reason' = 'renew') as outbox`);
  return rows[0];
}

async function main(): Promise<void> {
  const store = await scratchStore('lifecycle');
  process.env.BULK_SYNC_SECONDS = '3600';
  // The bench runs the sweep itself: none at start or on a timer.
  process.env.LIFECYCLE_INTERVAL_SECONDS = '0';
  const app = await startInProcessApp(store, { broker: { requestTimeout: 0 } });
  const pool = new Pool({ connectionString: app.databaseUrl, max: 2 });
  try {
    await seed(pool);
    const auth = `Bearer ${await benchAdminToken(pool, JWT_SECRET)}`;

    const t0 = process.hrtime.bigint();
    const sweep = await app.broker.call<SweepResult, Record<string, never>>('lifecycle.sweep', {});
    const sweepSeconds = seconds(t0);
    if (sweep.skipped) throw new Error(`sweep skipped: ${sweep.reason}`);
    const afterSweep = await counts(pool);
    console.log(
      `\nsweep: ${sweepSeconds.toFixed(2)} s in all; renewed ${sweep.renewed} (failed ${sweep.renew_failed}), ` +
        `blocked ${sweep.blocked}, restored ${sweep.restored}`,
    );
    console.log(
      `  steps: overdue ${sweep.steps.overdue.toFixed(2)} s, auto-renew ${sweep.steps.renew.toFixed(2)} s, ` +
        `blocked state ${sweep.steps.blocked.toFixed(2)} s, reminders ${sweep.steps.reminders.toFixed(2)} s`,
    );
    console.log(`  rows: ${JSON.stringify(afterSweep)}`);

    await reset(pool);
    await drainOutbox(pool);
    const ids = Array.from({ length: AUTO }, (_, i) => i + 1);
    const t1 = process.hrtime.bigint();
    let bulkRenewed = 0;
    let bulkFailed = 0;
    // bulk-action takes at most 10,000 ids a request: the same ids in requests of that size, one after another.
    for (let i = 0; i < ids.length; i += BULK_MAX) {
      const res = await fetch(app.baseUrl + '/api/subscribers/bulk-action', {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ ids: ids.slice(i, i + BULK_MAX), action: 'renew', payload: {} }),
      });
      const body = (await res.json()) as {
        data?: { succeeded?: number[]; failed?: unknown[]; job_id?: number };
        message?: string;
      };
      if (!res.ok) throw new Error(`bulk renew: ${res.status} ${body.message}`);
      if (res.status !== 202) {
        bulkRenewed += body.data?.succeeded?.length ?? 0;
        bulkFailed += body.data?.failed?.length ?? 0;
        continue;
      }
      // Not done within BULK_SYNC_SECONDS: the job carries on; its row says when it is done.
      for (;;) {
        const { rows } = await pool.query<{ status: string; ok: number; bad: number }>(
          `select status, jsonb_array_length(succeeded) as ok, jsonb_array_length(failed) as bad from bulk_jobs where id = $1`,
          [body.data?.job_id],
        );
        if (rows[0] && rows[0].status !== 'running') {
          bulkRenewed += rows[0].ok;
          bulkFailed += rows[0].bad;
          break;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const bulkSeconds = seconds(t1);
    const afterBulk = await counts(pool);
    console.log(`\nbulk-action renew: ${bulkSeconds.toFixed(2)} s; renewed ${bulkRenewed} (failed ${bulkFailed})`);
    console.log(`  rows: ${JSON.stringify(afterBulk)}`);

    // The first sweep ran on a cold process and cache: the same renewals once more, after the bulk
    // path, so that neither path is judged on the order it ran in.
    await reset(pool);
    await drainOutbox(pool);
    const t2 = process.hrtime.bigint();
    const again = await app.broker.call<SweepResult, Record<string, never>>('lifecycle.sweep', {});
    const againSeconds = seconds(t2);
    if (again.skipped) throw new Error(`sweep skipped: ${again.reason}`);
    console.log(
      `\nsweep again (after bulk): ${againSeconds.toFixed(2)} s in all; renewed ${again.renewed} ` +
        `(failed ${again.renew_failed}); auto-renew step ${again.steps.renew.toFixed(2)} s`,
    );

    const sweepRate = sweep.renewed / sweepSeconds;
    const renewRate = sweep.renewed / sweep.steps.renew;
    const againRate = again.renewed / again.steps.renew;
    const bulkRate = bulkRenewed / bulkSeconds;
    console.log(`\n${'path'.padEnd(28)} ${'seconds'.padStart(8)} ${'renewals/s'.padStart(11)}`);
    console.log(
      `${'sweep (all steps)'.padEnd(28)} ${sweepSeconds.toFixed(2).padStart(8)} ${sweepRate.toFixed(0).padStart(11)}`,
    );
    console.log(
      `${'sweep (auto-renew step)'.padEnd(28)} ${sweep.steps.renew.toFixed(2).padStart(8)} ${renewRate.toFixed(0).padStart(11)}`,
    );
    console.log(
      `${'bulk-action renew'.padEnd(28)} ${bulkSeconds.toFixed(2).padStart(8)} ${bulkRate.toFixed(0).padStart(11)}`,
    );
    console.log(
      `${'sweep again (auto-renew)'.padEnd(28)} ${again.steps.renew.toFixed(2).padStart(8)} ${againRate.toFixed(0).padStart(11)}`,
    );
    console.log(
      `ratio sweep/bulk (renewals/s): all steps ${(sweepRate / bulkRate).toFixed(2)}x, auto-renew step ` +
        `${(renewRate / bulkRate).toFixed(2)}x, auto-renew again ${(againRate / bulkRate).toFixed(2)}x`,
    );
  } finally {
    await pool.end();
    await app.stop();
    await store.dispose();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
