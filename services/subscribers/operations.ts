/**
 * Every subscriber action as one set-based operation over a batch of locked rows. The single
 * action routes run an operation over one id and turn its failure into an HTTP error; bulk-action
 * runs the same operation over batches, so both behave identically and a batch of thousands costs
 * a handful of statements rather than thousands of round trips.
 */
import { and, asc, getTableColumns, inArray, isNull, sql } from 'drizzle-orm';
import type { Auth } from '../../shared/auth/claims';
import { inScope, type Scope } from '../../shared/auth/policy';
import type { Tx } from '../../shared/db/client';
import { resellers, resellerServiceLimits, services, subscribers } from '../../shared/db/schema';
import {
  clamp,
  GB_BYTES,
  isValidUsername,
  PRICE_MAX,
  QUOTA_GB_MAX,
  renewalPrice,
  walletCoversRenewal,
} from '../../shared/domain/subscriber';
import { writeFupMembership, queueRateLimit } from '../../shared/fup-rate';
import { fromMinor, toMinor, withTax } from '../../shared/money';
import { ApiError } from '../../shared/errors';
import { failure, type Failure } from '../../shared/failures';
import {
  createInvoice,
  createInvoices,
  payFromWallet,
  payNewInvoicesFromWallets,
  quoteServiceChange,
  settleFromWallet,
  settleServiceChange,
  type ServiceChangeQuote,
} from '../../shared/billing';
import { loadSettings, type Settings } from '../../shared/settings';
import { queueDisconnect } from '../../shared/access/outbox';
import { blockingBalances } from '../../shared/access/blocked';
import {
  assignFromPool,
  assignFromPools,
  ourPoolsOf,
  releaseAllPrefixes,
  releasePrefix,
  type PoolsByKind,
} from '../../shared/access/ipv6-pools';
import type { Ipv6Field } from './field-checks';
import { kickChanged, removeAccessRows, renameAccessRows, syncAccessRows } from '../../shared/access/radius-rows';
import { nameTakenSince } from '../../shared/access/session-owner';
import { plansById, type PlanRow, type SubscriberRow } from './subscriber-view';

/** One id that an operation did not apply, with the failure a single request would answer. */
export type Failed = { id: number } & Failure;

export interface OpEnv {
  tx: Tx;
  auth: Auth;
  /** UTC date of the request: expiry comparisons and "renewed today" use it. */
  today: string;
  settings: Settings;
}

export interface OpResult {
  failed: Failed[];
  /** Extra per-id results (renew: transaction_id). */
  extra: Map<number, Record<string, unknown>>;
}

/** `R`: the columns of the locked rows the operation reads (whole rows unless it says fewer). */
export type Operation<P, R extends { id: number } = SubscriberRow> = (
  env: OpEnv,
  rows: R[],
  payload: P,
) => Promise<OpResult>;

/** A row locked with only some columns: those asked for, and the id and reseller the scope check needs. */
export type LockedRow<K extends keyof SubscriberRow> = Pick<SubscriberRow, K | 'id' | 'resellerId'>;

const SUBSCRIBER_COLUMNS = getTableColumns(subscribers);

const intArray = (ids: number[]) => sql`${sql.param(ids)}::int[]`;
const done = (failed: Failed[] = [], extra = new Map<number, Record<string, unknown>>()): OpResult => ({
  failed,
  extra,
});
const idsOf = (rows: { id: number }[]) => rows.map((r) => r.id);

/**
 * Locks the live rows of `ids` (ascending, the order every writer uses) and splits off those that
 * do not exist or lie outside the caller's write scope. With `columns`, the rows carry only those
 * (and id, reseller_id): a bulk disconnect needs the name, and reading and mapping all 37 columns
 * of a 500-id batch through Drizzle cost 9 to 10 ms of the event loop (5 ms with three), while the
 * job's first requests were on the wire.
 */
export async function lockInScope(
  tx: Tx,
  scope: Scope,
  ids: number[],
): Promise<{ rows: SubscriberRow[]; failed: Failed[] }>;
export async function lockInScope<K extends keyof SubscriberRow>(
  tx: Tx,
  scope: Scope,
  ids: number[],
  columns: readonly K[],
): Promise<{ rows: LockedRow<K>[]; failed: Failed[] }>;
export async function lockInScope(
  tx: Tx,
  scope: Scope,
  ids: number[],
  columns?: readonly (keyof SubscriberRow)[],
): Promise<{ rows: LockedRow<keyof SubscriberRow>[]; failed: Failed[] }> {
  // One array parameter: inArray's 500 bound parameters cost about as much Node CPU again.
  const live = and(sql`${subscribers.id} = any(${intArray(ids)})`, isNull(subscribers.deletedAt));
  // Whether the row's reseller exists and lies in the caller's scope, read with the lock: one
  // round trip a batch instead of a second query over the locked rows' resellers.
  const scoped = sql<boolean>`${subscribers.resellerId} in (select ${resellers.id} from ${resellers} where ${inScope(scope, resellers.id)})`;
  const selection = columns
    ? Object.fromEntries(['id' as const, 'resellerId' as const, ...columns].map((k) => [k, SUBSCRIBER_COLUMNS[k]]))
    : SUBSCRIBER_COLUMNS;
  const rows = (await tx
    .select({ ...selection, scoped })
    .from(subscribers)
    .where(live)
    .orderBy(asc(subscribers.id))
    .for('update', { of: subscribers })) as (LockedRow<keyof SubscriberRow> & { scoped: boolean })[];
  const found = new Set(rows.map((r) => r.id));
  const failed: Failed[] = ids.filter((id) => !found.has(id)).map((id) => ({ id, ...failure('subscriberNotFound') }));
  const kept: LockedRow<keyof SubscriberRow>[] = [];
  for (const { scoped: allowed, ...row } of rows) {
    if (allowed) kept.push(row);
    else failed.push({ id: row.id, ...failure('outOfScope') });
  }
  return { rows: kept, failed };
}

