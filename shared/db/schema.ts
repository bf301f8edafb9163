/**
 * The one database schema. Money columns are integer minor units (bigint, read as JS numbers:
 * exact up to 2^53, far above any ledger here). FreeRADIUS tables keep FreeRADIUS's own names so a
 * stock rlm_sql_postgresql reads and writes them directly.
 */
import { sql } from 'drizzle-orm';
import {
  cidr,
  bigint,
  bigserial,
  boolean,
  char,
  check,
  customType,
  date,
  foreignKey,
  index,
  inet,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  serial,
  smallint,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
  varchar,
} from 'drizzle-orm/pg-core';

import type { BlockedReason } from '../domain/access';

const money = (name: string) => bigint(name, { mode: 'number' });
/** Binary column read and written as a Buffer (node-postgres decodes bytea itself). */
const bytea = customType<{ data: Buffer }>({ dataType: () => 'bytea' });
const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => timestamp('updated_at', { withTimezone: true }).notNull().defaultNow();

// ---------------------------------------------------------------- identity and resellers

export const resellers = pgTable(
  'resellers',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    parentId: integer('parent_id'),
    /** Materialised path of ids, e.g. `/1/5/9/`: a tree is every row whose path starts with its root's. */
    path: text('path').notNull(),
    balance: money('balance').notNull().default(0),
    commissionRate: numeric('commission_rate', { precision: 5, scale: 2 }).notNull().default('0'),
    currency: char('currency', { length: 3 }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('resellers_parent_idx').on(t.parentId),
    index('resellers_path_idx').using('btree', sql`${t.path} text_pattern_ops`),
  ],
);

export const managers = pgTable(
  'managers',
  {
    id: serial('id').primaryKey(),
    username: text('username').notNull(),
    passwordHash: text('password_hash').notNull(),
    role: text('role').notNull(),
    resellerId: integer('reseller_id'),
    permissions: jsonb('permissions').$type<string[]>().notNull().default([]),
    /** A disabled manager keeps its row (audit, history) but no token of it is accepted. */
    active: boolean('active').notNull().default(true),
    /** Raised by a password change; a token whose `tv` claim differs is refused. */
    tokenVersion: integer('token_version').notNull().default(0),
    /** TOTP secret (docs/two-factor.md), encrypted at rest like the chat tokens; set at enrolment. */
    totpSecret: text('totp_secret'),
    /** When a code confirmed totp_secret: two-factor sign-in is on while this is set. */
    totpEnabledAt: timestamp('totp_enabled_at', { withTimezone: true }),
    /** The last TOTP time step accepted: a code of this step or an earlier one is refused (replay). */
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('managers_username_uq').on(t.username)],
);

/**
 * Two-factor recovery codes (docs/two-factor.md): shown once, kept as HMAC-SHA256 under a key
 * derived from ENCRYPTION_KEY; a code signs in once (`used_at`).
 */
export const managerRecoveryCodes = pgTable(
  'manager_recovery_codes',
  {
    id: serial('id').primaryKey(),
    managerId: integer('manager_id')
      .notNull()
      .references(() => managers.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('manager_recovery_codes_uq').on(t.managerId, t.codeHash)],
);

/**
 * API keys (docs/security.md): a manager's key for scripts, sent as `Authorization: Bearer
 * isk_<lookup>_<secret>`. Only the SHA-256 of the whole key is kept; `lookup` finds the row. A
 * restricted key acts with the listed permissions only (never more than its manager holds now),
 * over `reseller_id`'s tree when set; a full key acts as its manager.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: serial('id').primaryKey(),
    managerId: integer('manager_id')
      .notNull()
      .references(() => managers.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    lookup: text('lookup').notNull(),
    secretHash: text('secret_hash').notNull(),
    full: boolean('full').notNull().default(false),
    permissions: jsonb('permissions').$type<string[]>().notNull().default([]),
    resellerId: integer('reseller_id').references(() => resellers.id, { onDelete: 'cascade' }),
    allowedIps: jsonb('allowed_ips').$type<string[]>().notNull().default([]),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    lastUsedIp: text('last_used_ip'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('api_keys_lookup_uq').on(t.lookup), index('api_keys_manager_idx').on(t.managerId)],
);

export const tokenBlacklist = pgTable('token_blacklist', {
  jti: text('jti').primaryKey(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: createdAt(),
});

// ---------------------------------------------------------------- plans

/** One fair-use tier: past `threshold_gb` of monthly usage the subscriber drops to `rate_limit`. */
export interface FupTier {
  level: number;
  threshold_gb: number;
  rate_limit: string;
}

export const services = pgTable(
  'services',
  {
    id: serial('id').primaryKey(),
    name: text('name').notNull(),
    price: money('price').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    durationDays: integer('duration_days').notNull(),
    dailyQuotaGb: numeric('daily_quota_gb', { precision: 12, scale: 3 }),
    monthlyQuotaGb: numeric('monthly_quota_gb', { precision: 12, scale: 3 }),
    rateLimit: text('rate_limit'),
    fupTiers: jsonb('fup_tiers').$type<FupTier[]>().notNull().default([]),
    poolName: text('pool_name'),
    /**
     * IPv6 pools for subscribers with no static prefix: the name of one of our `ipv6_pools` (a prefix
     * is assigned and written as the subscriber's own), else a pool name the NAS keeps (sent as
     * Framed-IPv6-Pool / Delegated-IPv6-Prefix-Pool).
     */
    framedIpv6Pool: text('framed_ipv6_pool'),
    delegatedIpv6Pool: text('delegated_ipv6_pool'),
    macBinding: boolean('mac_binding').notNull().default(false),
    /** Extra reply pairs per NAS vendor (`{ cisco: 'Cisco-AVPair += "..."' }`), checked against the dictionary (shared/vendors). */
    vendorAttributes: jsonb('vendor_attributes').$type<Record<string, string>>().notNull().default({}),
    /** A subscriber may move to this plan through self-care (POST /api/my/change-plan, docs/self-care.md). */
    selfService: boolean('self_service').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('services_name_uq')
      .on(t.name)
      .where(sql`${t.deletedAt} is null`),
  ],
);

export const resellerServiceLimits = pgTable(
  'reseller_service_limits',
  {
    id: serial('id').primaryKey(),
    resellerId: integer('reseller_id').notNull(),
    serviceId: integer('service_id').notNull(),
    maxSubscribers: integer('max_subscribers'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('reseller_service_limits_uq').on(t.resellerId, t.serviceId)],
);

/** Named address pools a static IP can be drawn from (`set_static_ip` with `pool_name`). */
export const ipPools = pgTable('ip_pools', {
  name: text('name').primaryKey(),
  rangeStart: inet('range_start').notNull(),
  rangeEnd: inet('range_end').notNull(),
  createdAt: createdAt(),
});

/**
 * IPv6 prefixes kept by us (shared/access/ipv6-pools.ts): `prefix` split into prefixes of
 * `prefix_length`, each handed to one subscriber at a time.
 */
export const ipv6Pools = pgTable('ipv6_pools', {
  name: text('name').primaryKey(),
  prefix: cidr('prefix').notNull(),
  prefixLength: smallint('prefix_length').notNull(),
  createdAt: createdAt(),
});

/**
 * Who holds which of a pool's prefixes: the `index`th of the split. Released when the subscriber
 * row goes (permanent delete), not at a soft delete, so a restored subscriber keeps its prefix.
 */
export const ipv6PoolAssignments = pgTable(
  'ipv6_pool_assignments',
  {
    poolName: text('pool_name')
      .notNull()
      .references(() => ipv6Pools.name),
    index: bigint('index', { mode: 'bigint' }).notNull(),
    prefix: cidr('prefix').notNull(),
    subscriberId: integer('subscriber_id')
      .notNull()
      .references(() => subscribers.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.poolName, t.index] }),
    uniqueIndex('ipv6_pool_assignments_holder_uq').on(t.subscriberId, t.poolName),
  ],
);

