/**
 * Writes an `ImportData` into our tables (docs/import.md), or plans it without writing (dry run):
 * both build the same report. Idempotent: a subscriber imported from a source carries an audit_log
 * row (`action` import, `details.source`), an imported history row's invoice carries
 * `imported from <source> #<id>` in its notes and its payment `import:<source>:<id>` as reference,
 * an imported balance's ledger row `import:<source>:wallet:<username>`; what is already there is
 * counted as unchanged and not written again. Plans and resellers are matched by name. The
 * subscribers go in batches, one transaction each (subscriber, FreeRADIUS rows, wallet), then the
 * history in batches read from the source one at a time (a first pass plans the whole set without
 * keeping it), so a run that stops half-way is resumed by running it again.
 *
 * Passwords never leave this module except into `password_enc` (encrypted) and radcheck: errors
 * of a batch are rethrown without the statement's parameters.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { sql } from 'drizzle-orm';
import { passwordCheckRow, syncAccessRows, type PasswordMode } from '../access/radius-rows';
import { encrypt } from '../auth/secrets';
import { formatInvoiceNumber } from '../billing/invoices';
import { publicToken, publicTokenHash } from '../public-links';
import type { Db, Tx } from '../db/client';
import { isLockTimeout } from '../db/errors';
import { resellers, services } from '../db/schema';
import { wrappedWhole } from '../domain/access';
import { addDays, isIPv4, normaliseMac, todayIso } from '../domain/subscriber';
import { currencyExponent, fromMinor, parseDecimal } from '../money';
import { writePlanGroupReply } from '../radius';
import { rateTextExpands } from '../vendors/rate';
import { loadSettings } from '../settings';
import { normaliseOptionalPhone } from '../phone';
import { retentionCutoff } from '../access/retention-cutoff';
import { deferHistoryIndexes } from './bulk-load';
import { prof } from './profile';
import { importSessions, type SessionReader, type SessionTotals } from './sessions';
import {
  CLEARTEXT_ATTRIBUTES,
  passwordAttribute,
  type Entity,
  type HistoryReader,
  type ImportData,
  type ImportHistory,
  type ImportSubscriber,
} from './model';
import {
  emptyCounts,
  issuesCsv,
  SAMPLE,
  summariseIssues,
  type ImportReport,
  type Issue,
  type Mismatch,
} from './report';

export interface WriteOptions {
  dryRun: boolean;
  /** Subscribers per transaction (default 1000). */
  batchSize?: number;
  /** History rows per transaction and per reading of the source (default 10 x batchSize). */
  historyBatchSize?: number;
  /** Reseller of subscribers the source names none for (default `Imported from <source>`). */
  defaultReseller?: string;
  /** The UTC date expiry is compared with (default today). */
  today?: string;
  /** Progress lines (never a password). */
  progress?: (message: string) => void;
  /** Progress as counts: subscribers written, then history rows gone through, of both together. */
  onProgress?: (done: number, total: number) => void | Promise<void>;
  /** Where to write every issue (CSV) when there is any; the report keeps counts and examples. */
  issuesFile?: string;
  /** The manager who started the import (POST /api/imports): the actor of its audit rows; none from the command line. */
  managerId?: number;
  /**
   * History rows from which the history tables' secondary indexes are left out during the load and
   * built after it (bulk-load.ts; default BULK_FROM, 100,000).
   */
  bulkHistoryFrom?: number;
}

/** Decimal string -> minor units of `currency`; a reason when it is no amount or has sub-unit digits. */
export function toMinorExact(value: string, currency: string): number | string {
  let d;
  try {
    d = parseDecimal(value.replace(/,/g, ''));
  } catch {
    return `not an amount: ${value}`;
  }
  let { digits, scale } = d;
  const exp = currencyExponent(currency);
  while (scale > exp && digits % 10n === 0n) {
    digits /= 10n;
    scale--;
  }
  if (scale > exp) return `more decimals than ${currency} has: ${value}`;
  const minor = digits * 10n ** BigInt(exp - scale);
  if (minor > BigInt(Number.MAX_SAFE_INTEGER) || minor < -BigInt(Number.MAX_SAFE_INTEGER)) return `too large: ${value}`;
  return Number(minor);
}

const MAX_USERNAME = 128;
const hasControl = (s: string) => [...s].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127);
/** Ours but `wallet`: a wallet payment implies a wallet entry, which the source's history does not hold. */
const PAYMENT_METHODS = ['cash', 'card', 'bank', 'prepaid_card', 'other'];

/** A source's payment method to ours: kept when it is one of ours, else by keyword, else `other`. */
export function paymentMethod(method: string | null): string {
  const m = (method ?? '').trim().toLowerCase();
  if (PAYMENT_METHODS.includes(m)) return m;
  if (/card|visa|master|stripe|paypal/.test(m)) return 'card';
  if (/bank|transfer|wire|iban/.test(m)) return 'bank';
  if (/voucher|prepaid|coupon/.test(m)) return 'prepaid_card';
  if (/cash|admin|recharge|manual/.test(m)) return 'cash';
  return 'other';
}

interface PlannedSubscriber {
  src: ImportSubscriber;
  serviceId: number | 'new';
  planName: string;
  resellerName: string;
  expiry: string;
  staticIp: string | null;
  mac: string | null;
  balance: number;
  /** Set once written, or when already imported. */
  id?: number;
  resellerId?: number;
  /** Written by this run (so on the plan `serviceId`). */
  written?: boolean;
}

interface PlannedHistory {
  src: ImportHistory;
  amount: number;
  paid: number;
}

/** A history row to write and its subscriber. */
interface HistoryRow {
  p: PlannedSubscriber;
  h: PlannedHistory;
}

interface Existing {
  id: number;
  resellerId: number;
  imported: boolean;
  walletCredit: number | null;
}