// ------------------------------------------------------------------ money from reseller balances

interface Charge {
  row: SubscriberRow;
  amount: number;
  currency: string;
}

/**
 * Debits each owning reseller for its subscribers (reseller rows locked in id order after the
 * subscriber rows), one ledger row per charge. A reseller whose balance runs out fails the rest of
 * its charges: the ones in id order that still fit are made.
 */
async function chargeResellers(
  env: OpEnv,
  charges: Charge[],
  type: 'renewal' | 'rename_fee' | 'refill_fee',
): Promise<{ charged: SubscriberRow[]; failed: Failed[]; transactionIds: Map<number, number> }> {
  const transactionIds = new Map<number, number>();
  if (charges.length === 0) return { charged: [], failed: [], transactionIds };
  const ids = [...new Set(charges.map((c) => c.row.resellerId))].sort((a, b) => a - b);
  const locked = await env.tx
    .select()
    .from(resellers)
    .where(inArray(resellers.id, ids))
    .orderBy(asc(resellers.id))
    .for('update');
  const balance = new Map(locked.map((r) => [r.id, r.balance]));
  const currency = new Map(locked.map((r) => [r.id, r.currency]));
  const charged: Charge[] = [];
  const failed: Failed[] = [];
  for (const c of charges) {
    const have = balance.get(c.row.resellerId) ?? 0;
    if (currency.get(c.row.resellerId) !== c.currency) {
      failed.push({ id: c.row.id, ...failure('resellerCurrencyMismatch', c.currency) });
    } else if (have < c.amount) {
      failed.push({ id: c.row.id, ...failure('insufficientBalance') });
    } else {
      balance.set(c.row.resellerId, have - c.amount);
      charged.push(c);
    }
  }
  if (charged.length === 0) return { charged: [], failed, transactionIds };
  const touched = [...new Set(charged.map((c) => c.row.resellerId))];
  await env.tx.execute(sql`
    update resellers r set balance = v.balance, updated_at = now()
      from unnest(${intArray(touched)}, ${sql.param(touched.map((id) => balance.get(id)))}::bigint[]) as v(id, balance)
     where r.id = v.id`);
  // Ledger sign: a reseller debit is negative (ledger.ts: money debited is negative).
  const res = await env.tx.execute<{ id: number; subscriber_id: number }>(sql`
    insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, created_by)
    select ${type}, -c.amount, c.currency, c.subscriber_id, c.username, c.reseller_id, ${env.auth.managerId}
      from unnest(${sql.param(charged.map((c) => c.amount))}::bigint[], ${sql.param(charged.map((c) => c.currency))}::text[],
                  ${intArray(charged.map((c) => c.row.id))}, ${sql.param(charged.map((c) => c.row.username))}::text[],
                  ${intArray(charged.map((c) => c.row.resellerId))}) as c(amount, currency, subscriber_id, username, reseller_id)
    returning id, subscriber_id`);
  for (const r of res.rows) transactionIds.set(Number(r.subscriber_id), Number(r.id));
  return { charged: charged.map((c) => c.row), failed, transactionIds };
}

// ------------------------------------------------------------------ operations

export const renew: Operation<unknown> = async (env, rows) =>
  renewOnPlans(
    env,
    rows,
    await plansById(
      env.tx,
      rows.map((r) => r.serviceId),
    ),
  );