// ---------------------------------------------------------------- subscribers

export const subscribers = pgTable(
  'subscribers',
  {
    id: serial('id').primaryKey(),
    username: text('username').notNull(),
    passwordEnc: text('password_enc').notNull(),
    fullName: text('full_name'),
    phone: text('phone'),
    macAddress: text('mac_address'),
    serviceId: integer('service_id').notNull(),
    resellerId: integer('reseller_id').notNull(),
    status: text('status').notNull().default('active'),
    staticIp: inet('static_ip'),
    /** The WAN side (Framed-IPv6-Prefix); overlap among live subscribers is refused by an exclusion constraint. */
    ipv6Prefix: cidr('ipv6_prefix'),
    /** The LAN side, /48 to /64 (Delegated-IPv6-Prefix); same constraint. */
    delegatedIpv6Prefix: cidr('delegated_ipv6_prefix'),
    region: text('region'),
    building: text('building'),
    address: text('address'),
    nationality: text('nationality'),
    country: text('country'),
    notes: text('notes'),
    price: money('price'),
    overridePrice: boolean('override_price').notNull().default(false),
    fupLevel: smallint('fup_level').notNull().default(0),
    dailyQuotaUsed: bigint('daily_quota_used', { mode: 'number' }).notNull().default(0),
    monthlyQuotaUsed: bigint('monthly_quota_used', { mode: 'number' }).notNull().default(0),
    /** Per-subscriber overrides of the plan's quotas (bulk set_daily_quota / set_monthly_quota). */
    dailyQuotaGb: numeric('daily_quota_gb', { precision: 12, scale: 3 }),
    monthlyQuotaGb: numeric('monthly_quota_gb', { precision: 12, scale: 3 }),
    extraQuotaBytes: bigint('extra_quota_bytes', { mode: 'number' }).notNull().default(0),
    /** UTC day the daily counter covers (its month: the monthly counter's); kept by the usage rollup. */
    usageDay: date('usage_day'),
    /** Usage moved since the FUP engine last compared it with the plan (set by writers other than accounting: fup_queue). */
    fupPending: boolean('fup_pending').notNull().default(false),
    walletBalance: money('wallet_balance').notNull().default(0),
    expiryDate: date('expiry_date').notNull(),
    lastRenewedOn: date('last_renewed_on'),
    /** Renewed from the wallet at expiry by the lifecycle sweep (migration 0015). */
    autoRenew: boolean('auto_renew').notNull().default(false),
    /** Why access is blocked now (`expired`, `quota`, `overdue`) or null; the RADIUS rows follow it. */
    blockedReason: text('blocked_reason').$type<BlockedReason>(),
    /** Kept from radacct (a Start's trigger, a Stop's usage rollup) so list filters need no scan of accounting. */
    isOnline: boolean('is_online').notNull().default(false),
    ipAddress: inet('ip_address'),
    lastNasId: integer('last_nas_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
    /**
     * Accounting is kept by username, and a deleted subscriber's name can be taken again: sessions
     * under the name that started before this instant are an earlier holder's, never shown as this
     * one's (null: every session under the name is its own). Set when the name is taken while
     * radacct holds sessions under it (migration 0060).
     */
    usernameSince: timestamp('username_since', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('subscribers_username_live_uq')
      .on(t.username)
      .where(sql`${t.deletedAt} is null`),
    // One live subscriber per static address, so two concurrent assignments cannot both win.
    uniqueIndex('subscribers_static_ip_live_uq')
      .on(t.staticIp)
      .where(sql`${t.deletedAt} is null and ${t.staticIp} is not null`),
    index('subscribers_reseller_idx').on(t.resellerId),
    index('subscribers_service_idx').on(t.serviceId),
    index('subscribers_expiry_idx').on(t.expiryDate),
    index('subscribers_created_idx').on(t.createdAt),
    index('subscribers_last_nas_idx').on(t.lastNasId),
    // The list's default page (live rows, newest first, id as tie-breaker) and its expiry sort read
    // these in order and stop after one page, instead of sorting every match. Online subscribers
    // are a small share, possibly all far down the created_at order, so they get their own index.
    // The trailing reseller_id (and the status index) let the list's capped count of a filter,
    // reseller-scoped or not, be an index-only scan that stops after 10,001 entries.
    index('subscribers_live_created_idx')
      .on(t.createdAt, t.id)
      .where(sql`${t.deletedAt} is null`),
    index('subscribers_live_expiry_idx')
      .on(t.expiryDate, t.id, t.resellerId)
      .where(sql`${t.deletedAt} is null`),
    index('subscribers_live_online_created_idx')
      .on(t.createdAt, t.id, t.resellerId)
      .where(sql`${t.isOnline} and ${t.deletedAt} is null`),
    index('subscribers_unblocked_expiry_idx')
      .on(t.expiryDate)
      .where(sql`${t.deletedAt} is null and ${t.blockedReason} is null`),
    index('subscribers_blocked_idx')
      .on(t.blockedReason, t.id)
      .where(sql`${t.deletedAt} is null and ${t.blockedReason} is not null`),
    check('subscribers_blocked_reason_check', sql`${t.blockedReason} IN ('expired', 'quota', 'overdue')`),
    index('subscribers_auto_renew_expiry_idx')
      .on(t.expiryDate, t.id)
      .where(sql`${t.deletedAt} is null and ${t.autoRenew}`),
    index('subscribers_live_status_idx')
      .on(t.status, t.resellerId)
      .where(sql`${t.deletedAt} is null`),
    index('subscribers_username_trgm').using('gin', sql`${t.username} gin_trgm_ops`),
    index('subscribers_full_name_trgm').using('gin', sql`${t.fullName} gin_trgm_ops`),
    index('subscribers_phone_trgm').using('gin', sql`${t.phone} gin_trgm_ops`),
    index('subscribers_mac_trgm').using('gin', sql`${t.macAddress} gin_trgm_ops`),
    index('subscribers_fup_pending_idx')
      .on(t.id)
      .where(sql`${t.fupPending}`),
    index('subscribers_usage_day_idx')
      .on(t.usageDay)
      .where(sql`${t.usageDay} is not null`),
    // The phones the start-up backfill still has to read (services/subscribers/phone-backfill.ts):
    // once all are E.164 it is empty, and a start no longer scans every subscriber to find none.
    index('subscribers_phone_unnormalised_idx')
      .on(t.id)
      .where(sql`${t.phone} is not null and ${t.phone} !~ '^[+][1-9][0-9]{3,14}$'`),
  ],
);

/**
 * Subscribers whose usage moved since the FUP engine last looked (the usage rollup inserts,
 * the engine claims and deletes). A narrow queue rather than a flag on `subscribers`: flipping an
 * indexed flag made every interim a non-HOT update of `subscribers` and its 20 indexes.
 */
export const fupQueue = pgTable('fup_queue', {
  subscriberId: integer('subscriber_id').primaryKey(),
});

/**
 * Octets heard by accounting and not yet added to the counters: the radacct update trigger appends a
 * row for an open session that moved (address, NAS, user) or was opened again (migrations 0032,
 * 0038; Interim-Updates and Stops are found through `usage_seen`), and the usage rollup
 * (shared/access/usage-rollup.ts) deletes them every few seconds into `subscribers`' counters,
 * `daily_usage`, `fup_queue` and, for a row with `refresh`, the session state (is_online,
 * ip_address, last_nas_id).
 */
export const usageDeltas = pgTable('usage_deltas', {
  username: text('username').notNull(),
  day: date('day').notNull(),
  upload: bigint('upload', { mode: 'number' }).notNull(),
  download: bigint('download', { mode: 'number' }).notNull(),
  refresh: boolean('refresh').notNull(),
  nas: inet('nas'),
});

/**
 * The octets the usage rollup last counted for each open session (migrations 0037, 0038). An
 * Interim-Update or a Stop fires no trigger: the rollup compares the sessions' totals with these,
 * counts the increase and stores the totals, or deletes the row of a session that closed.
 */
export const usageSeen = pgTable('usage_seen', {
  radacctid: bigint('radacctid', { mode: 'number' }).primaryKey(),
  input: bigint('input', { mode: 'number' }).notNull(),
  output: bigint('output', { mode: 'number' }).notNull(),
});

export const dailyUsage = pgTable(
  'daily_usage',
  {
    subscriberId: integer('subscriber_id').notNull(),
    date: date('date').notNull(),
    downloadBytes: bigint('download_bytes', { mode: 'number' }).notNull().default(0),
    uploadBytes: bigint('upload_bytes', { mode: 'number' }).notNull().default(0),
  },
  // By date: the usage report reads the days of a range's partial months (reports/usage-cover.ts).
  (t) => [primaryKey({ columns: [t.subscriberId, t.date] }), index('daily_usage_date_idx').on(t.date)],
);

/**
 * An import's sessions' octets per username and UTC day (docs/import.md, "Sessions"), committed with
 * the chunk of sessions they come from and moved into daily_usage in one sorted statement at the end
 * of the run (or of the next run, if this one stopped): upserted chunk by chunk they were a third of
 * the sessions' work. No index: rows are only appended, then all taken at once.
 */
export const importUsage = pgTable('import_usage', {
  username: text('username').notNull(),
  day: date('day').notNull(),
  downloadBytes: bigint('download_bytes', { mode: 'number' }).notNull(),
  uploadBytes: bigint('upload_bytes', { mode: 'number' }).notNull(),
});

/**
 * Indexes a bulk load dropped and has not built again yet, as pg_get_indexdef wrote them before the
 * drop (shared/db/deferred-indexes.ts): the load builds them at its end, and a start after a load
 * that died in between builds what is left here.
 */
export const deferredIndexes = pgTable('deferred_indexes', {
  name: text('name').primaryKey(),
  definition: text('definition').notNull(),
  deferredAt: timestamp('deferred_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * daily_usage summed per subscriber and UTC month (docs/reports.md, "Usage rollup"): the usage report
 * reads a month's row instead of its days (a year is 13 rows per subscriber, not 365). `days` counts
 * the daily rows summed, so a range knows who had usage in it. Kept by statement triggers on
 * daily_usage in the writing transaction (migrations 0053, 0055): exact at every instant.
 */
export const usageMonthly = pgTable(
  'usage_monthly',
  {
    month: date('month').notNull(),
    subscriberId: integer('subscriber_id').notNull(),
    days: integer('days').notNull(),
    downloadBytes: bigint('download_bytes', { mode: 'number' }).notNull(),
    uploadBytes: bigint('upload_bytes', { mode: 'number' }).notNull(),
    // The subscriber's plan and reseller now (migration 0055: set from subscribers when the row is
    // written, moved by a trigger when the subscriber's change), so the report's totals per plan and
    // a reseller's scope read this table alone, never a million subscriber rows.
    serviceId: integer('service_id'),
    resellerId: integer('reseller_id'),
  },
  (t) => [
    primaryKey({ columns: [t.month, t.subscriberId] }),
    index('usage_monthly_subscriber_idx').on(t.subscriberId),
    // A reseller's tree: its rows of the range's months.
    index('usage_monthly_reseller_idx').on(t.resellerId, t.month),
  ],
);

export const bandwidthRules = pgTable(
  'bandwidth_rules',
  {
    id: serial('id').primaryKey(),
    subscriberId: integer('subscriber_id').notNull(),
    direction: text('direction').notNull(),
    rateKbps: integer('rate_kbps').notNull(),
    startTime: text('start_time'),
    endTime: text('end_time'),
    days: jsonb('days').$type<number[]>(),
    priority: integer('priority').notNull().default(8),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('bandwidth_rules_subscriber_idx').on(t.subscriberId)],
);

// ---------------------------------------------------------------- billing

export const invoices = pgTable(
  'invoices',
  {
    id: serial('id').primaryKey(),
    invoiceNumber: text('invoice_number').notNull(),
    subscriberId: integer('subscriber_id').notNull(),
    resellerId: integer('reseller_id').notNull(),
    kind: text('kind').notNull().default('manual'),
    amount: money('amount').notNull(),
    taxRate: numeric('tax_rate', { precision: 5, scale: 2 }).notNull(),
    taxAmount: money('tax_amount').notNull(),
    total: money('total').notNull(),
    paidAmount: money('paid_amount').notNull().default(0),
    status: text('status').notNull().default('pending'),
    currency: char('currency', { length: 3 }).notNull(),
    issueDate: date('issue_date').notNull(),
    dueDate: date('due_date').notNull(),
    paidAt: timestamp('paid_at', { withTimezone: true }),
    notes: text('notes'),
    commissionRate: numeric('commission_rate', { precision: 5, scale: 2 }).notNull().default('0'),
    commissionAmount: money('commission_amount').notNull().default(0),
    consolidatedInto: integer('consolidated_into'),
    /** Public link: the token is HMAC(key, id, nonce), never stored; its hash is, for the check. */
    publicTokenNonce: text('public_token_nonce'),
    publicTokenHash: text('public_token_hash'),
    createdBy: integer('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('invoices_number_uq').on(t.invoiceNumber),
    index('invoices_subscriber_idx').on(t.subscriberId, t.issueDate, t.id),
    index('invoices_reseller_idx').on(t.resellerId, t.id),
    index('invoices_status_idx').on(t.status, t.id),
    index('invoices_issue_date_idx').on(t.issueDate, t.id),
    // Commissions (migration 0059 adds INCLUDE (status, amount, commission_amount, currency): index-only sums).
    index('invoices_commission_idx').on(t.resellerId, t.issueDate),
    // The dashboard's open balances and the aging report, index-only (migration 0053 adds INCLUDE
    // (subscriber_id, currency, total, paid_amount, status)): the open invoices without their heap.
    index('invoices_open_idx')
      .on(t.resellerId, t.dueDate)
      .where(sql`${t.status} in ('pending', 'partial', 'overdue') and ${t.total} > ${t.paidAmount}`),
    // Migration 0036: no pending list, which every number search would read whole.
    index('invoices_number_trgm')
      .using('gin', sql`${t.invoiceNumber} gin_trgm_ops`)
      .with({ fastupdate: false }),
    // Migration 0011: what a search can rule out as no number (services/billing/invoice-list.ts).
    check('invoices_number_chars', sql`${t.invoiceNumber} ~ '^[A-Za-z0-9-]+$'`),
    // Migration 0009 adds `search_text` (number, username and full name, lower-cased, kept by
    // triggers) and invoices_search_idx (id) INCLUDE (search_text) for broad searches; SQL only.
  ],
);

export const invoiceItems = pgTable(
  'invoice_items',
  {
    id: serial('id').primaryKey(),
    invoiceId: integer('invoice_id').notNull(),
    position: integer('position').notNull(),
    description: text('description').notNull(),
    qty: numeric('qty', { precision: 14, scale: 3 }).notNull(),
    unitPrice: money('unit_price').notNull(),
    amount: money('amount').notNull(),
  },
  (t) => [index('invoice_items_invoice_idx').on(t.invoiceId, t.position)],
);

/** Gap-free numbering: one row per (prefix, year), bumped inside the creating transaction. */
export const invoiceSequences = pgTable(
  'invoice_sequences',
  {
    prefix: text('prefix').notNull(),
    year: integer('year').notNull(),
    lastValue: integer('last_value').notNull(),
  },
  (t) => [primaryKey({ columns: [t.prefix, t.year] })],
);

/** The ledger: every movement of money, the source of revenue figures. */
export const transactions = pgTable(
  'transactions',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    type: text('type').notNull(),
    amount: money('amount').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    subscriberId: integer('subscriber_id'),
    username: text('username'),
    resellerId: integer('reseller_id'),
    invoiceId: integer('invoice_id'),
    method: text('method'),
    reference: text('reference'),
    notes: text('notes'),
    createdBy: integer('created_by'),
    /**
     * The subscriber's plan when the row was written (filled from `subscriber_id` by a row trigger
     * when the writer leaves it out, migration 0050): the revenue report by plan and ledger_rollup.
     */
    serviceId: integer('service_id'),
    createdAt: createdAt(),
  },
  (t) => [
    index('transactions_subscriber_idx').on(t.subscriberId),
    index('transactions_reseller_idx').on(t.resellerId),
    index('transactions_invoice_idx').on(t.invoiceId),
    index('transactions_username_idx').on(t.username),
    // GET /api/transactions pages newest first, alone or per reseller or manager (docs/ledger-and-sessions.md).
    // The trailing columns (order is fixed by created_at, id) let a tree, type or method filter skip
    // a deep page's rows inside the index, without reading them from the table.
    index('transactions_created_idx').on(t.createdAt, t.id, t.resellerId, t.type, t.method),
    index('transactions_reseller_created_idx').on(t.resellerId, t.createdAt, t.id),
    index('transactions_created_by_idx').on(t.createdBy, t.createdAt, t.id),
    // Reports (migration 0047, docs/reports.md): payments over a date range (the revenue report by plan);
    // a reseller's balance movements in time order (its statement).
    index('transactions_payment_created_idx')
      .on(t.createdAt)
      .where(sql`${t.type} = 'invoice_payment'`),
    index('transactions_reseller_balance_idx')
      .on(t.resellerId, t.createdAt, t.id)
      .where(sql`${t.type} in ('reseller_credit', 'reseller_debit', 'renewal', 'rename_fee', 'refill_fee')`),
  ],
);

/**
 * The ledger summed per key (docs/reports.md, "Rollup"; migration 0050): one table serves the
 * dashboard, the revenue report and the totals of GET /api/transactions. Each ledger change is added
 * twice, at `grain` 'd' (the UTC day) and 'm' (its month, `day` its first day), so a long range reads
 * whole months and only its partial months by day. Statement triggers on `transactions` append
 * signed rows in the writing transaction, locking nothing; the reports service folds the rows of a
 * (grain, day, reseller) into one per key. A figure is the sum of every row of its keys, folded or
 * not, so it is exact at every instant; folding only keeps the table small.
 */
export const ledgerRollup = pgTable(
  'ledger_rollup',
  {
    grain: char('grain', { length: 1 }).notNull(),
    day: date('day').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    type: text('type').notNull(),
    method: text('method'),
    serviceId: integer('service_id'),
    resellerId: integer('reseller_id'),
    managerId: integer('manager_id'),
    n: bigint('n', { mode: 'number' }).notNull(),
    incoming: money('incoming').notNull(),
    outgoing: money('outgoing').notNull(),
    folded: boolean('folded').notNull().default(false),
  },
  (t) => [
    // Migration 0056 adds INCLUDE (type, currency, method, n, incoming, outgoing): the dashboard's
    // payments per day and ledger figures without the heap.
    index('ledger_rollup_day_idx').on(t.grain, t.day, t.resellerId),
    index('ledger_rollup_reseller_idx').on(t.resellerId, t.grain, t.day),
    index('ledger_rollup_unfolded_idx')
      .on(t.grain, t.day)
      .where(sql`not ${t.folded}`),
  ],
);

/**
 * Live subscribers counted for the dashboard (docs/reports.md, "Subscriber counts"; migration 0050),
 * so it reads a row per reseller and expiry day instead of every subscriber: `kind` 'x' rows per
 * (reseller, expiry date) with the counts by status, blocked, online and the wallets' sum; 'c' rows
 * per (reseller, month of creation) with `n` only. Triggers on `subscribers` append signed rows in
 * the writing transaction; the reports service folds them. Exact at every instant, like
 * ledger_rollup.
 */
export const subscriberCounts = pgTable(
  'subscriber_counts',
  {
    kind: char('kind', { length: 1 }).notNull(),
    resellerId: integer('reseller_id').notNull(),
    day: date('day').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
    active: bigint('active', { mode: 'number' }).notNull(),
    inactive: bigint('inactive', { mode: 'number' }).notNull(),
    blocked: bigint('blocked', { mode: 'number' }).notNull(),
    online: bigint('online', { mode: 'number' }).notNull(),
    wallets: money('wallets').notNull(),
    folded: boolean('folded').notNull().default(false),
  },
  (t) => [
    index('subscriber_counts_reseller_idx').on(t.resellerId, t.kind, t.day),
    index('subscriber_counts_unfolded_idx')
      .on(t.kind, t.resellerId)
      .where(sql`not ${t.folded}`),
  ],
);

/**
 * Accounting sessions counted per reseller and UTC hour for the dashboard's online per hour
 * (docs/reports.md, "Sessions per hour"; migration 0054): `starts` at the hour a session started,
 * `stops` at the hour it stopped, and at hour '-infinity' the open sessions (as `starts`). The
 * reseller is the session's live subscriber's (0: none, or the operator's own). Triggers on radacct
 * and subscribers append signed rows in the writing transaction; the reports service folds them.
 */
export const sessionHours = pgTable(
  'session_hours',
  {
    resellerId: integer('reseller_id').notNull(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    starts: bigint('starts', { mode: 'number' }).notNull(),
    stops: bigint('stops', { mode: 'number' }).notNull(),
    folded: boolean('folded').notNull().default(false),
  },
  (t) => [
    index('session_hours_hour_idx').on(t.hour, t.resellerId),
    index('session_hours_unfolded_idx')
      .on(t.hour, t.resellerId)
      .where(sql`not ${t.folded}`),
  ],
);

/**
 * The ids of subscribers whose row is gone (a permanent removal; migration 0056), kept by triggers on
 * subscribers: the aging report leaves their open invoices out with a lookup in this small table
 * instead of one in subscribers per open invoice (docs/reports.md, "Aging").
 */
export const subscriberTombstones = pgTable('subscriber_tombstones', {
  id: integer('id').primaryKey(),
});

/**
 * Live online subscribers counted per reseller and access server (`nas_id` their last_nas_id, 0 for
 * none) for the dashboard's servers (docs/reports.md, "Online per access server"; migration 0056).
 * Triggers on subscribers append signed rows in the writing transaction; the reports service folds them.
 */
export const nasOnline = pgTable(
  'nas_online',
  {
    resellerId: integer('reseller_id').notNull(),
    nasId: integer('nas_id').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
    folded: boolean('folded').notNull().default(false),
  },
  (t) => [
    index('nas_online_reseller_idx').on(t.resellerId, t.nasId),
    index('nas_online_unfolded_idx')
      .on(t.resellerId, t.nasId)
      .where(sql`not ${t.folded}`),
  ],
);

/** The newest Start or Interim-Update time each access server sent (migration 0054), kept by radacct's triggers. */
export const nasLastPacket = pgTable('nas_last_packet', {
  nasipaddress: inet('nasipaddress').primaryKey(),
  lastPacket: timestamp('last_packet', { withTimezone: true }).notNull(),
});

export const invoicePayments = pgTable(
  'invoice_payments',
  {
    id: serial('id').primaryKey(),
    invoiceId: integer('invoice_id').notNull(),
    transactionId: bigint('transaction_id', { mode: 'number' }).notNull(),
    amount: money('amount').notNull(),
    method: text('method').notNull(),
    reference: text('reference'),
    paidAt: timestamp('paid_at', { withTimezone: true }).notNull(),
    notes: text('notes'),
    createdBy: integer('created_by'),
    createdAt: createdAt(),
  },
  (t) => [index('invoice_payments_invoice_idx').on(t.invoiceId)],
);

/** Subscriber prepaid credit; `subscribers.wallet_balance` is the running sum of these rows. */
export const walletEntries = pgTable(
  'wallet_entries',
  {
    id: serial('id').primaryKey(),
    subscriberId: integer('subscriber_id').notNull(),
    amount: money('amount').notNull(),
    transactionId: bigint('transaction_id', { mode: 'number' }),
    reason: text('reason').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('wallet_entries_subscriber_idx').on(t.subscriberId)],
);

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    managerId: integer('manager_id').notNull(),
    key: text('key').notNull(),
    route: text('route').notNull(),
    requestHash: text('request_hash').notNull(),
    statusCode: integer('status_code'),
    response: jsonb('response'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.managerId, t.key] })],
);

export const deliveries = pgTable(
  'deliveries',
  {
    id: serial('id').primaryKey(),
    invoiceId: integer('invoice_id'),
    subscriberId: integer('subscriber_id'),
    invoiceIds: jsonb('invoice_ids').$type<number[]>(),
    provider: text('provider').notNull(),
    phone: text('phone').notNull(),
    status: text('status').notNull(),
    providerMessageId: text('provider_message_id'),
    error: text('error'),
    attempts: integer('attempts').notNull().default(0),
    createdBy: integer('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('deliveries_invoice_idx').on(t.invoiceId)],
);

/** Messages the lifecycle sends (expiry reminders): one per subscriber, rule and expiry date (0015). */
export const notifications = pgTable(
  'notifications',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    subscriberId: integer('subscriber_id').notNull(),
    kind: text('kind').notNull(),
    ruleDays: integer('rule_days').notNull(),
    expiryDate: date('expiry_date').notNull(),
    provider: text('provider'),
    recipient: text('recipient'),
    message: text('message'),
    status: text('status').notNull(),
    error: text('error'),
    createdAt: createdAt(),
    sentAt: timestamp('sent_at', { withTimezone: true }),
  },
  (t) => [
    unique('notifications_once_uq').on(t.subscriberId, t.kind, t.ruleDays, t.expiryDate),
    index('notifications_subscriber_idx').on(t.subscriberId, t.id),
  ],
);

/**
 * One-time sign-in codes of self-care (docs/self-care.md): at most one live code per subscriber,
 * kept as an HMAC under a key derived from ENCRYPTION_KEY, single use, 5 minutes, 5 tries.
 */
export const selfCareCodes = pgTable('self_care_codes', {
  subscriberId: integer('subscriber_id')
    .primaryKey()
    .references(() => subscribers.id, { onDelete: 'cascade' }),
  codeHash: text('code_hash').notNull(),
  tries: smallint('tries').notNull().default(0),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
  createdAt: createdAt(),
});

// ---------------------------------------------------------------- operations

/** Invoices per reseller, kept by triggers in the writing transaction (migration 0008): exact list totals. */
export const invoiceCounts = pgTable('invoice_counts', {
  resellerId: integer('reseller_id').primaryKey(),
  n: bigint('n', { mode: 'number' }).notNull(),
});

/**
 * Deltas of invoices per (reseller, status), appended by triggers in the writing transaction and
 * folded by the billing service (migration 0012, services/billing/invoice-status-counts.ts): exact
 * status list totals without a row that payers would wait on.
 */
export const invoiceStatusCounts = pgTable(
  'invoice_status_counts',
  {
    resellerId: integer('reseller_id').notNull(),
    status: text('status').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [index('invoice_status_counts_idx').on(t.status, t.resellerId)],
);

/**
 * One row: bumped at COMMIT by every write that can change which invoices a list holds (migrations
 * 0010 and 0012's deferred triggers), so a page kept between requests knows when it is stale.
 */
export const invoiceListGeneration = pgTable(
  'invoice_list_generation',
  {
    one: boolean('one').primaryKey().default(true),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [check('invoice_list_generation_one_check', sql`${t.one}`)],
);

/**
 * What each invoice_list_generation bump changed (migration 0032): every version of an invoice
 * that a transaction inserted, deleted or moved between lists, as (reseller, issue date,
 * search_text), or one `every` row for a TRUNCATE or a transaction of many rows. A page kept at an
 * older generation is still the page when no row logged since matches its filter
 * (services/billing/list-page-cache.ts). Pruned by the billing service.
 */
export const invoiceListChanges = pgTable(
  'invoice_list_changes',
  {
    generation: bigint('generation', { mode: 'number' }).notNull(),
    every: boolean('every').notNull().default(false),
    resellerId: integer('reseller_id'),
    issueDate: date('issue_date'),
    searchText: text('search_text'),
    /** The written invoice (null on an `every` row) and whether this is its new version (migration 0039). */
    invoiceId: integer('invoice_id'),
    added: boolean('added'),
  },
  (t) => [index('invoice_list_changes_generation_idx').on(t.generation)],
);

/**
 * Each invoice under every reseller on its reseller's path, itself included, kept by triggers in the
 * writing transaction (migration 0014): a reseller tree's list page is one range of the primary key.
 */
export const invoiceTree = pgTable(
  'invoice_tree',
  {
    ancestorId: integer('ancestor_id').notNull(),
    invoiceId: integer('invoice_id').notNull(),
  },
  (t) => [primaryKey({ name: 'invoice_tree_pkey', columns: [t.ancestorId, t.invoiceId] })],
);

/**
 * How many invoice_tree rows each reseller's tree holds per block of 4,096 invoice ids (`invoice_id
 * >> 12`), this table plus the deltas below (migration 0041): a tree's deep page starts at its block
 * instead of skipping every entry before it. Folded from the deltas by the billing service
 * (services/billing/tree-block-counts.ts); writers never lock these rows.
 */
export const invoiceTreeBlocks = pgTable(
  'invoice_tree_blocks',
  {
    ancestorId: integer('ancestor_id').notNull(),
    block: integer('block').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [primaryKey({ name: 'invoice_tree_blocks_pkey', columns: [t.ancestorId, t.block] })],
);

/** Signed counts appended by triggers on invoice_tree in the writing transaction, until folded. */
export const invoiceTreeBlockDeltas = pgTable(
  'invoice_tree_block_deltas',
  {
    ancestorId: integer('ancestor_id').notNull(),
    block: integer('block').notNull(),
    n: integer('n').notNull(),
  },
  (t) => [index('invoice_tree_block_deltas_idx').on(t.ancestorId, t.block)],
);

/** Moves when a reseller is created, deleted or given another path (migration 0013): scopes carry it. */
export const resellerTreeGeneration = pgTable(
  'reseller_tree_generation',
  {
    one: boolean('one').primaryKey().default(true),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [check('reseller_tree_generation_one_check', sql`${t.one}`)],
);

/** Rendered invoice PDFs, keyed by a hash of everything the page shows (services/billing/pdf-cache.ts). */
export const pdfCache = pgTable(
  'pdf_cache',
  {
    key: text('key').primaryKey(),
    invoiceId: integer('invoice_id').notNull(),
    paper: text('paper').notNull(),
    pdf: bytea('pdf').notNull(),
    size: integer('size').notNull(),
    createdAt: createdAt(),
    usedAt: timestamp('used_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Named as migration 0008 (PostgreSQL's default) named it.
    foreignKey({ name: 'pdf_cache_invoice_id_fkey', columns: [t.invoiceId], foreignColumns: [invoices.id] }).onDelete(
      'cascade',
    ),
    index('pdf_cache_invoice_idx').on(t.invoiceId, t.paper),
    index('pdf_cache_used_idx').on(t.usedAt),
  ],
);

export const settings = pgTable('settings', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: updatedAt(),
});

export const bulkJobs = pgTable('bulk_jobs', {
  id: serial('id').primaryKey(),
  managerId: integer('manager_id'),
  action: text('action').notNull(),
  ids: jsonb('ids').$type<number[]>().notNull(),
  payload: jsonb('payload').notNull().default({}),
  status: text('status').notNull().default('running'),
  total: integer('total').notNull(),
  processed: integer('processed').notNull().default(0),
  succeeded: jsonb('succeeded').$type<number[]>().notNull().default([]),
  failed: jsonb('failed').$type<{ id: number; reason: string }[]>().notNull().default([]),
  createdAt: createdAt(),
  finishedAt: timestamp('finished_at', { withTimezone: true }),
});

/** Router side effects written in the same transaction as the change; a relay publishes them. */
export const outbox = pgTable(
  'outbox',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    event: text('event').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: createdAt(),
    publishedAt: timestamp('published_at', { withTimezone: true }),
    attempts: integer('attempts').notNull().default(0),
  },
  (t) => [
    index('outbox_unpublished_idx')
      .on(t.id)
      .where(sql`${t.publishedAt} is null`),
    index('outbox_published_idx')
      .on(t.publishedAt)
      .where(sql`${t.publishedAt} is not null`),
  ],
);

/** Events network-access has already acted on, so a redelivered outbox event is a no-op. */
export const processedEvents = pgTable('processed_events', {
  eventId: bigint('event_id', { mode: 'number' }).primaryKey(),
  processedAt: timestamp('processed_at', { withTimezone: true }).notNull().defaultNow(),
});

/** One per router action: an outbox event (event_id) or a direct request; what happened, per session. */
export const coaOutcomes = pgTable(
  'coa_outcomes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    eventId: bigint('event_id', { mode: 'number' }),
    /** `event` (outbox) or `request` (POST /api/subscribers/:id/disconnect). */
    source: text('source').notNull(),
    /** `disconnect` or `rate_limit`. */
    action: text('action').notNull(),
    subscriberId: integer('subscriber_id'),
    username: text('username').notNull(),
    reason: text('reason'),
    /** disconnected, applied, offline, rejected, kicked or failed (services/network-access/coa/outcome.ts). */
    outcome: text('outcome').notNull(),
    sessions: jsonb('sessions').$type<Record<string, unknown>[]>().notNull().default([]),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('coa_outcomes_event_uq')
      .on(t.eventId)
      .where(sql`${t.eventId} is not null`),
    index('coa_outcomes_subscriber_idx').on(t.subscriberId, t.createdAt),
  ],
);

/**
 * The audit trail: one row per write, in the write's transaction; no route changes or deletes one.
 * Who: `actor_type` manager, api_key (with `api_key_id` and its manager) or system; from `ip`;
 * `reseller_id` is the tree the target belongs to, for a reseller's reads (docs/security.md).
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    managerId: integer('manager_id'),
    action: text('action').notNull(),
    entity: text('entity').notNull(),
    entityId: integer('entity_id'),
    details: jsonb('details').notNull().default({}),
    actorType: text('actor_type').notNull().default('manager'),
    apiKeyId: integer('api_key_id'),
    /** The subscriber who acted through self-care (actor_type `subscriber`, docs/self-care.md). */
    actorSubscriberId: integer('actor_subscriber_id'),
    ip: text('ip'),
    resellerId: integer('reseller_id'),
    createdAt: createdAt(),
  },
  (t) => [index('audit_log_entity_idx').on(t.entity, t.entityId), index('audit_log_created_idx').on(t.createdAt)],
);

// ---------------------------------------------------------------- FreeRADIUS (its own names)

export const radcheck = pgTable(
  'radcheck',
  {
    id: serial('id').primaryKey(),
    username: text('username').notNull().default(''),
    attribute: text('attribute').notNull().default(''),
    op: varchar('op', { length: 2 }).notNull().default('=='),
    value: text('value').notNull().default(''),
  },
  (t) => [index('radcheck_username').on(t.username, t.attribute)],
);

export const radreply = pgTable(
  'radreply',
  {
    id: serial('id').primaryKey(),
    username: text('username').notNull().default(''),
    attribute: text('attribute').notNull().default(''),
    op: varchar('op', { length: 2 }).notNull().default('='),
    value: text('value').notNull().default(''),
  },
  (t) => [index('radreply_username').on(t.username, t.attribute)],
);

export const radgroupcheck = pgTable(
  'radgroupcheck',
  {
    id: serial('id').primaryKey(),
    groupname: text('groupname').notNull().default(''),
    attribute: text('attribute').notNull().default(''),
    op: varchar('op', { length: 2 }).notNull().default('=='),
    value: text('value').notNull().default(''),
  },
  (t) => [index('radgroupcheck_groupname').on(t.groupname, t.attribute)],
);

export const radgroupreply = pgTable(
  'radgroupreply',
  {
    id: serial('id').primaryKey(),
    groupname: text('groupname').notNull().default(''),
    attribute: text('attribute').notNull().default(''),
    op: varchar('op', { length: 2 }).notNull().default('='),
    value: text('value').notNull().default(''),
  },
  (t) => [index('radgroupreply_groupname').on(t.groupname, t.attribute)],
);

export const radusergroup = pgTable(
  'radusergroup',
  {
    id: serial('id').primaryKey(),
    username: text('username').notNull().default(''),
    groupname: text('groupname').notNull().default(''),
    priority: integer('priority').notNull().default(0),
  },
  (t) => [index('radusergroup_username').on(t.username)],
);

export const radacct = pgTable(
  'radacct',
  {
    radacctid: bigserial('radacctid', { mode: 'number' }).primaryKey(),
    acctsessionid: text('acctsessionid').notNull(),
    acctuniqueid: text('acctuniqueid').notNull(),
    username: text('username'),
    realm: text('realm'),
    nasipaddress: inet('nasipaddress').notNull(),
    nasportid: text('nasportid'),
    nasporttype: text('nasporttype'),
    acctstarttime: timestamp('acctstarttime', { withTimezone: true }),
    acctupdatetime: timestamp('acctupdatetime', { withTimezone: true }),
    acctstoptime: timestamp('acctstoptime', { withTimezone: true }),
    acctinterval: bigint('acctinterval', { mode: 'number' }),
    acctsessiontime: bigint('acctsessiontime', { mode: 'number' }),
    acctauthentic: text('acctauthentic'),
    connectinfoStart: text('connectinfo_start'),
    connectinfoStop: text('connectinfo_stop'),
    acctinputoctets: bigint('acctinputoctets', { mode: 'number' }),
    acctoutputoctets: bigint('acctoutputoctets', { mode: 'number' }),
    calledstationid: text('calledstationid'),
    callingstationid: text('callingstationid'),
    acctterminatecause: text('acctterminatecause'),
    servicetype: text('servicetype'),
    framedprotocol: text('framedprotocol'),
    framedipaddress: inet('framedipaddress'),
    framedipv6address: inet('framedipv6address'),
    framedipv6prefix: inet('framedipv6prefix'),
    framedinterfaceid: text('framedinterfaceid'),
    delegatedipv6prefix: inet('delegatedipv6prefix'),
    class: text('class'),
  },
  (t) => [
    uniqueIndex('radacct_acctuniqueid').on(t.acctuniqueid),
    index('radacct_active_session_idx')
      .on(t.username)
      .where(sql`${t.acctstoptime} is null`),
    // The captive portal's lookup of a client address (migration 0016).
    index('radacct_open_framedip_idx')
      .on(t.framedipaddress)
      .where(sql`${t.acctstoptime} is null`),
    // Open sessions by NAS (Accounting-On/Off's bulk close, reconciliation with the router) and in
    // radacctid order (the stale-session sweep walks them all): both stay the size of the online set.
    // Nothing here indexes acctupdatetime or the octets, so an Interim-Update can be a HOT update.
    index('radacct_open_nas_idx')
      .on(t.nasipaddress)
      .where(sql`${t.acctstoptime} is null`),
    index('radacct_open_id_idx')
      .on(t.radacctid)
      .where(sql`${t.acctstoptime} is null`),
    index('radacct_username_start_idx').on(t.username, t.acctstarttime),
    index('radacct_start_idx').on(t.acctstarttime),
    // GET /api/sessions' default order (newest first) reads the online set in order and stops at a page.
    index('radacct_open_start_idx')
      .on(t.acctstarttime)
      .where(sql`${t.acctstoptime} is null`),
  ],
);

export const radpostauth = pgTable('radpostauth', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  username: text('username').notNull(),
  pass: text('pass'),
  reply: text('reply'),
  calledstationid: text('calledstationid'),
  callingstationid: text('callingstationid'),
  authdate: timestamp('authdate', { withTimezone: true }).notNull().defaultNow(),
  class: text('class'),
});

/** FreeRADIUS's client table, plus the columns network-access needs to reach the router. */
export const nas = pgTable(
  'nas',
  {
    id: serial('id').primaryKey(),
    nasname: text('nasname').notNull(),
    shortname: text('shortname').notNull(),
    type: text('type').notNull().default('other'),
    ports: integer('ports'),
    secret: text('secret').notNull(),
    server: text('server'),
    community: text('community'),
    description: text('description'),
    coaPort: integer('coa_port').notNull().default(3799),
    apiPort: integer('api_port'),
    apiUsername: text('api_username'),
    apiPasswordEnc: text('api_password_enc'),
    /** Vendor profile (shared/vendors/profiles.ts): the attributes FreeRADIUS and CoA give its sessions. */
    vendor: text('vendor').notNull().default('mikrotik'),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('nas_nasname_uq').on(t.nasname),
    check(
      'nas_vendor_ck',
      sql`${t.vendor} in ('mikrotik', 'accel-ppp', 'cisco', 'juniper', 'huawei', 'nokia', 'generic')`,
    ),
  ],
);

// ---------------------------------------------------------------- prepaid cards (issue 27, docs/cards.md)

/** A batch of prepaid cards: each card worth `value` (money card) or one renewal on `service_id` (plan card). */
export const cardBatches = pgTable(
  'card_batches',
  {
    id: serial('id').primaryKey(),
    /** The reseller that sells them (charged for them; its tree alone redeems them); null: the operator's own. */
    resellerId: integer('reseller_id'),
    serviceId: integer('service_id'),
    value: money('value'),
    currency: char('currency', { length: 3 }).notNull(),
    count: integer('count').notNull(),
    prefix: text('prefix').notNull().default(''),
    expiresAt: date('expires_at'),
    /** `active` or `suspended` (every card of it refused until released). */
    status: text('status').notNull().default('active'),
    /** When the reseller pays for its cards: `creation` (the whole batch at once) or `redemption` (each card). */
    chargeMode: text('charge_mode').notNull().default('creation'),
    /** Its cards' PINs in card order, encrypted (AES-256-GCM); a printed card's is blanked, all printed: null. */
    pinsEnc: text('pins_enc'),
    /** When the last of its cards was printed (no PIN is left then: each is shown once). */
    printedAt: timestamp('printed_at', { withTimezone: true }),
    /** The card-number ranges printed so far, each with its time; their PINs are erased from `pins_enc`. */
    printedRanges: jsonb('printed_ranges').$type<{ from: number; to: number; at: string }[]>().notNull().default([]),
    createdBy: integer('created_by'),
    createdAt: createdAt(),
  },
  (t) => [
    index('card_batches_reseller_idx').on(t.resellerId),
    check('card_batches_kind_ck', sql`(${t.value} is null) <> (${t.serviceId} is null)`),
  ],
);

export const cards = pgTable(
  'cards',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    batchId: integer('batch_id').notNull(),
    serial: text('serial').notNull(),
    /** HMAC-SHA256 of the PIN under a key derived from ENCRYPTION_KEY (hex): redeem looks it up. */
    pinHash: text('pin_hash').notNull(),
    /** `active`, `suspended` or `used`. */
    status: text('status').notNull().default('active'),
    usedAt: timestamp('used_at', { withTimezone: true }),
    usedBySubscriberId: integer('used_by_subscriber_id'),
    transactionId: bigint('transaction_id', { mode: 'number' }),
  },
  (t) => [
    uniqueIndex('cards_serial_uq').on(t.serial),
    uniqueIndex('cards_pin_hash_uq').on(t.pinHash),
    index('cards_batch_idx').on(t.batchId, t.id),
    // The dashboard's cards redeemed this month (migration 0056 adds INCLUDE (batch_id): index-only).
    index('cards_used_idx')
      .on(t.usedAt)
      .where(sql`${t.usedAt} is not null`),
  ],
);