export async function writeImport(db: Db, data: ImportData, options: WriteOptions): Promise<ImportReport> {
  const started = Date.now();
  const source = data.source;
  const progress = options.progress ?? (() => undefined);
  const today = options.today ?? todayIso();
  const settings = await loadSettings(db, [
    'currency',
    'radius_password_mode',
    'accounting_retention_months',
    'default_country',
  ]);
  const currency = settings.currency;
  const passwordMode = settings.radius_password_mode as PasswordMode;
  const entities: Record<Entity, ReturnType<typeof emptyCounts>> = {
    plans: emptyCounts(),
    resellers: emptyCounts(),
    service_limits: emptyCounts(),
    subscribers: emptyCounts(),
    history: emptyCounts(),
    sessions: emptyCounts(),
    routers: emptyCounts(),
  };
  const issues: Issue[] = [];
  const mismatches: Mismatch[] = [];
  const issue = (entity: Entity, key: string, outcome: Issue['outcome'], reason: string) => {
    issues.push({ entity, key, outcome, reason });
    if (outcome === 'skipped') entities[entity].skipped++;
    if (outcome === 'conflicting') entities[entity].conflicting++;
  };
  entities.plans.read = data.plans.length;
  entities.resellers.read = data.resellers.length;
  entities.subscribers.read = data.subscribers.length;
  for (const [entity, n] of Object.entries(data.read)) entities[entity as Entity].read = n ?? 0;
  for (const i of data.issues) issue(i.entity, i.key, 'skipped', i.reason);
  const money = (m: number) => String(fromMinor(m, currency));
  const balances = { source: 0, notImported: 0, after: 0, difference: 0 };
  const payments = { source: 0, notImported: 0, after: 0, difference: 0 };

  // ------------------------------------------------------------------ plans, by name
  const livePlans = new Map(
    (
      await db
        .select({ id: services.id, name: services.name, price: services.price, currency: services.currency })
        .from(services)
        .where(sql`${services.deletedAt} is null`)
    ).map((p) => [p.name, p]),
  );
  /** Plan name -> our id, 'new', or the reason its subscribers cannot come. */
  const planIds = new Map<string, number | 'new' | { reason: string }>();
  const newPlans: {
    name: string;
    price: number;
    durationDays: number;
    rateLimit: string | null;
    macBinding: boolean;
  }[] = [];
  const seenPlans = new Map<string, string>();
  for (const p of data.plans) {
    const name = p.name.trim();
    // No price: the plan must already be ours (matched by its name alone).
    if (p.price.trim() === '' && !livePlans.has(name)) {
      issue('plans', name, 'skipped', 'unknown plan: no price in the source and no plan of ours has that name');
      planIds.set(name, { reason: `unknown plan: ${name}` });
      continue;
    }
    const price = p.price.trim() === '' ? livePlans.get(name)!.price : toMinorExact(p.price, currency);
    const signature = `${p.price}/${p.durationDays}`;
    if (seenPlans.has(name)) {
      if (seenPlans.get(name) !== signature) {
        issue('plans', name, 'conflicting', `listed twice with different prices or periods: ${signature}`);
        planIds.set(name, { reason: `plan conflicts: ${name}` });
      }
      continue;
    }
    seenPlans.set(name, signature);
    if (!name) {
      issue('plans', p.name, 'skipped', 'no name');
      continue;
    }
    if (typeof price === 'string') {
      issue('plans', name, 'skipped', `price ${price}`);
      planIds.set(name, { reason: `plan skipped: ${name}` });
      continue;
    }
    if (!Number.isInteger(p.durationDays) || p.durationDays < 1) {
      issue('plans', name, 'skipped', `period is not a whole number of days: ${p.durationDays}`);
      planIds.set(name, { reason: `plan skipped: ${name}` });
      continue;
    }
    const live = livePlans.get(name);
    if (live) {
      if (live.price === price && live.currency === currency) {
        entities.plans.unchanged++;
        planIds.set(name, live.id);
      } else {
        issue('plans', name, 'conflicting', `a plan of that name exists at another price: ${money(live.price)}`);
        planIds.set(name, { reason: `plan conflicts: ${name}` });
      }
      continue;
    }
    // Only a plan the import writes: one of ours matched by name keeps its own rate.
    if (p.rateLimit && rateTextExpands(p.rateLimit)) {
      issue('plans', name, 'skipped', `rate limit FreeRADIUS would expand (a backtick, %{ or quotes): ${p.rateLimit}`);
      planIds.set(name, { reason: `plan skipped: ${name}` });
      continue;
    }
    entities.plans.imported++;
    planIds.set(name, 'new');
    newPlans.push({ name, price, durationDays: p.durationDays, rateLimit: p.rateLimit, macBinding: p.macBinding });
  }
  const planDays = new Map(data.plans.map((p) => [p.name.trim(), p.durationDays]));

  // ------------------------------------------------------------------ subscribers
  const defaultReseller = options.defaultReseller ?? `Imported from ${source}`;
  const counts = new Map<string, number>();
  for (const s of data.subscribers) counts.set(s.username, (counts.get(s.username) ?? 0) + 1);
  const existing = await prof('plan:existing', () => existingSubscribers(db, source, [...counts.keys()]));
  const takenIps = new Set(
    (
      await db.execute<{ ip: string }>(
        sql`select host(static_ip) as ip from subscribers where deleted_at is null and static_ip is not null`,
      )
    ).rows.map((r) => r.ip),
  );
  const planned: PlannedSubscriber[] = [];
  const accepted = new Map<string, PlannedSubscriber>();
  for (const s of data.subscribers) {
    const balance = s.balance === null ? 0 : toMinorExact(s.balance, currency);
    if (typeof balance === 'number') balances.source += balance;
    const skip = (reason: string, outcome: 'skipped' | 'conflicting' = 'skipped') => {
      issue('subscribers', s.username, outcome, reason);
      if (typeof balance === 'number') balances.notImported += balance;
    };
    if (!s.username || s.username.length > MAX_USERNAME || hasControl(s.username)) {
      skip('username empty, too long or with control characters');
      continue;
    }
    if ((counts.get(s.username) ?? 0) > 1) {
      skip('duplicate username in the source');
      continue;
    }
    const known = existing.get(s.username);
    if (known && !known.imported) {
      skip('a subscriber with that username exists (not imported from this source)', 'conflicting');
      continue;
    }
    if (!s.password || !s.password.value || !passwordAttribute(s.password.attribute)) {
      skip(s.password ? `password attribute not accepted: ${s.password.attribute}` : 'no password');
      continue;
    }
    if (wrappedWhole(s.password.value)) {
      skip('password wrapped whole in quotes or backticks (FreeRADIUS would expand it)');
      continue;
    }
    if (typeof balance === 'string') {
      skip(`balance ${balance}`);
      continue;
    }
    if (balance < 0) {
      skip(`negative balance (debt) is not a wallet credit: ${s.balance}`);
      continue;
    }
    if (!s.plan) {
      skip('no plan');
      continue;
    }
    const planId = planIds.get(s.plan.trim());
    if (planId === undefined) {
      skip(`unknown plan: ${s.plan}`);
      continue;
    }
    if (typeof planId === 'object') {
      skip(planId.reason);
      continue;
    }
    if (known) {
      entities.subscribers.unchanged++;
      const p: PlannedSubscriber = {
        src: s,
        serviceId: planId,
        planName: s.plan.trim(),
        resellerName: '',
        expiry: '',
        staticIp: null,
        mac: null,
        balance,
        id: known.id,
        resellerId: known.resellerId,
      };
      accepted.set(s.username, p);
      const credited = known.walletCredit ?? 0;
      if (credited !== balance) {
        mismatches.push({
          entity: 'subscribers',
          key: s.username,
          what: 'balance changed in the source since it was imported',
          source: money(balance),
          ours: money(credited),
        });
      }
      continue;
    }
    let mac: string | null = null;
    if (s.mac) {
      mac = normaliseMac(s.mac);
      if (!mac) issue('subscribers', s.username, 'warning', `MAC address not imported, not a MAC: ${s.mac}`);
    }
    let staticIp: string | null = null;
    if (s.staticIp) {
      if (!isIPv4(s.staticIp)) {
        issue('subscribers', s.username, 'warning', `static address not imported, not an IPv4 address: ${s.staticIp}`);
      } else if (takenIps.has(s.staticIp)) {
        issue(
          'subscribers',
          s.username,
          'warning',
          `static address not imported, held by another subscriber: ${s.staticIp}`,
        );
      } else {
        staticIp = s.staticIp;
        takenIps.add(staticIp);
      }
    }
    let expiry = s.expiry;
    if (!expiry) {
      expiry = addDays(today, planDays.get(s.plan.trim()) ?? 30);
      issue('subscribers', s.username, 'warning', `no expiry in the source: one period from today: ${expiry}`);
    }
    const p: PlannedSubscriber = {
      src: s,
      serviceId: planId,
      planName: s.plan.trim(),
      resellerName: s.reseller?.trim() || defaultReseller,
      expiry,
      staticIp,
      mac,
      balance,
    };
    entities.subscribers.imported++;
    planned.push(p);
    accepted.set(s.username, p);
  }

  // ------------------------------------------------------------------ resellers, by name
  const liveResellers = new Map<string, number>();
  for (const r of await db.select({ id: resellers.id, name: resellers.name }).from(resellers).orderBy(resellers.id)) {
    if (!liveResellers.has(r.name)) liveResellers.set(r.name, r.id);
  }
  const resellerNames = new Set<string>();
  for (const r of data.resellers) {
    const name = r.name.trim();
    if (!name) {
      issue('resellers', r.name, 'skipped', 'no name');
      continue;
    }
    if (resellerNames.has(name)) continue;
    resellerNames.add(name);
  }
  for (const p of planned) resellerNames.add(p.resellerName);
  const newResellers: string[] = [];
  for (const name of resellerNames) {
    if (liveResellers.has(name)) entities.resellers.unchanged++;
    else {
      entities.resellers.imported++;
      newResellers.push(name);
    }
  }

  // ------------------------------------------------------------------ service limits
  // A reseller sells only the plans it holds a limit for: without one, its imported subscribers
  // could be renewed but no new one created (403 `reseller has no service limit for this plan`).
  // Each reseller gets the plans its accepted subscribers are on, uncapped; a limit it has is kept.
  const limitPairs = new Map<string, { reseller: string | number; plan: string }>();
  for (const p of accepted.values()) {
    const reseller = p.id !== undefined ? p.resellerId! : p.resellerName;
    limitPairs.set(`${reseller}\u0000${p.planName}`, { reseller, plan: p.planName });
  }
  const resellerIdOf = (r: string | number) => (typeof r === 'number' ? r : liveResellers.get(r));
  const planIdOf = (name: string) => {
    const id = planIds.get(name);
    return typeof id === 'number' ? id : undefined;
  };
  const heldLimits = await existingLimits(
    db,
    [...limitPairs.values()].map((x) => resellerIdOf(x.reseller)),
  );
  const newLimits: { reseller: string | number; plan: string }[] = [];
  entities.service_limits.read = limitPairs.size;
  for (const pair of limitPairs.values()) {
    const rid = resellerIdOf(pair.reseller);
    const pid = planIdOf(pair.plan);
    if (rid !== undefined && pid !== undefined && heldLimits.has(`${rid}:${pid}`)) entities.service_limits.unchanged++;
    else {
      entities.service_limits.imported++;
      newLimits.push(pair);
    }
  }

  // ------------------------------------------------------------------ history, first pass
  // The whole set is read once and not kept: its count, its paid total, the ids it holds twice and
  // what the ledger already holds of it. The second pass (historyBatches) plans and writes it one
  // batch at a time, so the memory does not grow with the history.
  const historyBatchSize = options.historyBatchSize ?? 10 * (options.batchSize ?? 1000);
  const scan = await prof('plan:history', () => scanHistory(db, data.history, source, currency, historyBatchSize));
  entities.history.read = scan.read;
  payments.source = scan.paid;
  progress(`read ${scan.read} history rows`);
  const prefix = `imported from ${source} #`;

  /**
   * The history's batches as they are to be written: each row checked as the plan checks it, those
   * this source imported earlier left out (unchanged). Stops at the first pass's count: rows the
   * source gained since are the next run's.
   */
  async function* historyBatches(): AsyncGenerator<{ rows: HistoryRow[]; read: number }> {
    let pos = 0;
    for await (const batch of data.history.batches(historyBatchSize)) {
      const start = pos;
      const rows: HistoryRow[] = [];
      for (const h of batch) {
        if (pos >= scan.read) break;
        const verdict = historyVerdict(h, pos++, scan.firstOf, accepted, counts, currency);
        if ('row' in verdict) rows.push(verdict.row);
        else {
          issue('history', h.key, 'skipped', verdict.skip);
          if (typeof verdict.paid === 'number') payments.notImported += verdict.paid;
        }
      }
      // A subscriber imported earlier (an id, not written by this run) may hold some of these already.
      const done = await prof('plan:doneKeys', () =>
        importedKeys(
          db,
          prefix,
          rows.filter((r) => r.p.id !== undefined && !r.p.written),
        ),
      );
      const fresh = done.size ? rows.filter((r) => !done.has(r.h.src.key)) : rows;
      entities.history.unchanged += rows.length - fresh.length;
      entities.history.imported += fresh.length;
      yield { rows: fresh, read: pos - start };
      if (pos >= scan.read) return;
    }
  }

  const usernames = [...counts.keys()];
  // What the ledger holds from this source before the writes: the wallet credits read here, the
  // payments by the first pass. A dry run adds what it would write; a real run the sums of the rows
  // its inserts wrote, as PostgreSQL returned them, batch by committed batch.
  const after = {
    balances: await prof('ledger:before', () => walletCredits(db, source, usernames)),
    payments: scan.paymentsBefore,
  };
  // The sessions report their issues while the history's second pass reports its own: theirs are
  // listed after, as when the history was planned first.
  const sessionIssues: Issue[] = [];

  // ------------------------------------------------------------------ writes
  const runSessions = (reader: SessionReader) => {
    const skippedFor = new Set<string>();
    return prof('sessions', () =>
      importSessions(db, reader, {
        dryRun: options.dryRun,
        accepted: new Set(accepted.keys()),
        listed: new Set([...counts.keys(), ...data.issues.filter((i) => i.entity === 'subscribers').map((i) => i.key)]),
        // Once per username and reason: a skipped subscriber's 10,000 sessions are one issue.
        skip: (username, reason) => {
          const k = `${reason}\u0000${username}`;
          if (skippedFor.has(k)) return;
          skippedFor.add(k);
          sessionIssues.push({ entity: 'sessions', key: username, outcome: 'skipped', reason });
        },
        today,
        retainedFrom: epochOfDay(retentionCutoff(today, settings.accounting_retention_months)),
        progress,
      }),
    );
  };
  let totals: SessionTotals | null = null;
  if (options.dryRun) {
    after.balances += planned.reduce((sum, p) => sum + p.balance, 0);
    for await (const { rows } of historyBatches()) for (const r of rows) after.payments += r.h.paid;
    if (data.sessions) totals = await runSessions(data.sessions);
  } else {
    const planIdByName = new Map<string, number>();
    const resellerIdByName = new Map(liveResellers);
    await db.transaction(async (tx) => {
      for (const p of newPlans) {
        const [row] = await tx
          .insert(services)
          .values({
            name: p.name,
            price: p.price,
            currency,
            durationDays: p.durationDays,
            rateLimit: p.rateLimit,
            macBinding: p.macBinding,
          })
          .returning();
        await writePlanGroupReply(tx, row.id, row);
        planIdByName.set(p.name, row.id);
      }
      for (const name of newResellers) {
        const [row] = await tx.insert(resellers).values({ name, path: '', currency }).returning({ id: resellers.id });
        await tx.execute(sql`update resellers set path = ${`/${row.id}/`} where id = ${row.id}`);
        resellerIdByName.set(name, row.id);
      }
      await writeServiceLimits(
        tx,
        newLimits.map((l) => ({
          resellerId: typeof l.reseller === 'number' ? l.reseller : resellerIdByName.get(l.reseller)!,
          serviceId: planIdOf(l.plan) ?? planIdByName.get(l.plan)!,
        })),
        { source, managerId: options.managerId ?? null },
      );
    });
    progress(
      `plans and resellers written: ${newPlans.length} plans, ${newResellers.length} resellers, ${newLimits.length} service limits`,
    );
    for (const p of planned) {
      if (p.serviceId === 'new') p.serviceId = planIdByName.get(p.planName)!;
      p.resellerId = resellerIdByName.get(p.resellerName)!;
    }
    const ctx: BatchContext = {
      source,
      currency,
      passwordMode,
      country: settings.default_country,
      today,
      managerId: options.managerId ?? null,
      numberTrigrams: true,
    };
    const batchSize = options.batchSize ?? 1000;
    // Progress counts the subscribers written, then the history rows gone through (written or not).
    const total = planned.length + scan.read;
    let done = 0;
    const countWritten = async (n: number, what: string) => {
      done += n;
      progress(`${what}: ${done} of ${total} subscribers and history rows done`);
      await options.onProgress?.(done, total);
    };
    // First the subscribers (with their FreeRADIUS rows and wallet credit), then their history. A
    // run stopped in between is resumed as any other: a subscriber imported earlier gets the
    // history not yet there.
    await inBatches(db, planned, batchSize, async (batch) => {
      const written = await prof('batch:subscribers:total', () =>
        inBatchTransaction(db, `subscribers ${batch[0].src.username}..`, (tx) => writeSubscribers(tx, ctx, batch)),
      );
      after.balances += written;
      await countWritten(batch.length, 'subscribers');
    });
    // The sessions need only the subscribers (accepted and now all committed): they are written
    // while the history goes in, on their own connections, so both cores work. A failure of either
    // stops the other (the sessions at their next chunk, the history at its next batch) and the
    // run reports the first one once both have ended.
    let failed: unknown;
    let sessionsFailed = false;
    const sessionsRun = data.sessions ? runSessions(stoppedBy(data.sessions, () => failed)) : Promise.resolve(null);
    sessionsRun.catch(() => {
      sessionsFailed = true;
    });
    try {
      const deferred = await prof('history:index-drop', () =>
        deferHistoryIndexes(db, scan.read, options.bulkHistoryFrom),
      );
      if (deferred) progress(`history: ${deferred.indexes.length} indexes left out during the load, built after it`);
      ctx.numberTrigrams = !deferred?.indexes.includes(NUMBER_TRIGRAMS);
      try {
        for await (const { rows, read } of historyBatches()) {
          if (sessionsFailed) break;
          if (rows.length) {
            after.payments += await prof('batch:history:total', () =>
              inBatchTransaction(db, `history rows #${rows[0].h.src.key}..`, (tx) => writeHistory(tx, ctx, rows)),
            );
          }
          await countWritten(read, 'history');
        }
      } finally {
        // Built again whether the history went in whole or not: what it wrote is there either way.
        if (deferred) await prof('history:index-build', () => deferred.finish());
      }
      if ((planned.length || entities.history.imported) && !sessionsFailed) {
        await prof('analyze', () => analyzeTables(db, 'written'));
      }
    } catch (err) {
      failed = err;
      await sessionsRun.catch(() => undefined);
      throw err;
    }
    totals = await sessionsRun;
  }

  // ------------------------------------------------------------------ accounting sessions
  let sessions: ImportReport['sessions'] = null;
  if (totals) {
    entities.sessions = {
      ...emptyCounts(),
      read: totals.read,
      imported: totals.imported,
      unchanged: totals.unchanged,
      skipped: totals.skipped,
    };
    sessions = { months: totals.months, reconciled: totals.reconciled };
  }

  issues.push(...sessionIssues);
  balances.after = after.balances;
  payments.after = after.payments;
  balances.difference = balances.source - balances.notImported - balances.after;
  payments.difference = payments.source - payments.notImported - payments.after;
  return {
    source,
    dryRun: options.dryRun,
    seconds: (Date.now() - started) / 1000,
    currency,
    entities,
    reasons: summariseIssues(issues),
    issuesFile: writeIssues(options.issuesFile, issues),
    money: { balances, payments, reconciled: balances.difference === 0 && payments.difference === 0 },
    mismatches: mismatches.slice(0, SAMPLE),
    sessions,
  };
}

