/**
 * The SQL twin of `blockedReason` (shared/domain/access.ts), for the writers and the lifecycle
 * sweep that decide over sets of rows. It reads the subscriber `s`, its plan `p` and the
 * `suspend_overdue_after_days` setting straight from the settings table, so every writer gets the
 * same answer without threading settings through. test/integration/lifecycle-access.test.ts
 * holds both forms to the same table of cases.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';

/** `p.fup_tiers` holds a tier to drop to (levels 1..3, as `validTiers` keeps them). */
export const planHasTiersSql = sql`exists (select 1 from jsonb_array_elements(coalesce(p.fup_tiers, '[]'::jsonb)) t
                      where (t->>'level') ~ '^[1-3]$')`;

const suspendDaysSql = sql`(select (value #>> '{}')::int from settings where key = 'suspend_overdue_after_days')`;

/**
 * Invoice `i` blocks access on `today` (by default the UTC date, as todayIso): open, not paid
 * whole, and due longer ago than `suspend_overdue_after_days`, when that is set.
 */
export function invoiceBlocksSql(today: SQL = sql`(now() at time zone 'UTC')::date`): SQL {
  return sql`(i.status in ('pending', 'partial', 'overdue') and i.total > i.paid_amount
    and ${suspendDaysSql} is not null and i.due_date < ${today} - ${suspendDaysSql})`;
}

/** What the invoices that block access still owe in `currency`, per subscriber (minor units; absent: nothing). */
export async function blockingBalances(
  db: DbOrTx,
  subscriberIds: number[],
  currency: string,
  today?: string,
): Promise<Map<number, number>> {
  const { rows } = await db.execute<{ subscriber_id: number; owed: string }>(sql`
    select i.subscriber_id, sum(i.total - i.paid_amount) as owed from invoices i
     where i.subscriber_id = any(${sql.param(subscriberIds)}::int[]) and i.currency = ${currency}
       and ${today === undefined ? invoiceBlocksSql() : invoiceBlocksSql(sql`${today}::date`)}
     group by i.subscriber_id`);
  return new Map(rows.map((r) => [Number(r.subscriber_id), Number(r.owed)]));
}

/**
 * Why `s` is blocked on `today`, or null. An invoice counts as overdue for the suspension from its
 * due date, whether or not the overdue job has marked it yet: a subscriber is never suspended a
 * sweep late or early depending on the order of two jobs.
 */
export function blockedReasonSql(today: string): SQL {
  return sql`case
    when s.expiry_date < ${today}::date then 'expired'
    when s.fup_level > 0 and not ${planHasTiersSql} then 'quota'
    when exists (
      select 1 from invoices i where i.subscriber_id = s.id and ${invoiceBlocksSql(sql`${today}::date`)}) then 'overdue'
  end`;
}