/** Every redemption try, failed ones included: the attempt limits count these. */
export const cardRedeemAttempts = pgTable(
  'card_redeem_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    subscriberId: integer('subscriber_id'),
    address: text('address'),
    ok: boolean('ok').notNull(),
    cardId: bigint('card_id', { mode: 'number' }),
    /** Why it failed (the failure's message), null on success. */
    reason: text('reason'),
    /** Operator (manager id) or null: the subscriber in the portal. */
    managerId: integer('manager_id'),
    /** Set when a manager lifts a lockout: the failure no longer counts. */
    clearedAt: timestamp('cleared_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    // The attempt limits count failures that still count: partial, so successes (most rows) cost nothing.
    index('card_redeem_attempts_subscriber_idx')
      .on(t.subscriberId, t.createdAt)
      .where(sql`not ${t.ok} and ${t.clearedAt} is null`),
    index('card_redeem_attempts_address_idx')
      .on(t.address, t.createdAt)
      .where(sql`not ${t.ok} and ${t.clearedAt} is null`),
  ],
);

// ---------------------------------------------------------------- online payments (issue 27, docs/payments.md)

/** One checkout at a payment provider: what it is for, what it came to (reconciliation: GET /api/payments/online). */
export const onlineCheckouts = pgTable(
  'online_checkouts',
  {
    id: serial('id').primaryKey(),
    provider: text('provider').notNull(),
    /** The provider's id of the checkout (Stripe: `cs_...`); null until the provider answered. */
    providerSessionId: text('provider_session_id'),
    /** `invoice` (the invoice's balance) or `renewal` (the subscriber's renewal price, from the portal). */
    purpose: text('purpose').notNull(),
    invoiceId: integer('invoice_id'),
    subscriberId: integer('subscriber_id').notNull(),
    resellerId: integer('reseller_id').notNull(),
    amount: money('amount').notNull(),
    currency: char('currency', { length: 3 }).notNull(),
    /**
     * `open`; `paid`; `underpaid` (less than asked arrived: booked as received, no renewal);
     * `mismatch` (another currency arrived: nothing booked, the operator decides); `expired`; or
     * `failed` (the provider refused to make it).
     */
    status: text('status').notNull().default('open'),
    url: text('url'),
    /** The return page's address (`/api/payments/return/:ref`): unguessable, unlike the id. */
    returnRef: text('return_ref').notNull(),
    /** The provider's event that completed it and its payment reference (Stripe: `evt_...`, `pi_...`). */
    providerEventId: text('provider_event_id'),
    providerReference: text('provider_reference'),
    /** Minor units the payment put on the invoice, and into the wallet (an amount that no longer fitted). */
    appliedAmount: money('applied_amount'),
    walletAmount: money('wallet_amount'),
    note: text('note'),
    /**
     * A renewal checkout paid whole whose renewal is not yet made: set with the payment, cleared once
     * the renewal is made or cannot be (payments' retry sweep, docs/payments.md).
     */
    renewalDue: boolean('renewal_due').notNull().default(false),
    /** The last try that failed for a reason that may pass: the sweep waits RETRY_BACKOFF before the next. */
    renewalTriedAt: timestamp('renewal_tried_at', { withTimezone: true }),
    createdAt: createdAt(),
    completedAt: timestamp('completed_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('online_checkouts_session_uq').on(t.provider, t.providerSessionId),
    index('online_checkouts_renewal_due_idx')
      .on(t.completedAt)
      .where(sql`renewal_due`),
    uniqueIndex('online_checkouts_return_ref_uq').on(t.returnRef),
    index('online_checkouts_created_idx').on(t.createdAt),
    index('online_checkouts_invoice_idx').on(t.invoiceId),
  ],
);

/**
 * Provider events already acted on (the webhook's exactly-once key) and what became of each: the
 * operator's list of payments that matched no checkout or not what it asked (GET /api/payments/events).
 */
export const paymentEvents = pgTable(
  'payment_events',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    /** The checkout whose provider session the event is for; null when none is. */
    checkoutId: integer('checkout_id'),
    type: text('type').notNull(),
    /** The provider's session the event is for, and what it says was paid (minor units). */
    sessionId: text('session_id'),
    amount: money('amount'),
    currency: char('currency', { length: 3 }),
    /** The webhook's answer (`paid`, `underpaid`, `mismatch`, `unmatched`...); null before migration 0044. */
    outcome: text('outcome'),
    note: text('note'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.provider, t.eventId] }),
    index('payment_events_outcome_idx').on(t.outcome, t.receivedAt),
  ],
);