const epochOfDay = (day: string | null) => (day === null ? null : Date.parse(`${day}T00:00:00Z`) / 1000);

function writeIssues(file: string | undefined, issues: Issue[]): string | null {
  if (!file || !issues.length) return null;
  fs.writeFileSync(file, issuesCsv(issues), { mode: 0o600 });
  return file;
}

/** `reseller:plan` of the limits these resellers hold (unknown ids, a reseller still to be created, are left out). */
async function existingLimits(db: Db, resellerIds: (number | undefined)[]): Promise<Set<string>> {
  const ids = [...new Set(resellerIds.filter((id): id is number => id !== undefined))];
  if (!ids.length) return new Set();
  const rows = await db.execute<{ reseller_id: number; service_id: number }>(
    sql`select reseller_id, service_id from reseller_service_limits where reseller_id = any(${sql.param(ids)}::int[])`,
  );
  return new Set(rows.rows.map((r) => `${r.reseller_id}:${r.service_id}`));
}

/** The limits in one statement, uncapped, each with the audit row the service-limits route writes. */
async function writeServiceLimits(
  tx: Tx,
  limits: { resellerId: number; serviceId: number }[],
  by: { source: string; managerId: number | null },
): Promise<void> {
  if (!limits.length) return;
  await tx.execute(sql`
    with added as (
      insert into reseller_service_limits (reseller_id, service_id)
      select * from unnest(${sql.param(limits.map((l) => l.resellerId))}::int[], ${sql.param(limits.map((l) => l.serviceId))}::int[])
      on conflict do nothing
      returning reseller_id, service_id)
    insert into audit_log (manager_id, actor_type, action, entity, entity_id, reseller_id, details)
    select ${by.managerId}::int, ${by.managerId === null ? 'system' : 'manager'}, 'reseller.service_limit', 'reseller',
           reseller_id, reseller_id,
           jsonb_build_object('service_id', service_id, 'max_subscribers', null, 'source', ${by.source}::text)
      from added`);
}