/** `renew` over rows whose plans the caller has read. */
async function renewOnPlans(env: OpEnv, rows: SubscriberRow[], plans: Map<number, PlanRow>): Promise<OpResult> {
  const failed: Failed[] = [];
  const charges: Charge[] = [];
  for (const r of rows) {
    if (r.lastRenewedOn === env.today) failed.push({ id: r.id, ...failure('renewedToday') });
    else {
      const plan = plans.get(r.serviceId)!;
      charges.push({ row: r, amount: renewalPrice(r, plan), currency: plan.currency });
    }
  }
  const { charged, failed: unpaid, transactionIds } = await chargeResellers(env, charges, 'renewal');
  failed.push(...unpaid);
  const extra = new Map<number, Record<string, unknown>>();
  if (charged.length === 0) return done(failed, extra);
  const ids = idsOf(charged);
  await env.tx.execute(sql`
    update subscribers s
       set expiry_date = greatest(s.expiry_date, ${env.today}::date) + p.duration_days,
           last_renewed_on = ${env.today}::date,
           daily_quota_used = 0, monthly_quota_used = 0, extra_quota_bytes = 0, fup_level = 0,
           updated_at = now()
      from services p
     where p.id = s.service_id and s.id = any(${intArray(ids)})`);
  await syncAccessRows(env.tx, ids, env.today);
  await queueDisconnect(env.tx, charged, 'renew');
  // One numbering bump and two multi-row inserts for the whole batch, in id order like the charges.
  const records = await createInvoices(
    env.tx,
    charged.map((r) => {
      const plan = plans.get(r.serviceId)!;
      return {
        subscriberId: r.id,
        resellerId: r.resellerId,
        items: [
          {
            description: `Renewal: ${plan.name} (${plan.durationDays} days)`,
            qty: 1,
            unitPrice: renewalPrice(r, plan),
          },
        ],
        currency: plan.currency,
        // The rate the caller decided with (the sweep's and renewFromWallet's wallet rule).
        taxRate: env.settings.default_tax_rate,
        kind: 'renewal' as const,
        createdBy: env.auth.managerId,
      };
    }),
  );
  // The wallet pays first when it holds credit: one statement for the whole batch.
  const applied = await payNewInvoicesFromWallets(
    env.tx,
    charged
      .map((r, i) => ({ invoice: records[i].invoice, subscriber: r }))
      .filter((d) => d.subscriber.walletBalance > 0),
    env.settings.currency,
    env.auth.managerId,
  );
  for (const [i, r] of charged.entries()) {
    const { invoice } = records[i];
    extra.set(r.id, {
      transaction_id: transactionIds.get(r.id),
      invoice_id: invoice.id,
      invoice_number: invoice.invoiceNumber,
      wallet_applied: fromMinor(applied.get(invoice.id) ?? 0, invoice.currency),
    });
  }
  return done(failed, extra);
}

/**
 * A renewal the wallet pays whole (self-care, an online renewal payment, a money card's auto-renew):
 * decided on the row locked here, so a wallet spent since the caller looked is 402 `wallet balance
 * does not cover the price` and nothing is charged, instead of a renewal on credit. The invoices
 * that block access are paid from the wallet first and must fit in it too: a renewal beside them
 * bought time the subscriber could not use (as an online renewal payment, payments/settle.ts).
 */
export const renewFromWallet: Operation<{ checkoutId?: number }> = async (env, rows, payload) => {
  if (payload.checkoutId !== undefined) {
    // An online payment's renewal is made once: claimed in the renewal's own transaction, so a
    // failure rolls the claim back and a second try (its first answer lost) finds it made.
    const claimed = await env.tx.execute(sql`
      update online_checkouts set renewal_due = false where id = ${payload.checkoutId} and renewal_due returning id`);
    if (claimed.rows.length === 0) return done(rows.map((r) => ({ id: r.id, ...failure('renewedForPayment') })));
  }
  const plans = await plansById(
    env.tx,
    rows.map((r) => r.serviceId),
  );
  // The tax and currency as of the lock, for the rule and the invoice alike: read before it, a rate
  // raised meanwhile passed the rule at the old one and left the new tax owed.
  const settings = { ...env.settings, ...(await loadSettings(env.tx, ['currency', 'default_tax_rate'])) };
  const failed: Failed[] = [];
  const blocking = await blockingBalances(env.tx, idsOf(rows), settings.currency, env.today);
  const covered: SubscriberRow[] = [];
  for (const r of rows) {
    // Renewed today: refused by the renewal itself, nothing paid.
    if (r.lastRenewedOn === env.today) covered.push(r);
    else {
      const owed = blocking.get(r.id) ?? 0;
      const left = { ...r, walletBalance: r.walletBalance - owed };
      if (!walletCoversRenewal(left, plans.get(r.serviceId)!, settings)) {
        failed.push({ id: r.id, ...failure('walletShort') });
        continue;
      }
      if (owed > 0) {
        const settled = await settleFromWallet(env.tx, r.id, {
          walletBalance: r.walletBalance,
          currency: settings.currency,
          blockingOnly: true,
        });
        left.walletBalance = settled.walletBalance;
      }
      covered.push(left);
    }
  }
  const result = covered.length ? await renewOnPlans({ ...env, settings }, covered, plans) : done();
  return done([...failed, ...result.failed], result.extra);
};

/** Extra GB on top of the monthly quota; the FUP engine lowers the level at its next pass. */
export const topupData: Operation<{ gb: number }> = async (env, rows, payload) => {
  const bytes = Math.round(payload.gb * GB_BYTES);
  await env.tx
    .update(subscribers)
    .set({ extraQuotaBytes: sql`${subscribers.extraQuotaBytes} + ${bytes}`, fupPending: true, updatedAt: sql`now()` })
    .where(inArray(subscribers.id, idsOf(rows)));
  return done([], new Map(rows.map((r) => [r.id, { added_bytes: bytes }])));
};

/**
 * A data top-up the wallet pays (self-care, not routed): the invoice (price plus the default tax),
 * its payment from the wallet and the extra quota in one transaction, decided on the locked row:
 * 402 `wallet balance does not cover the price` and nothing written when it does not cover it.
 */
