/**
 * Auto-renew (docs/lifecycle.md): a live, active subscriber with `auto_renew` whose paid time has
 * ended (`expiry_date` before today) and whose wallet covers the renewal price is renewed by the
 * very `renew` operation of POST /renew and bulk renew (reseller charged, counters reset, renewal
 * invoice paid from the wallet, RADIUS rows, disconnect through the outbox), at the first sweep
 * after expiry. One without the funds is not touched: nothing charged, it stays expired.
 */
import { sql } from 'drizzle-orm';
import { systemAuth } from '../../../shared/auth/claims';
import { db } from '../../../shared/db/client';
import type { Settings } from '../../../shared/settings';
import { auditSubscriberRows } from '../audit-rows';
import { lockInScope, renew, type Failed } from '../operations';
import { inBatches } from './batches';

/** Who the sweep acts as: the whole installation, and no manager ("the system"). */
const SYSTEM_AUTH = systemAuth('lifecycle-sweep');

const ALL = { kind: 'all' } as const;

/** What a renewal sets: the columns of its audit rows. */
const RENEWED = ['expiryDate', 'lastRenewedOn', 'walletBalance', 'blockedReason'] as const;

/** The price a renewal charges (`renewalPrice` of shared/domain/subscriber.ts), in SQL over `s` and `p`. */
const priceSql = sql`case when s.override_price and s.price is not null then s.price else p.price end`;

/**
 * What the renewal invoice will ask of the subscriber: the price plus the default tax (the renewal
 * invoice takes `default_tax_rate`), rounded half-up like `percentOf`.
 */
export const renewalDueSql = (settings: Settings) =>
  sql`(${priceSql} + round(${priceSql}::numeric * ${String(settings.default_tax_rate)}::numeric / 100)::bigint)`;

/**
 * The wallet pays the whole renewal invoice: it holds the system currency, which must be the plan's
 * (`payFromWallet` pays nothing across currencies), and at least the amount due.
 */
export const walletCoversSql = (settings: Settings) =>
  sql`(p.currency = ${settings.currency} and s.wallet_balance >= ${renewalDueSql(settings)})`;

/**
 * The renewal's reseller charge can be made: its balance holds the plan's currency and at least the
 * price (`chargeResellers`), judged for this subscriber alone: others of its tree renewed first
 * may still spend it.
 */
export const resellerCoversSql = sql`exists (select 1 from resellers r
  where r.id = s.reseller_id and r.currency = p.currency and r.balance >= ${priceSql})`;

/** Due for an automatic renewal on `today`: the rule, over `s` and its plan `p`. */
const dueSql = (today: string, settings: Settings) => sql`s.deleted_at is null and s.auto_renew and s.status = 'active'
  and s.expiry_date < ${today}::date and s.last_renewed_on is distinct from ${today}::date
  and ${walletCoversSql(settings)}`;

export interface RenewOutcome {
  renewed: number;
  failed: Failed[];
}

export async function autoRenew(
  today: string,
  settings: Settings,
  batchSize: number,
  stopping: () => boolean,
): Promise<RenewOutcome> {
  const candidates = await db().execute<{ id: number }>(sql`
    select s.id from subscribers s join services p on p.id = s.service_id
     where ${dueSql(today, settings)}
     order by s.id`);
  const out: RenewOutcome = { renewed: 0, failed: [] };
  for (const batch of inBatches(
    candidates.rows.map((r) => Number(r.id)),
    batchSize,
  )) {
    if (stopping()) break;
    await db().transaction(async (tx) => {
      const { rows } = await lockInScope(tx, ALL, batch);
      // Read again under the lock: a payment, a manual renew or an edit may have come in between.
      const still = await tx.execute<{ id: number }>(sql`
        select s.id from subscribers s join services p on p.id = s.service_id
         where s.id = any(${sql.param(rows.map((r) => r.id))}::int[]) and ${dueSql(today, settings)}`);
      const due = new Set(still.rows.map((r) => Number(r.id)));
      const chosen = rows.filter((r) => due.has(r.id));
      if (chosen.length === 0) return;
      const result = await renew({ tx, auth: SYSTEM_AUTH, today, settings }, chosen, {});
      const refused = new Set(result.failed.map((f) => f.id));
      const renewed = chosen.filter((r) => !refused.has(r.id)).map((r) => r.id);
      // Actor `system` (no caller); the batch's rows in one statement.
      await auditSubscriberRows(tx, undefined, 'subscriber.auto_renew', RENEWED, chosen, renewed);
      out.renewed += chosen.length - result.failed.length;
      out.failed.push(...result.failed);
    });
  }
  return out;
}