type HistoryVerdict = { row: HistoryRow } | { skip: string; paid: number | string };

/**
 * The plan's checks of one history row, in their order (no id, duplicate, amount, paid, date,
 * subscriber): the row to write, or why it is skipped with what it says was paid. `at` is the row's
 * position in the source; of an id held twice only the first position is imported.
 */
function historyVerdict(
  h: ImportHistory,
  at: number,
  firstOf: Map<string, number>,
  accepted: Map<string, PlannedSubscriber>,
  counts: Map<string, number>,
  currency: string,
): HistoryVerdict {
  const amount = toMinorExact(h.amount, currency);
  const paid = toMinorExact(h.paid, currency);
  const skip = (reason: string): HistoryVerdict => ({ skip: reason, paid });
  if (!h.key) return skip('no id');
  const first = firstOf.get(h.key);
  if (first !== undefined && first !== at) return skip('duplicate id in the source');
  if (typeof amount === 'string') return skip(`amount ${amount}`);
  if (typeof paid === 'string') return skip(`paid ${paid}`);
  if (amount < 0 || paid < 0) return skip(`negative amount (refund) not imported: ${h.amount}`);
  if (paid > amount) return skip(`paid more than charged: ${h.paid} of ${h.amount}`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(h.date)) return skip(`no date: ${h.date}`);
  const p = accepted.get(h.username);
  if (!p) {
    return skip(
      counts.has(h.username) ? `its subscriber is not imported: ${h.username}` : `unknown subscriber: ${h.username}`,
    );
  }
  return { row: { p, h: { src: h, amount, paid } } };
}