export const buyTopupFromWallet: Operation<{ gb: number; priceMinor: number }> = async (env, rows, payload) => {
  const s = await loadSettings(env.tx, ['currency', 'default_tax_rate']);
  const short = rows.filter((r) => r.walletBalance < withTax(payload.priceMinor, s.default_tax_rate));
  if (short.length) return done(short.map((r) => ({ id: r.id, ...failure('walletShort') })));
  const extra = new Map<number, Record<string, unknown>>();
  for (const r of rows) {
    const { invoice } = await createInvoice(env.tx, {
      subscriberId: r.id,
      resellerId: r.resellerId,
      items: [{ description: `Data top-up: ${payload.gb} GB`, qty: 1, unitPrice: payload.priceMinor }],
      currency: s.currency,
      taxRate: s.default_tax_rate,
      createdBy: env.auth.managerId,
    });
    if (invoice.total > 0)
      await payFromWallet(env.tx, {
        invoiceId: invoice.id,
        amount: invoice.total,
        exact: true,
        createdBy: env.auth.managerId,
      });
    extra.set(r.id, { invoice_id: invoice.id });
  }
  const added = await topupData(env, rows, payload);
  for (const [id, more] of added.extra) extra.set(id, { ...extra.get(id), ...more });
  return done([], extra);
};

export const disconnect: Operation<unknown, Pick<SubscriberRow, 'id' | 'username'>> = async (env, rows) => {
  await queueDisconnect(env.tx, rows, 'disconnect');
  return done();
};

function setStatus(status: 'active' | 'inactive'): Operation<unknown> {
  return async (env, rows) => {
    const changed = rows.filter((r) => r.status !== status);
    if (changed.length === 0) return done();
    await env.tx
      .update(subscribers)
      .set({ status, updatedAt: sql`now()` })
      .where(inArray(subscribers.id, idsOf(changed)));
    await syncAccessRows(env.tx, idsOf(changed), env.today);
    if (status === 'inactive') await queueDisconnect(env.tx, changed, 'disable');
    return done();
  };
}
export const enable = setStatus('active');
export const disable = setStatus('inactive');

/**
 * Back to full speed: the tier group goes and the live session gets the plain rate by CoA. A
 * subscriber blocked for its quota (a plan without tiers) is restored instead: access rows
 * rebuilt, and its garden session dropped so that it logs in again on its plan.
 */
async function liftFup(env: OpEnv, rows: SubscriberRow[]): Promise<void> {
  const blocked = idsOf(rows.filter((r) => r.blockedReason !== null));
  await kickChanged(env.tx, await syncAccessRows(env.tx, blocked, env.today));
  const throttled = idsOf(rows.filter((r) => r.fupLevel > 0 && r.blockedReason === null));
  await writeFupMembership(env.tx, throttled);
  await queueRateLimit(env.tx, throttled);
}

export const resetFup: Operation<unknown> = async (env, rows) => {
  await env.tx
    .update(subscribers)
    .set({ dailyQuotaUsed: 0, fupLevel: 0, updatedAt: sql`now()` })
    .where(inArray(subscribers.id, idsOf(rows)));
  await liftFup(env, rows);
  return done();
};

export const softDelete: Operation<unknown, Pick<SubscriberRow, 'id' | 'username'>> = async (env, rows) => {
  await env.tx
    .update(subscribers)
    .set({ deletedAt: sql`now()`, updatedAt: sql`now()` })
    .where(inArray(subscribers.id, idsOf(rows)));
  await releaseAllPrefixes(env.tx, idsOf(rows));
  await removeAccessRows(
    env.tx,
    rows.map((r) => r.username),
  );
  await queueDisconnect(env.tx, rows, 'delete');
  return done();
};

export const resetMac: Operation<unknown, { id: number }> = async (env, rows) => {
  await env.tx
    .update(subscribers)
    .set({ macAddress: null, updatedAt: sql`now()` })
    .where(inArray(subscribers.id, idsOf(rows)));
  await syncAccessRows(env.tx, idsOf(rows), env.today);
  return done();
};

export const refill: Operation<unknown> = async (env, rows) => {
  const fee = feeMinor(env.settings.refill_fee, env.settings.currency);
  let ok = rows;
  const failed: Failed[] = [];
  if (fee > 0) {
    const res = await chargeResellers(
      env,
      rows.map((row) => ({ row, amount: fee, currency: env.settings.currency })),
      'refill_fee',
    );
    ok = res.charged;
    failed.push(...res.failed);
  }
  if (ok.length) {
    await env.tx
      .update(subscribers)
      .set({ dailyQuotaUsed: 0, monthlyQuotaUsed: 0, fupLevel: 0, updatedAt: sql`now()` })
      .where(inArray(subscribers.id, idsOf(ok)));
    await liftFup(env, ok);
  }
  return done(failed);
};

/** A fee setting is a decimal in the system currency; rounding it to the minor unit is the operator's intent. */
function feeMinor(fee: number, currency: string): number {
  try {
    return toMinor(fee, currency);
  } catch {
    return toMinor(Number(fee.toFixed(2)), currency);
  }
}

export function setQuota(column: 'daily' | 'monthly'): Operation<{ gb: number }, { id: number }> {
  return async (env, rows, payload) => {
    const gb = String(clamp(payload.gb, 0, QUOTA_GB_MAX));
    const set = column === 'daily' ? { dailyQuotaGb: gb } : { monthlyQuotaGb: gb };
    await env.tx
      .update(subscribers)
      .set({ ...set, updatedAt: sql`now()` })
      .where(inArray(subscribers.id, idsOf(rows)));
    return done();
  };
}

