/**
 * A billing base seeded in SQL into a freshly migrated database, in minutes at the scale
 * (bench:reports, bench:backup): `subscribers` subscribers under 200 resellers (10 top ones, each
 * with 19 below it: a top reseller's tree holds a tenth of the base), `ledger` ledger rows over the
 * last 400 days (payments by five methods, wallet top-ups, renewals, reseller top-ups), an invoice
 * per 5 subscribers (a fifth open), open sessions for a tenth of them, 30 days of usage for a
 * tenth, and 100 card batches of 1,000. The ledger goes in without its triggers and ledger_rollup
 * is filled from it once (the triggers' exactness is the property test's); subscribers go in
 * through subscriber_counts' triggers. Each step's time is printed.
 */
import type { Pool, PoolClient } from 'pg';
import { createIndexes, dropSecondaryIndexes } from '../shared/db/secondary-indexes';
import { ROLLUP_OF_LEDGER } from './ledger-rollup-seed';

const RESELLERS = 200;
/** Ledger rows per statement: one statement of ten million would hold its whole sort in one go. */
const CHUNK = 1_000_000;

const seconds = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e9;

export async function seedBillingBase(pool: Pool, subscribers: number, ledger: number): Promise<void> {
  const timed = async (on: Pool | PoolClient, label: string, text: string, values: unknown[] = []) => {
    const t0 = process.hrtime.bigint();
    await on.query(text, values);
    console.log(`  ${label}: ${seconds(t0).toFixed(1)} s`);
  };
  const step = (label: string, text: string, values: unknown[] = []) => timed(pool, label, text, values);
  console.log(`seeding ${subscribers.toLocaleString('en')} subscribers, ${ledger.toLocaleString('en')} ledger rows`);
  // Resellers 1..10 are top ones; 11..200 hang under them, 19 each.
  await step(
    'resellers',
    `insert into resellers (id, name, parent_id, path, balance, currency)
     select g, 'reseller ' || g, case when g <= 10 then null else 1 + (g - 11) / 19 end,
            case when g <= 10 then '/' || g || '/' else '/' || (1 + (g - 11) / 19) || '/' || g || '/' end,
            100000000, 'USD'
       from generate_series(1, ${RESELLERS}) g`,
  );
  await pool.query(`select setval(pg_get_serial_sequence('resellers', 'id'), ${RESELLERS})`);
  await step(
    'plans, managers, access servers',
    `with p as (insert into services (id, name, price, currency, duration_days)
                select g, 'plan ' || g, 1000 * g, 'USD', 30 from generate_series(1, 10) g returning id),
          m as (insert into managers (id, username, password_hash, role, reseller_id)
                select g, 'manager' || g, '!', 'reseller', 1 + (g % ${RESELLERS}) from generate_series(2, 20) g returning id)
     insert into nas (id, nasname, shortname, secret)
     select g, '192.0.2.' || g, 'edge-' || g, 's' from generate_series(1, 4) g`,
  );
  await pool.query(`select setval(pg_get_serial_sequence('services', 'id'), 10)`);
  await pool.query(`select setval(pg_get_serial_sequence('managers', 'id'), 20)`);
  await pool.query(`select setval(pg_get_serial_sequence('nas', 'id'), 4)`);
  // Reseller of subscriber g: 1 + g % 200, so a top reseller's tree (itself and its 19) holds a tenth.
  await step(
    'subscribers',
    `insert into subscribers (id, username, password_enc, service_id, reseller_id, status, expiry_date, created_at,
                              wallet_balance, auto_renew, is_online, last_nas_id, blocked_reason)
     select g, 'user' || g || '@bench', 'x', 1 + g % 10, 1 + g % ${RESELLERS},
            case when g % 10 = 0 then 'inactive' else 'active' end,
            current_date + (g % 400) - 200, now() - make_interval(days => g % 500), (g % 7) * 500, g % 3 = 0,
            g % 10 = 1, 1 + g % 4, case when g % 400 < 200 and g % 5 = 0 then 'expired' end
       from generate_series(1, $1::int) g`,
    [subscribers],
  );
  await pool.query(`select setval(pg_get_serial_sequence('subscribers', 'id'), $1::int)`, [subscribers]);
  // The ledger in bulk without its triggers (session_replication_role), then ledger_rollup filled once,
  // set-based, as migration 0050 fills it: the triggers' own exactness is the tests' (reports-property).
  const bulk = await pool.connect();
  try {
    await bulk.query('set session_replication_role = replica');
    // The ledger's indexes built once after its rows (minutes less at ten million rows).
    const indexes = await dropSecondaryIndexes(bulk, ['transactions']);
    for (let from = 0; from < ledger; from += CHUNK) {
      const to = Math.min(ledger, from + CHUNK);
      // Mostly payments (five methods), then wallet top-ups, renewals and reseller top-ups; 400 days back.
      await timed(
        bulk,
        `ledger ${from.toLocaleString('en')}-${to.toLocaleString('en')}`,
        `insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, method, created_by,
                                   service_id, created_at)
         select case when k < 70 then 'invoice_payment' when k < 80 then 'wallet_credit' when k < 95 then 'renewal' else 'reseller_credit' end,
                case when k >= 80 and k < 95 then -(1000 + s % 10 * 1000) else 100 + (g::bigint * 7919) % 50000 end,
                'USD', s, 'user' || s || '@bench', 1 + s % ${RESELLERS},
                case when k < 70 then (array['cash', 'card', 'bank', 'wallet', 'prepaid_card'])[1 + g % 5] end,
                case when g % 4 = 0 then null else 2 + (s % ${RESELLERS}) % 19 end, 1 + s % 10,
                now() - make_interval(secs => ((g::bigint * 2654435761) % (400 * 86400))::int)
           from (select g, g % 100 as k, (1 + (g::bigint * 104729) % $3::int)::int as s from generate_series($1::int, $2::int) g) x`,
        [from + 1, to, subscribers],
      );
    }
    const t0 = process.hrtime.bigint();
    await createIndexes(bulk, indexes);
    console.log(`  ledger indexes built after its rows (${indexes.length}): ${seconds(t0).toFixed(1)} s`);
    await timed(bulk, 'ledger_rollup', ROLLUP_OF_LEDGER);
  } finally {
    await bulk.query('reset session_replication_role');
    bulk.release();
  }
  await step(
    'invoices',
    `insert into invoices (invoice_number, subscriber_id, reseller_id, amount, tax_rate, tax_amount, total, paid_amount, status,
                           currency, issue_date, due_date)
     select 'INV-2026-' || lpad(g::text, 8, '0'), s, 1 + s % ${RESELLERS}, 3000, 0, 0, 3000,
            case when g % 5 = 0 then (g % 3) * 1000 else 3000 end,
            case when g % 5 <> 0 then 'paid' when g % 3 = 0 then 'pending' when g % 15 = 5 then 'overdue' else 'partial' end,
            'USD', current_date - g % 200, current_date - g % 200 + 14
       from (select g, 1 + (g * 5) % $1::int as s from generate_series(1, $1::int / 5) g) x`,
    [subscribers],
  );
  await step(
    'open sessions',
    `insert into radacct (acctsessionid, acctuniqueid, username, nasipaddress, acctstarttime, acctupdatetime, acctinputoctets, acctoutputoctets)
     select 's' || g, 'u' || g, 'user' || g || '@bench', ('192.0.2.' || (1 + g % 4))::inet,
            now() - make_interval(mins => g % 3000), now() - make_interval(secs => g % 600), g::bigint * 1000, g::bigint * 9000
       from generate_series(1, $1::int, 10) g`,
    [subscribers],
  );
  await step(
    'usage',
    `insert into daily_usage (subscriber_id, date, download_bytes, upload_bytes)
     select s, current_date - d, (s::bigint * 7919 + d) % 5000000000, (s::bigint * 104729 + d) % 500000000
       from generate_series(1, $1::int, 10) s, generate_series(0, 29) d
     on conflict (subscriber_id, date) do nothing`,
    [subscribers],
  );
  await step(
    'cards',
    `with b as (insert into card_batches (id, reseller_id, value, currency, count, created_at)
                select g, case when g % 5 = 0 then null else 1 + g % ${RESELLERS} end, 500, 'USD', 1000, now() - make_interval(days => g * 3)
                  from generate_series(1, 100) g returning id, created_at)
     insert into cards (batch_id, serial, pin_hash, status, used_at)
     select b.id, b.id || '-' || n, md5(b.id || '-' || n), case when n % 3 = 0 then 'used' else 'active' end,
            case when n % 3 = 0 then b.created_at + make_interval(hours => n) end
       from b, generate_series(1, 1000) n`,
  );
  await step('vacuum analyze', 'vacuum analyze');
}