/** Live subscribers holding these usernames, whether this source imported them, and the balance it credited. */
async function existingSubscribers(db: Db, source: string, usernames: string[]): Promise<Map<string, Existing>> {
  const out = new Map<string, Existing>();
  for (let i = 0; i < usernames.length; i += 10000) {
    const names = usernames.slice(i, i + 10000);
    const rows = await db.execute<{
      id: number;
      username: string;
      reseller_id: number;
      imported: boolean;
      credit: number | null;
    }>(sql`
      select s.id, s.username, s.reseller_id,
             exists (select 1 from audit_log a where a.entity = 'subscriber' and a.entity_id = s.id
                        and a.action = 'import' and a.details->>'source' = ${source}) as imported,
             (select sum(t.amount) from transactions t where t.subscriber_id = s.id and t.type = 'wallet_credit'
                 and t.reference = ${`import:${source}:wallet:`} || s.username)::bigint as credit
        from subscribers s
       where s.deleted_at is null and s.username = any(${sql.param(names)}::text[])`);
    for (const r of rows.rows) {
      out.set(r.username, {
        id: Number(r.id),
        resellerId: Number(r.reseller_id),
        imported: r.imported,
        walletCredit: r.credit === null ? null : Number(r.credit),
      });
    }
  }
  return out;
}

/** The wallet credits imports from `source` brought into our ledger for these usernames. */
async function walletCredits(db: Db, source: string, usernames: string[]): Promise<number> {
  const rows = await db.execute<{ total: string | null }>(sql`
    select sum(t.amount)::text as total from transactions t
      join unnest(${sql.param(usernames.map((u) => `import:${source}:wallet:${u}`))}::text[]) as r(ref)
        on t.reference = r.ref
     where t.type = 'wallet_credit'`);
  return Number(rows.rows[0].total ?? 0);
}

interface HistoryScan {
  read: number;
  /** The sum of the paid amounts that are amounts, in minor units. */
  paid: number;
  /** Ids the source holds more than once -> the position of the first (the one imported). */
  firstOf: Map<string, number>;
  /** What our ledger holds of payments of these ids from this source, before the writes. */
  paymentsBefore: number;
}

/**
 * The history's first pass: every row read once and let go. Its ids (with their positions) go into
 * a temporary table, where PostgreSQL finds those held twice and joins them with the ledger's
 * payments; the process keeps only the count, the paid total and the ids held twice.
 */
async function scanHistory(
  db: Db,
  reader: HistoryReader,
  source: string,
  currency: string,
  size: number,
): Promise<HistoryScan> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`create temporary table import_history_keys (key text not null, pos int not null) on commit drop`,
    );
    let read = 0;
    let paid = 0;
    for await (const batch of reader.batches(size)) {
      const keys: string[] = [];
      const positions: number[] = [];
      for (const h of batch) {
        const p = toMinorExact(h.paid, currency);
        if (typeof p === 'number') paid += p;
        if (h.key) {
          keys.push(h.key);
          positions.push(read);
        }
        read++;
      }
      if (keys.length) {
        await tx.execute(
          sql`insert into import_history_keys select * from unnest(${sql.param(keys)}::text[], ${sql.param(positions)}::int[])`,
        );
      }
    }
    // One hash aggregate and one hash join, in this backend alone and in memory: parallel workers
    // would each build the hash of up to a million ids, and at the default work_mem it spills to disk.
    await tx.execute(sql`analyze import_history_keys`);
    await tx.execute(sql`set local max_parallel_workers_per_gather = 0`);
    await tx.execute(sql`set local work_mem = '128MB'`);
    const twice = await tx.execute<{ key: string; first: number }>(
      sql`select key, min(pos) as first from import_history_keys group by key having count(*) > 1`,
    );
    const before = await tx.execute<{ total: string | null }>(sql`
      select sum(p.amount)::text as total from invoice_payments p
        join (select distinct ${`import:${source}:`} || key as ref from import_history_keys) r on p.reference = r.ref`);
    return {
      read,
      paid,
      firstOf: new Map(twice.rows.map((r) => [r.key, Number(r.first)])),
      paymentsBefore: Number(before.rows[0].total ?? 0),
    };
  });
}

/**
 * Which of these rows' ids this source imported earlier for their subscriber: an invoice of that
 * subscriber whose notes begin `imported from <source> #<id>`, then end or go on after a space. Each
 * subscriber's invoices are read once per batch, however many of its rows the batch holds.
 */