export const setPrice: Operation<{ price: number; override_price: boolean }> = async (env, rows, payload) => {
  const price = clamp(payload.price, 0, PRICE_MAX);
  const plans = await plansHeld(
    env.tx,
    rows.map((r) => r.serviceId),
  );
  const failed: Failed[] = [];
  const byPrice = new Map<number, number[]>();
  for (const r of rows) {
    const currency = plans.get(r.serviceId)!.currency;
    let minor: number;
    try {
      minor = toMinor(price, currency);
    } catch {
      failed.push({ id: r.id, ...failure('tooManyDecimals', 'price', currency) });
      continue;
    }
    byPrice.set(minor, [...(byPrice.get(minor) ?? []), r.id]);
  }
  for (const [minor, ids] of byPrice) {
    await env.tx
      .update(subscribers)
      .set({ price: minor, overridePrice: payload.override_price, updatedAt: sql`now()` })
      .where(inArray(subscribers.id, ids));
  }
  return done(failed);
};

export const setReseller: Operation<{ reseller_id: number }> = async (env, rows, payload) => {
  // The new owner must sell each row's plan, within its cap, as a create for it would.
  const { ok, failed } = await checkPlacements(
    env.tx,
    rows.map((row) => ({ row, resellerId: payload.reseller_id, serviceId: row.serviceId })),
  );
  if (ok.length)
    await env.tx
      .update(subscribers)
      .set({ resellerId: payload.reseller_id, updatedAt: sql`now()` })
      .where(inArray(subscribers.id, idsOf(ok)));
  return done(failed);
};

/**
 * Plans by id (retired ones too), each held `FOR SHARE` in id order until commit. A plan's change
 * of currency counts the prices stored on it under its own lock (`FOR UPDATE`), and its retirement
 * the subscribers on it: both wait for a writer that read a currency or placed a subscriber here.
 */
export async function plansHeld(tx: Tx, planIds: number[]): Promise<Map<number, PlanRow>> {
  const ids = [...new Set(planIds)].sort((a, b) => a - b);
  if (ids.length === 0) return new Map();
  const rows = await tx.select().from(services).where(inArray(services.id, ids)).orderBy(asc(services.id)).for('share');
  return new Map(rows.map((r) => [r.id, r]));
}

/** A subscriber row bound for a reseller and a plan (either may be the one it has). */
export interface Placement {
  row: SubscriberRow;
  resellerId: number;
  serviceId: number;
}

/** Checks the owning resellers' service limits for `plan` when `rows` move onto it. */
export function checkServiceLimits(tx: Tx, rows: SubscriberRow[], planId: number) {
  return checkPlacements(
    tx,
    rows.map((row) => ({ row, resellerId: row.resellerId, serviceId: planId })),
  );
}

/**
 * Checks each placement against its reseller's service limit for its plan: the reseller must have
 * one (the default reseller sells every plan it has none for), and a capped one must have room (a
 * row already under that reseller and plan is not counted twice). A placement onto another plan
 * also needs that plan live.
 */
export async function checkPlacements(
  tx: Tx,
  requested: Placement[],
): Promise<{ ok: SubscriberRow[]; failed: Failed[] }> {
  const failed: Failed[] = [];
  const moves = requested.filter((p) => p.row.serviceId !== p.serviceId);
  const held = await plansHeld(
    tx,
    moves.map((p) => p.serviceId),
  );
  const placements = requested.filter((p) => {
    if (p.row.serviceId === p.serviceId || held.get(p.serviceId)?.deletedAt === null) return true;
    failed.push({ id: p.row.id, ...failure('referenceNotFound', 'service_id') });
    return false;
  });
  if (placements.length === 0) return { ok: [], failed };
  const pairKey = (resellerId: number, serviceId: number) => `${resellerId}:${serviceId}`;
  const pairs = [...new Map(placements.map((p) => [pairKey(p.resellerId, p.serviceId), p])).values()];
  // Shared, so a limit cannot change or go while this transaction counts against it; a capped one
  // is also counted under its own lock, in id order, so two writers cannot both take its last
  // place. An uncapped limit (the usual one) then lets writers through side by side.
  const limits = await tx
    .select()
    .from(resellerServiceLimits)
    .where(
      sql`(${resellerServiceLimits.resellerId}, ${resellerServiceLimits.serviceId}) in (select * from unnest(${intArray(
        pairs.map((p) => p.resellerId),
      )}, ${intArray(pairs.map((p) => p.serviceId))}))`,
    )
    .orderBy(asc(resellerServiceLimits.id))
    .for('share');
  const capped = limits.filter((l) => l.maxSubscribers !== null);
  // unnest yields the array's order, so the locks are taken in id order.
  if (capped.length)
    await tx.execute(
      sql`select pg_advisory_xact_lock(hashtext('reseller_service_limits'), id)
            from unnest(${intArray(capped.map((l) => l.id))}) as id`,
    );
  const counts = new Map<string, number>();
  if (capped.length) {
    const res = await tx.execute<{ reseller_id: number; service_id: number; n: number }>(sql`
      select reseller_id, service_id, count(*)::int as n from subscribers
       where deleted_at is null
         and (reseller_id, service_id) in (select * from unnest(${intArray(capped.map((l) => l.resellerId))},
                                                               ${intArray(capped.map((l) => l.serviceId))}))
       group by reseller_id, service_id`);
    for (const r of res.rows) counts.set(pairKey(Number(r.reseller_id), Number(r.service_id)), Number(r.n));
  }
  const limitOf = new Map(limits.map((l) => [pairKey(l.resellerId, l.serviceId), l.maxSubscribers]));
  const unlimited =
    limitOf.size < pairs.length ? (await loadSettings(tx, ['default_reseller_id'])).default_reseller_id : null;
  const ok: SubscriberRow[] = [];
  for (const { row, resellerId, serviceId } of placements) {
    const key = pairKey(resellerId, serviceId);
    if (!limitOf.has(key) && resellerId !== unlimited) {
      failed.push({ id: row.id, ...failure('noServiceLimit') });
      continue;
    }
    const max = limitOf.get(key);
    const n = counts.get(key) ?? 0;
    const alreadyThere = row.resellerId === resellerId && row.serviceId === serviceId;
    if (max !== null && max !== undefined && !alreadyThere) {
      if (n >= max) {
        failed.push({ id: row.id, ...failure('serviceLimitReached') });
        continue;
      }
      counts.set(key, n + 1);
    }
    ok.push(row);
  }
  // In the order of the rows, as each failure was found in the one pass before.
  const order = new Map(requested.map((p, i) => [p.row.id, i]));
  return { ok, failed: failed.sort((a, b) => order.get(a.id)! - order.get(b.id)!) };
}

