/**
 * Set-based seeding of a bench's subscriber base into a fresh database: one reseller, two plans,
 * two access servers (192.0.2.1 and .2, ids 1 and 2), `count` subscribers `user<n>@bench` (n from
 * 1) with their RADIUS rows. Shared by bench:subscribers and bench:history.
 */
import type { Client } from 'pg';

export async function seedSubscriberBase(c: Client, count: number, passwordEnc: string): Promise<void> {
  await c.query(
    `insert into resellers (id, name, path, balance, currency) values (1, 'bench', '/1/', 1000000000000, 'USD')`,
  );
  await c.query(`select setval(pg_get_serial_sequence('resellers', 'id'), 1)`);
  await c.query(`insert into services (id, name, price, currency, duration_days, rate_limit, pool_name) values
    (1, 'bench-basic', 1000, 'USD', 30, '5M/10M', 'basic'), (2, 'bench-plus', 2000, 'USD', 30, '10M/20M', 'plus')`);
  await c.query(`select setval(pg_get_serial_sequence('services', 'id'), 2)`);
  await c.query(`insert into reseller_service_limits (reseller_id, service_id) values (1, 1), (1, 2)`);
  await c.query(
    `insert into nas (id, nasname, shortname, secret) values (1, '192.0.2.1', 'edge-1', 's'), (2, '192.0.2.2', 'edge-2', 's')`,
  );
  await c.query(
    `
    insert into subscribers (username, password_enc, full_name, phone, mac_address, service_id, reseller_id, status, expiry_date, created_at,
                             daily_quota_used, fup_level)
    select 'user' || g || '@bench', $1, 'Subscriber ' || g, '+1' || (2000000000 + (g::bigint * 2654435761) % 8000000000),
           upper(substr(md5(g::text), 1, 2) || ':' || substr(md5(g::text), 3, 2) || ':' || substr(md5(g::text), 5, 2) || ':' ||
                 substr(md5(g::text), 7, 2) || ':' || substr(md5(g::text), 9, 2) || ':' || substr(md5(g::text), 11, 2)),
           1 + (g % 2), 1, case when g % 10 = 0 then 'inactive' else 'active' end,
           current_date + (g % 400) - 100, now() - make_interval(secs => g), (g % 1000) * 1048576, g % 4
      from generate_series(1, $2::int) g`,
    [passwordEnc, count],
  );
  await c.query(
    `insert into radcheck (username, attribute, op, value) select username, 'NT-Password', ':=', 'BENCH' from subscribers`,
  );
  await c.query(
    `insert into radusergroup (username, groupname, priority) select username, 'plan_' || service_id, 1 from subscribers`,
  );
}