async function importedKeys(db: Db, prefix: string, rows: HistoryRow[]): Promise<Set<string>> {
  if (!rows.length) return new Set();
  const subscribers = [...new Set(rows.map((r) => r.p.id!))];
  const found = await db.execute<{ key: string }>(sql`
    select v.key
      from unnest(${sql.param(rows.map((r) => r.p.id!))}::int[], ${sql.param(rows.map((r) => r.h.src.key))}::text[])
        as v(sid, key)
      join (select subscriber_id, split_part(substr(notes, ${prefix.length + 1}::int), ' ', 1) as key
              from invoices
             where subscriber_id = any(${sql.param(subscribers)}::int[]) and starts_with(notes, ${prefix}::text)) d
        on d.subscriber_id = v.sid and d.key = v.key`);
  return new Set(found.rows.map((r) => r.key));
}

/**
 * Statistics of the tables an import grows, for the planner (ANALYZE writes no row): during the run
 * those a batch looks rows up in; at the end those only written, which the next run reads back
 * (audit rows, invoices, ledger, payments).
 */
async function analyzeTables(db: Db, which: 'looked-up' | 'written'): Promise<void> {
  await db.execute(
    which === 'written'
      ? sql`analyze audit_log, invoices, invoice_payments, transactions`
      : sql`analyze subscribers, radcheck, radusergroup, radreply`,
  );
}

/** A database error without the statement's parameters (which hold password rows). */
export function safeMessage(err: unknown): string {
  const e = err as { cause?: { message?: string; detail?: string }; message?: string };
  const base = e?.cause?.message ?? e?.message ?? String(err);
  const detail = e?.cause?.detail ? ` (${e.cause.detail})` : '';
  return `${base.split('\nparams:')[0].split(' params: ')[0]}${detail}`.slice(0, 2000);
}

interface BatchContext {
  source: string;
  currency: string;
  passwordMode: PasswordMode;
  /** default_country: phones go in as E.164 (shared/phone.ts). */
  country: string;
  today: string;
  managerId: number | null;
  /** False while the number's trigram index is left out of the load (deferHistoryIndexes). */
  numberTrigrams: boolean;
}

/**
 * Sends a statement now and hands back its promise. Drizzle's query promises run when first awaited
 * (and again on every await): this runs one once. A failure is rethrown where the promise is awaited;
 * the handler attached here only keeps it from counting as unhandled before then. One statement is
 * in flight on the connection at a time (node-postgres's queueing of a second one is deprecated).
 */
function send<T>(query: PromiseLike<T>): Promise<T> {
  const p = Promise.resolve(query);
  p.catch(() => undefined);
  return p;
}

/**
 * Calls `write` for each batch of `items`, and analyzes the looked-up tables after batches 1, 2, 4,
 * 8, ... and after the last: they have doubled since the planner last looked, and a batch's
 * `id = any(...)` lookups turn into scans of the whole table when it believes them small
 * (autovacuum's analyze comes later, if it runs at all).
 */
async function inBatches<T>(db: Db, items: T[], size: number, write: (batch: T[]) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    await write(items.slice(i, i + size));
    const n = i / size + 1;
    if ((n & (n - 1)) === 0 || i + size >= items.length) {
      await prof('analyze', () => analyzeTables(db, 'looked-up'));
    }
  }
}

/** One batch's transaction; its error rethrown without the statement's parameters (password rows). */
async function inBatchTransaction<T>(db: Db, batch: string, write: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      // A batch lost in a crash after its commit is not there for the next run, which writes it again.
      await tx.execute(sql`set local synchronous_commit = off`);
      return write(tx);
    });
  } catch (err) {
    // eslint-disable-next-line preserve-caught-error -- the cause holds the statement's parameters: password rows
    throw new Error(`batch of ${batch}: ${safeMessage(err)}`);
  }
}

/**
 * The reader's chunks until `failure()` names an error, which the next chunk then throws. Its
 * estimate goes with it: importSessions drops radacct's indexes for a bulk load by it.
 */
export function stoppedBy(reader: SessionReader, failure: () => unknown): SessionReader {
  return {
    estimate: reader.estimate?.bind(reader),
    async *chunks(size) {
      for await (const chunk of reader.chunks(size)) {
        if (failure()) throw new Error("stopped: the subscribers' history failed");
        yield chunk;
      }
    },
  };
}

/**
 * New subscribers in one transaction: their rows, FreeRADIUS rows, audit rows and wallet credits.
 * While PostgreSQL executes the subscribers' insert, the password hashes are computed. Returns the
 * sum of the wallet credits, as PostgreSQL returned it from the insert.
 */
async function writeSubscribers(tx: Tx, ctx: BatchContext, fresh: PlannedSubscriber[]): Promise<number> {
  const col = <T>(f: (p: PlannedSubscriber) => T) => sql.param(fresh.map(f));
  const inserted = send(
    tx.execute<{ id: number; username: string }>(sql`
      insert into subscribers (username, password_enc, full_name, phone, address, notes, mac_address, static_ip,
                               service_id, reseller_id, status, wallet_balance, expiry_date, username_since)
      -- A name a deleted subscriber held: its sessions until its deletion are not this one's (migration 0060).
      select u.*, (select max(d.deleted_at) from subscribers d where d.username = u.username and d.deleted_at is not null)
        from unnest(${col((p) => p.src.username)}::text[],
                           ${col((p) =>
                             encrypt(
                               CLEARTEXT_ATTRIBUTES.includes(passwordAttribute(p.src.password!.attribute)!)
                                 ? p.src.password!.value
                                 : '',
                             ),
                           )}::text[],
                           ${col((p) => p.src.fullName)}::text[], ${col((p) => normaliseOptionalPhone(p.src.phone, ctx.country))}::text[],
                           ${col((p) => p.src.address)}::text[], ${col((p) => p.src.notes)}::text[],
                           ${col((p) => p.mac)}::text[], ${col((p) => p.staticIp)}::inet[],
                           ${col((p) => p.serviceId as number)}::int[], ${col((p) => p.resellerId!)}::int[],
                           ${col((p) => (p.src.active ? 'active' : 'inactive'))}::text[],
                           ${col((p) => p.balance)}::bigint[], ${col((p) => p.expiry)}::date[])
             as u(username, password_enc, full_name, phone, address, notes, mac_address, static_ip,
                  service_id, reseller_id, status, wallet_balance, expiry_date)
      returning id, username`),
  );
  const checks = await Promise.all(
    fresh.map(async (p) => {
      const attribute = passwordAttribute(p.src.password!.attribute)!;
      return CLEARTEXT_ATTRIBUTES.includes(attribute)
        ? passwordCheckRow(p.src.username, p.src.password!.value, ctx.passwordMode)
        : { username: p.src.username, attribute, op: ':=', value: p.src.password!.value };
    }),
  );
  const idOf = new Map((await prof('batch:subscribers', () => inserted)).rows.map((r) => [r.username, Number(r.id)]));
  for (const p of fresh) {
    p.id = idOf.get(p.src.username)!;
    p.written = true;
  }
  await prof('batch:radcheck', () =>
    tx.execute(sql`
    insert into radcheck (username, attribute, op, value)
    select * from unnest(${sql.param(checks.map((c) => c.username))}::text[], ${sql.param(checks.map((c) => c.attribute))}::text[],
                         ${sql.param(checks.map((c) => c.op))}::text[], ${sql.param(checks.map((c) => c.value))}::text[])`),
  );
  await prof('batch:sync', () =>
    syncAccessRows(
      tx,
      fresh.map((p) => p.id!),
      ctx.today,
    ),
  );
  await prof('batch:audit', () =>
    tx.execute(sql`
    insert into audit_log (manager_id, actor_type, action, entity, entity_id, reseller_id, details)
    select ${ctx.managerId}::int, ${ctx.managerId === null ? 'system' : 'manager'}, 'import', 'subscriber', v.id,
           s.reseller_id, jsonb_build_object('source', ${ctx.source}::text, 'key', v.username)
      from unnest(${sql.param(fresh.map((p) => p.id!))}::int[], ${sql.param(fresh.map((p) => p.src.username))}::text[])
        as v(id, username) join subscribers s on s.id = v.id`),
  );
  const credited = fresh.filter((p) => p.balance > 0);
  if (!credited.length) return 0;
  // service_id named: the ledger's per-row plan trigger (migration 0052) is skipped.
  const sum = await tx.execute<{ total: string }>(sql`
    with v as (
      select * from unnest(${sql.param(credited.map((p) => p.id!))}::int[], ${sql.param(credited.map((p) => p.balance))}::bigint[])
        as v(id, amount)
    ), t as (
      insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, service_id, method, reference, notes)
      select 'wallet_credit', v.amount, ${ctx.currency}, s.id, s.username, s.reseller_id, s.service_id, 'other',
             ${`import:${ctx.source}:wallet:`} || s.username, 'imported balance'
        from v join subscribers s on s.id = v.id
      returning id, subscriber_id, amount
    ), w as (
      insert into wallet_entries (subscriber_id, amount, transaction_id, reason)
      select subscriber_id, amount, id, 'imported balance' from t
    )
    select coalesce(sum(amount), 0)::text as total from t`);
  return Number(sum.rows[0].total);
}