/**
 * A row moving onto a plan whose pools are ours gets a prefix from each, for the kinds it holds
 * none of; a pool that cannot serve it is the row's failure, the row left as it was.
 */
async function givePlanPrefixes(tx: Tx, row: SubscriberRow, pools: PoolsByKind): Promise<Failed | undefined> {
  try {
    await assignFromPools(tx, row.id, {
      framed: row.ipv6Prefix === null ? pools.framed : undefined,
      delegated: row.delegatedIpv6Prefix === null ? pools.delegated : undefined,
    });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { id: row.id, status: err.code, message: err.message };
  }
}

/**
 * Moves rows onto `plan`. With charge_difference each move is priced by the billing unit's quote
 * (taken before the move, from the current plan) and settled after it: an invoice for the net due
 * or a wallet credit for a net refund. A moved row without a prefix of a kind the plan's pool of
 * ours gives is handed one, unless `prefixesByCaller` (a PUT assigns after the body's own prefixes).
 */
export const setService: Operation<{ plan: PlanRow; charge_difference?: boolean; prefixesByCaller?: boolean }> = async (
  env,
  rows,
  payload,
) => {
  const { plan } = payload;
  const { ok, failed } = await checkServiceLimits(env.tx, rows, plan.id);
  const quotes = new Map<number, ServiceChangeQuote>();
  const moving: SubscriberRow[] = [];
  // The currencies as held now: `plan` may have been read before the transaction.
  const held = await plansHeld(env.tx, [plan.id, ...ok.map((r) => r.serviceId)]);
  const to = held.get(plan.id)?.currency ?? plan.currency;
  const pools = payload.prefixesByCaller ? {} : await ourPoolsOf(env.tx, plan.id);
  for (const r of ok.filter((row) => row.serviceId !== plan.id)) {
    // A stored price is minor units of its plan's currency: on a plan in another it would be read
    // in that one (15.00 USD as 1,500 yen).
    const from = held.get(r.serviceId)?.currency;
    if (r.price !== null && from !== undefined && from !== to) {
      failed.push({ id: r.id, ...failure('ownPriceCurrency', from, to) });
      continue;
    }
    let quote: ServiceChangeQuote | undefined;
    if (payload.charge_difference) {
      try {
        quote = await quoteServiceChange(env.tx, {
          subscriberId: r.id,
          newServiceId: plan.id,
          today: env.today,
          serviceField: 'service_id',
          withinPeriod: env.auth.subscriberId !== undefined,
        });
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        failed.push({ id: r.id, status: err.code, message: err.message });
        continue;
      }
      // A refund goes to the wallet, which holds the system currency: minor units of another
      // would be spent as its own (250,000 VND as 2,500.00 USD).
      if (quote.netAmountDue < 0 && quote.currency !== env.settings.currency) {
        failed.push({ id: r.id, ...failure('serviceChangeRefundCurrency', quote.currency, env.settings.currency) });
        continue;
      }
    }
    const unserved = await givePlanPrefixes(env.tx, r, pools);
    if (unserved) {
      failed.push(unserved);
      continue;
    }
    if (quote) quotes.set(r.id, quote);
    moving.push(r);
  }
  if (moving.length === 0) return done(failed);
  const ids = idsOf(moving);
  // A new plan means a new pool: the stored address goes so the next login draws from it.
  await env.tx
    .update(subscribers)
    .set({ serviceId: plan.id, staticIp: null, updatedAt: sql`now()` })
    .where(inArray(subscribers.id, ids));
  await syncAccessRows(env.tx, ids, env.today);
  await queueDisconnect(env.tx, moving, 'service_change');
  const extra = new Map<number, Record<string, unknown>>();
  for (const [id, quote] of quotes) {
    const settled = await settleServiceChange(env.tx, quote, { createdBy: env.auth.managerId });
    extra.set(id, {
      net_amount_due: fromMinor(quote.netAmountDue, quote.currency),
      invoice_id: settled.invoice?.invoice.id ?? null,
      wallet_transaction_id: settled.walletCredit?.transactionId ?? null,
      wallet_credited: fromMinor(settled.walletCredit?.refund ?? 0, quote.currency),
    });
  }
  return done(failed, extra);
};