// ---------------------------------------------------------------- outgoing webhooks (issue 28, docs/webhooks.md)

/** An endpoint that receives signed POSTs of the events it names; disabled after a run of failures. */
export const webhooks = pgTable('webhooks', {
  id: serial('id').primaryKey(),
  url: text('url').notNull(),
  description: text('description'),
  events: text('events').array().notNull(),
  /** The signing secret, encrypted (shared/auth/secrets.ts): shown once, at creation. */
  secretEnc: text('secret_enc').notNull(),
  enabled: boolean('enabled').notNull().default(true),
  /** Why the delivery worker disabled it (null when enabled, or disabled by hand). */
  disabledReason: text('disabled_reason'),
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
  /** Failed attempts since the last success, of any delivery: the run that disables it. */
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  createdBy: integer('created_by'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/**
 * One event for one endpoint, written by the triggers of migration 0026 in the transaction of the
 * change it reports. `event_id` is the event's (the same for every endpoint); `payload` is the
 * event's data as stored (minor units), turned into the body at each attempt.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    webhookId: integer('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: uuid('event_id').notNull(),
    event: text('event').notNull(),
    payload: jsonb('payload').notNull(),
    /** `pending` (due at next_attempt_at), `succeeded` or `failed` (its day ran out). */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** When the worker may take it next; a taken row is leased by moving this past the attempt's timeout. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }).notNull().defaultNow(),
    lastStatusCode: integer('last_status_code'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
  },
  (t) => [
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.id),
  ],
);

/** Each attempt of a delivery: when, the answer's status (null: no answer) or the error, how long. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: bigint('delivery_id', { mode: 'number' })
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    /** `auto` (the worker's schedule) or `manual` (redeliver). */
    trigger: text('trigger').notNull(),
    statusCode: integer('status_code'),
    error: text('error'),
    /** The start of the answer's body (at most 1,000 characters), for the operator. */
    responseBody: text('response_body'),
    durationMs: integer('duration_ms').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.id)],
);