/**
 * The history of a batch of subscribers (all of them in our tables) in one transaction: invoice ids
 * and numbers, the invoices, their payments. While PostgreSQL executes the invoices' insert, the
 * payments' statement is built. Returns the sum of the payments, as PostgreSQL returned it.
 */
async function writeHistory(tx: Tx, ctx: BatchContext, rows: HistoryRow[]): Promise<number> {
  const { ids, numbers } = await prof('batch:allocate', () => allocateInvoices(tx, rows));
  const invoices = send(insertInvoices(tx, ctx, invoiceColumns(ctx, rows, ids, numbers)));
  const paying = rows.map((r, k) => ({ ...r, invoiceId: ids[k] })).filter(({ h }) => h.paid > 0);
  const pay = <T>(f: (x: (typeof paying)[number]) => T) => sql.param(paying.map(f));
  // A subscriber written by this run is on the plan it was written with: naming it skips the
  // ledger's per-row plan trigger (migration 0052), which looks the subscriber up; one imported
  // earlier may have changed plans since, so the trigger finds its plan as it does for any payment.
  const payments =
    paying.length === 0
      ? undefined
      : sql`
    with v as (
      select * from unnest(${pay((x) => x.invoiceId)}::int[], ${pay((x) => x.h.paid)}::bigint[],
                           ${pay((x) => paymentMethod(x.h.src.method))}::text[],
                           ${pay((x) => `import:${ctx.source}:${x.h.src.key}`)}::text[],
                           ${pay((x) => `${x.h.src.date}T12:00:00Z`)}::timestamptz[], ${pay((x) => x.p.id!)}::int[],
                           ${pay((x) => x.p.src.username)}::text[], ${pay((x) => x.p.resellerId!)}::int[],
                           ${pay((x) => (x.p.written ? (x.p.serviceId as number) : null))}::int[])
        as v(invoice_id, amount, method, reference, paid_at, subscriber_id, username, reseller_id, service_id)
    ), t as (
      -- The invoice's own subscriber, reseller and currency (insertInvoices wrote them from the same rows).
      insert into transactions (type, amount, currency, subscriber_id, username, reseller_id, service_id, invoice_id,
                                method, reference, notes, created_at)
      select 'invoice_payment', v.amount, ${ctx.currency}, v.subscriber_id, v.username, v.reseller_id, v.service_id,
             v.invoice_id, v.method, v.reference, 'imported payment', v.paid_at
        from v
      returning id, invoice_id, amount, method, reference, created_at
    ), p as (
      insert into invoice_payments (invoice_id, transaction_id, amount, method, reference, paid_at, notes)
      select invoice_id, id, amount, method, reference, created_at, 'imported payment' from t
      returning amount
    )
    select coalesce(sum(amount), 0)::text as total from p`;
  await prof('batch:invoices', () => invoices);
  if (!payments) return 0;
  const sum = await prof('batch:payments', () => tx.execute<{ total: string }>(payments));
  return Number(sum.rows[0].total);
}

/**
 * Ids and numbers of the invoices of imported history rows. Numbers come from the same gap-free
 * (prefix, year) counters as every invoice: one bump per year per batch, in one statement, years
 * ascending (the order every writer locks them in).
 */
async function allocateInvoices(tx: Tx, rows: { h: PlannedHistory }[]): Promise<{ ids: number[]; numbers: string[] }> {
  const { invoice_prefix: prefix } = await loadSettings(tx, ['invoice_prefix']);
  const idRows = await tx.execute<{ id: number }>(
    sql`select nextval(pg_get_serial_sequence('invoices', 'id'))::int as id from generate_series(1, ${rows.length}::int)`,
  );
  const ids = idRows.rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  const years = rows.map(({ h }) => Number(h.src.date.slice(0, 4)));
  const slotsOf = new Map<number, number[]>();
  years.forEach((y, i) => {
    const list = slotsOf.get(y);
    if (list) list.push(i);
    else slotsOf.set(y, [i]);
  });
  const order = [...slotsOf.keys()].sort((a, b) => a - b);
  const bumped = await tx.execute<{ year: number; last_value: number }>(sql`
    insert into invoice_sequences (prefix, year, last_value)
    select ${prefix}, v.year, v.n from unnest(${sql.param(order)}::int[], ${sql.param(order.map((y) => slotsOf.get(y)!.length))}::int[])
      with ordinality as v(year, n, k)
     order by v.k
    on conflict (prefix, year) do update set last_value = invoice_sequences.last_value + excluded.last_value
    returning year, last_value`);
  const numbers: string[] = new Array(rows.length);
  for (const r of bumped.rows) {
    const slots = slotsOf.get(Number(r.year))!;
    const first = Number(r.last_value) - slots.length + 1;
    slots.forEach((slot, k) => {
      numbers[slot] = formatInvoiceNumber(prefix, Number(r.year), first + k);
    });
  }
  return { ids, numbers };
}