/**
 * A plan card's period (the cards unit, once the card's transaction credited the plan's price to
 * the wallet): moved onto the card's plan with the difference of the days left charged, as a plan
 * change with `charge_difference` (an invoice for an upgrade's, a wallet credit for a downgrade's),
 * and renewed on it as `renew` does, in one transaction. The period is added to the days left, so
 * without the difference those days passed to the card's plan at the old plan's price. A renewal
 * refused (renewed today, the reseller short) leaves the plan as it was: made one after the other,
 * the move stayed and the card's money waited in the wallet, a free upgrade.
 */
export const renewOnCardPlan: Operation<{ plan: PlanRow }> = async (env, rows, { plan }) => {
  const moving = rows.filter((r) => r.serviceId !== plan.id);
  if (moving.length) {
    const moved = await setService(env, moving, { plan, charge_difference: true });
    if (moved.failed.length) return moved;
  }
  // The move's difference may have been paid from the wallet or credited to it: the renewal's
  // wallet payment draws on what it holds now (payNewInvoicesFromWallets trusts the balance given).
  const { rows: wallets } = await env.tx.execute<{ id: number; wallet_balance: number }>(
    sql`select id, wallet_balance from subscribers where id = any(${intArray(idsOf(rows))})`,
  );
  const held = new Map(wallets.map((w) => [Number(w.id), Number(w.wallet_balance)]));
  const onPlan = rows.map((r) => ({ ...r, serviceId: plan.id, walletBalance: held.get(r.id) ?? r.walletBalance }));
  return renewOnPlans(env, onPlan, new Map([[plan.id, plan]]));
};