type InvoiceColumns = ReturnType<typeof invoiceColumns>;

/** The column arrays of the batch's invoices, with newPublicLink's columns (nonces drawn in one call). */
function invoiceColumns(
  ctx: BatchContext,
  rows: { p: PlannedSubscriber; h: PlannedHistory }[],
  ids: number[],
  numbers: string[],
) {
  const random = crypto.randomBytes(16 * ids.length);
  const nonces = ids.map((_, k) => random.subarray(16 * k, 16 * k + 16).toString('base64url'));
  return {
    ids,
    numbers,
    subscribers: rows.map(({ p }) => p.id!),
    resellers: rows.map(({ p }) => p.resellerId!),
    amounts: rows.map(({ h }) => h.amount),
    paid: rows.map(({ h }) => h.paid),
    status: rows.map(({ h }) => (h.paid >= h.amount ? 'paid' : h.paid > 0 ? 'partial' : 'pending')),
    days: rows.map(({ h }) => h.src.date),
    notes: rows.map(
      ({ h }) => `imported from ${ctx.source} #${h.src.key}${h.src.reference ? ` (${h.src.reference})` : ''}`,
    ),
    descriptions: rows.map(({ h }) => h.src.description || 'imported charge'),
    nonces,
    hashes: ids.map((id, k) => publicTokenHash(publicToken(id, nonces[k]))),
  };
}

/**
 * The invoices of imported history rows, written as they end up: total as charged, paid as the
 * source says (status paid, partial or pending), no tax and no commission (not recomputed for the
 * past), one line. Their search_text is the expression of migration 0009's trigger, computed here
 * from one lookup per subscriber of the batch (the trigger looked the subscriber up once per
 * invoice, about a fifth of this statement; migration 0029 runs it only for rows without one). A
 * subscriber that is not there leaves it null: the trigger runs, and the insert fails as before.
 *
 * The number's trigram index runs without GIN's fast update (migration 0036), so each row would
 * descend the index once per trigram: about 60 buffer accesses a row, three quarters of the insert
 * (EXPLAIN ANALYZE of 10,000 rows). For the batch's own insert it is switched on inside this
 * transaction (no other session sees the setting), and the pending list is flushed before the
 * setting is put back: the flush inserts each distinct trigram once with all its rows, and the
 * commit leaves the index as 0036 wants it, with no pending list. The price: ALTER INDEX locks the
 * index exclusively until the batch commits, so other sessions' invoice statements wait for the rest
 * of the batch (its payments); see withBulkTrigrams for when the batch does without.
 */
async function insertInvoices(tx: Tx, ctx: BatchContext, c: InvoiceColumns): Promise<void> {
  const p = sql.param;
  await withBulkTrigrams(tx, ctx.numberTrigrams, () =>
    prof('batch:invoices:insert', () =>
      tx.execute(sql`
    insert into invoices (id, invoice_number, subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount, total,
                          paid_amount, status, currency, issue_date, due_date, paid_at, notes, commission_rate,
                          commission_amount, public_token_nonce, public_token_hash, search_text)
    select v.id, v.num, v.sub, v.res, 'manual', v.amount, 0, 0, v.amount, v.paid, v.status, ${ctx.currency}, v.day, v.day,
           case when v.status = 'paid' then (v.day + time '12:00') at time zone 'UTC' end, v.notes, 0, 0, v.nonce, v.hash,
           lower(v.num) || chr(1) || s.who
      from unnest(${p(c.ids)}::int[], ${p(c.numbers)}::text[], ${p(c.subscribers)}::int[], ${p(c.resellers)}::int[],
                  ${p(c.amounts)}::bigint[], ${p(c.paid)}::bigint[], ${p(c.status)}::text[], ${p(c.days)}::date[],
                  ${p(c.notes)}::text[], ${p(c.nonces)}::text[], ${p(c.hashes)}::text[])
        as v(id, num, sub, res, amount, paid, status, day, notes, nonce, hash)
      left join (select id, lower(username) || chr(1) || coalesce(lower(full_name), '') as who
                   from subscribers where id = any(${p([...new Set(c.subscribers)])}::int[])) s on s.id = v.sub`),
    ),
  );
  await tx.execute(sql`
    insert into invoice_items (invoice_id, position, description, qty, unit_price, amount)
    select v.id, 0, v.description, 1, v.amount, v.amount
      from unnest(${p(c.ids)}::int[], ${p(c.descriptions)}::text[], ${p(c.amounts)}::bigint[]) as v(id, description, amount)`);
}

const NUMBER_TRIGRAMS = 'invoices_number_trgm';

/** How long a batch waits for the number index's exclusive lock before it inserts without it. */
const TRGM_LOCK_WAIT = '200ms';

/**
 * Runs `insert` alone while the number index is left out of the load (`indexed` false). Otherwise
 * runs it with GIN's fast update on for the number index, if the index's lock comes within
 * TRGM_LOCK_WAIT, then flushes the pending list and switches it off again; without the lock, `insert`
 * writes its trigrams row by row. The lock waits for every session that has touched invoices, and
 * one of those may wait for this batch's invoice counters (a consolidation reads invoices, then
 * numbers one): shorter than deadlock_timeout, the wait gives way first. Once the batch holds the
 * lock, no other session holds any on the index, so none holding what the batch still needs can be
 * waiting for it.
 */
async function withBulkTrigrams(tx: Tx, indexed: boolean, insert: () => Promise<unknown>): Promise<void> {
  if (!indexed) {
    await insert();
    return;
  }
  let bulk = true;
  await tx.execute(sql`savepoint invoices_trgm`);
  try {
    const prior = await tx.execute<{ prior: string }>(
      sql`select current_setting('lock_timeout') as prior, set_config('lock_timeout', ${TRGM_LOCK_WAIT}, true)`,
    );
    await tx.execute(sql`alter index ${sql.identifier(NUMBER_TRIGRAMS)} set (fastupdate = on)`);
    await tx.execute(sql`select set_config('lock_timeout', ${prior.rows[0].prior}, true)`);
    await tx.execute(sql`release savepoint invoices_trgm`);
  } catch (err) {
    if (!isLockTimeout(err)) throw err;
    // Rolls the lock_timeout back as well.
    await tx.execute(sql`rollback to savepoint invoices_trgm`);
    bulk = false;
  }
  await insert();
  if (!bulk) return;
  await prof('batch:invoices:trigrams', () =>
    tx.execute(sql`select gin_clean_pending_list(${NUMBER_TRIGRAMS}::regclass)`),
  );
  await tx.execute(sql`alter index ${sql.identifier(NUMBER_TRIGRAMS)} set (fastupdate = off)`);
}