/** Serialises static address assignment: two batches drawing from one pool never pick the same address. */
async function lockAddressAssignment(tx: Tx): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('subscribers.static_ip'))`);
}

/** Addresses held by a live subscriber other than `except`, or in another username's reply rows. */
async function takenAddresses(tx: Tx, candidates: string[], except: SubscriberRow[]): Promise<Set<string>> {
  const res = await tx.execute<{ ip: string }>(sql`
    select host(s.static_ip) as ip from subscribers s
     where s.deleted_at is null and s.static_ip = any(${sql.param(candidates)}::inet[]) and s.id <> all(${intArray(idsOf(except))})
    union
    select r.value from radreply r
     where r.attribute = 'Framed-IP-Address' and r.value = any(${sql.param(candidates)}::text[])
       and r.username <> all(${sql.param(except.map((e) => e.username))}::text[])`);
  return new Set(res.rows.map((r) => r.ip));
}

export const setStaticIp: Operation<{ ip?: string; pool_name?: string }> = async (env, rows, payload) => {
  await lockAddressAssignment(env.tx);
  const failed: Failed[] = [];
  const assigned: { row: SubscriberRow; ip: string }[] = [];
  if (payload.ip !== undefined) {
    const taken = await takenAddresses(env.tx, [payload.ip], rows);
    const [first, ...rest] = rows;
    if (taken.has(payload.ip)) failed.push({ id: first.id, ...failure('staticIpUsed') });
    else assigned.push({ row: first, ip: payload.ip });
    // One address, one subscriber: the others of the batch cannot share it.
    for (const r of rest) failed.push({ id: r.id, ...failure('staticIpUsed') });
  } else {
    const res = await env.tx.execute<{ ip: string }>(sql`
      with pool as (select range_start, range_end from ip_pools where name = ${payload.pool_name!}),
      candidates as (
        select (p.range_start + g)::inet as a from pool p, generate_series(0::bigint, p.range_end - p.range_start) g
      )
      select host(c.a) as ip from candidates c
       where not exists (select 1 from subscribers s where s.static_ip = c.a and s.deleted_at is null)
         and not exists (select 1 from radreply r where r.attribute = 'Framed-IP-Address' and r.value = host(c.a))
       order by c.a
       limit ${rows.length}`);
    rows.forEach((row, i) => {
      const ip = res.rows[i]?.ip;
      if (ip) assigned.push({ row, ip });
      else failed.push({ id: row.id, ...failure('poolExhausted') });
    });
  }
  if (assigned.length) {
    await env.tx.execute(sql`
      update subscribers s set static_ip = v.ip, updated_at = now()
        from unnest(${intArray(assigned.map((a) => a.row.id))}, ${sql.param(assigned.map((a) => a.ip))}::inet[]) as v(id, ip)
       where s.id = v.id`);
    const ids = assigned.map((a) => a.row.id);
    await syncAccessRows(env.tx, ids, env.today);
    await queueDisconnect(
      env.tx,
      assigned.map((a) => a.row),
      'static_ip',
    );
  }
  return done(failed);
};

/**
 * Sets each row's `ipv6_prefix` or `delegated_ipv6_prefix` (the twin of setStaticIp): one prefix
 * (normalised by prepare) to the first row, the others refused as holding it would overlap; or the
 * lowest free prefix of a pool the billing keeps to each row. A prefix replaced goes back to its
 * pool (assignFromPool); a row its pool cannot serve keeps the prefix it had.
 */
export const setStaticIpv6: Operation<{ field: Ipv6Field; prefix?: string; pool_name?: string }> = async (
  env,
  rows,
  payload,
) => {
  await lockAddressAssignment(env.tx);
  const { field } = payload;
  const key = field === 'ipv6_prefix' ? 'ipv6Prefix' : 'delegatedIpv6Prefix';
  const column = sql.identifier(field);
  const failed: Failed[] = [];
  const changed: SubscriberRow[] = [];
  if (payload.prefix !== undefined) {
    const prefix = payload.prefix;
    const [first, ...rest] = rows;
    const { rows: held } = await env.tx.execute<{ held: string }>(sql`
      select ${column}::text as held from subscribers
       where deleted_at is null and ${column} && ${prefix}::cidr and id <> ${first.id} limit 1`);
    if (held.length) failed.push({ id: first.id, ...failure('ipv6PrefixUsed', field, held[0].held) });
    else if (first[key] !== prefix) {
      await releasePrefix(env.tx, first.id, first[key]);
      await env.tx.execute(
        sql`update subscribers set ${column} = ${prefix}::cidr, updated_at = now() where id = ${first.id}`,
      );
      changed.push(first);
    }
    for (const r of rest) failed.push({ id: r.id, ...failure('ipv6PrefixUsed', field, prefix) });
  } else {
    const kind = field === 'ipv6_prefix' ? 'framed' : 'delegated';
    for (const row of rows) {
      let drawn: string;
      try {
        drawn = await assignFromPool(env.tx, row.id, payload.pool_name!, kind);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        failed.push({ id: row.id, status: err.code, message: err.message });
        continue;
      }
      // Its own prefix of the pool drawn again: nothing changed, the session stays.
      if (drawn === row[key]) continue;
      await env.tx.execute(sql`update subscribers set updated_at = now() where id = ${row.id}`);
      changed.push(row);
    }
  }
  if (changed.length) {
    await syncAccessRows(env.tx, idsOf(changed), env.today);
    await queueDisconnect(env.tx, changed, 'ipv6_prefix');
  }
  return done(failed);
};

/**
 * Renames each row to `newName(row)` (null: not renamed, failing with `skip`) in every record that
 * carries the username, charging the rename fee per subscriber when one is configured.
 */
export function rename(newName: (row: SubscriberRow) => string | null, skip: Failure): Operation<unknown> {
  return async (env, rows) => {
    const failed: Failed[] = [];
    const wanted: { row: SubscriberRow; to: string }[] = [];
    const claimed = new Set<string>();
    for (const row of rows) {
      const to = newName(row);
      if (to === null) failed.push({ id: row.id, ...skip });
      else if (!isValidUsername(to)) failed.push({ id: row.id, ...failure('newUsernameNotValid') });
      else if (to === row.username) continue;
      else if (claimed.has(to)) failed.push({ id: row.id, ...failure('usernameTaken') });
      else {
        claimed.add(to);
        wanted.push({ row, to });
      }
    }
    if (wanted.length === 0) return done(failed);
    const existing = await env.tx
      .select({ username: subscribers.username })
      .from(subscribers)
      .where(
        and(
          inArray(
            subscribers.username,
            wanted.map((w) => w.to),
          ),
          isNull(subscribers.deletedAt),
        ),
      );
    const taken = new Set(existing.map((e) => e.username));
    let free = wanted.filter((w) => {
      if (!taken.has(w.to)) return true;
      failed.push({ id: w.row.id, ...failure('usernameTaken') });
      return false;
    });
    const fee = feeMinor(env.settings.rename_fee, env.settings.currency);
    if (fee > 0 && free.length) {
      const res = await chargeResellers(
        env,
        free.map((w) => ({ row: w.row, amount: fee, currency: env.settings.currency })),
        'rename_fee',
      );
      const paid = new Set(idsOf(res.charged));
      free = free.filter((w) => paid.has(w.row.id));
      failed.push(...res.failed);
    }
    if (free.length === 0) return done(failed);
    // Sessions already under the new name are an earlier holder's: from now on the name's are its.
    await env.tx.execute(sql`
      update subscribers s set username = v.new_name, updated_at = now(),
             username_since = coalesce(${nameTakenSince(sql`v.new_name`)}, s.username_since)
        from unnest(${intArray(free.map((w) => w.row.id))}, ${sql.param(free.map((w) => w.to))}::text[]) as v(id, new_name)
       where s.id = v.id`);
    // The fee rows were written under the old name; renameAccessRows moves them with the rest.
    await renameAccessRows(
      env.tx,
      free.map((w) => ({ id: w.row.id, from: w.row.username, to: w.to })),
    );
    await queueDisconnect(
      env.tx,
      free.map((w) => w.row),
      'rename',
    );
    return done(failed);
  };
}

/** Bulk set_auto_renew: the lifecycle sweep renews these from their wallet at expiry; no RADIUS row changes. */
export const setAutoRenew: Operation<{ auto_renew: boolean }, Pick<SubscriberRow, 'id' | 'autoRenew'>> = async (
  env,
  rows,
  payload,
) => {
  const changed = rows.filter((r) => r.autoRenew !== payload.auto_renew);
  if (changed.length === 0) return done();
  await env.tx
    .update(subscribers)
    .set({ autoRenew: payload.auto_renew, updatedAt: sql`now()` })
    .where(inArray(subscribers.id, idsOf(changed)));
  return done();
};
