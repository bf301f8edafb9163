"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.nas = exports.radpostauth = exports.radacct = exports.radusergroup = exports.radgroupreply = exports.radgroupcheck = exports.radreply = exports.radcheck = exports.auditLog = exports.coaOutcomes = exports.processedEvents = exports.outbox = exports.bulkJobs = exports.settings = exports.pdfCache = exports.resellerTreeGeneration = exports.invoiceTree = exports.invoiceListGeneration = exports.invoiceStatusCounts = exports.invoiceCounts = exports.deliveries = exports.idempotencyKeys = exports.walletEntries = exports.invoicePayments = exports.transactions = exports.invoiceSequences = exports.invoiceItems = exports.invoices = exports.bandwidthRules = exports.dailyUsage = exports.subscribers = exports.ipPools = exports.resellerServiceLimits = exports.services = exports.tokenBlacklist = exports.managers = exports.resellers = void 0;
/**
 * The one database schema. Money columns are integer minor units (bigint, read as JS numbers:
 * exact up to 2^53, far above any ledger here). FreeRADIUS tables keep FreeRADIUS's own names so a
 * stock rlm_sql_postgresql reads and writes them directly.
 */
const drizzle_orm_1 = require("drizzle-orm");
const pg_core_1 = require("drizzle-orm/pg-core");
const money = (name) => (0, pg_core_1.bigint)(name, { mode: 'number' });
/** Binary column read and written as a Buffer (node-postgres decodes bytea itself). */
const bytea = (0, pg_core_1.customType)({ dataType: () => 'bytea' });
const createdAt = () => (0, pg_core_1.timestamp)('created_at', { withTimezone: true }).notNull().defaultNow();
const updatedAt = () => (0, pg_core_1.timestamp)('updated_at', { withTimezone: true }).notNull().defaultNow();
// ---------------------------------------------------------------- identity and resellers
exports.resellers = (0, pg_core_1.pgTable)('resellers', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    name: (0, pg_core_1.text)('name').notNull(),
    parentId: (0, pg_core_1.integer)('parent_id'),
    /** Materialised path of ids, e.g. `/1/5/9/`: a tree is every row whose path starts with its root's. */
    path: (0, pg_core_1.text)('path').notNull(),
    balance: money('balance').notNull().default(0),
    commissionRate: (0, pg_core_1.numeric)('commission_rate', { precision: 5, scale: 2 }).notNull().default('0'),
    currency: (0, pg_core_1.char)('currency', { length: 3 }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
}, (t) => [
    (0, pg_core_1.index)('resellers_parent_idx').on(t.parentId),
    (0, pg_core_1.index)('resellers_path_idx').using('btree', (0, drizzle_orm_1.sql) `${t.path} text_pattern_ops`),
]);
exports.managers = (0, pg_core_1.pgTable)('managers', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    username: (0, pg_core_1.text)('username').notNull(),
    passwordHash: (0, pg_core_1.text)('password_hash').notNull(),
    role: (0, pg_core_1.text)('role').notNull(),
    resellerId: (0, pg_core_1.integer)('reseller_id'),
    permissions: (0, pg_core_1.jsonb)('permissions').$type().notNull().default([]),
    /** A disabled manager keeps its row (audit, history) but no token of it is accepted. */
    active: (0, pg_core_1.boolean)('active').notNull().default(true),
    /** Raised by a password change; a token whose `tv` claim differs is refused. */
    tokenVersion: (0, pg_core_1.integer)('token_version').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
}, (t) => [(0, pg_core_1.uniqueIndex)('managers_username_uq').on(t.username)]);
exports.tokenBlacklist = (0, pg_core_1.pgTable)('token_blacklist', {
    jti: (0, pg_core_1.text)('jti').primaryKey(),
    expiresAt: (0, pg_core_1.timestamp)('expires_at', { withTimezone: true }).notNull(),
    createdAt: createdAt(),
});
exports.services = (0, pg_core_1.pgTable)('services', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    name: (0, pg_core_1.text)('name').notNull(),
    price: money('price').notNull(),
    currency: (0, pg_core_1.char)('currency', { length: 3 }).notNull(),
    durationDays: (0, pg_core_1.integer)('duration_days').notNull(),
    dailyQuotaGb: (0, pg_core_1.numeric)('daily_quota_gb', { precision: 12, scale: 3 }),
    monthlyQuotaGb: (0, pg_core_1.numeric)('monthly_quota_gb', { precision: 12, scale: 3 }),
    rateLimit: (0, pg_core_1.text)('rate_limit'),
    fupTiers: (0, pg_core_1.jsonb)('fup_tiers').$type().notNull().default([]),
    poolName: (0, pg_core_1.text)('pool_name'),
    macBinding: (0, pg_core_1.boolean)('mac_binding').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: (0, pg_core_1.timestamp)('deleted_at', { withTimezone: true }),
}, (t) => [(0, pg_core_1.uniqueIndex)('services_name_uq').on(t.name).where((0, drizzle_orm_1.sql) `${t.deletedAt} is null`)]);
exports.resellerServiceLimits = (0, pg_core_1.pgTable)('reseller_service_limits', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    resellerId: (0, pg_core_1.integer)('reseller_id').notNull(),
    serviceId: (0, pg_core_1.integer)('service_id').notNull(),
    maxSubscribers: (0, pg_core_1.integer)('max_subscribers'),
    createdAt: createdAt(),
}, (t) => [(0, pg_core_1.uniqueIndex)('reseller_service_limits_uq').on(t.resellerId, t.serviceId)]);
/** Named address pools a static IP can be drawn from (`set_static_ip` with `pool_name`). */
exports.ipPools = (0, pg_core_1.pgTable)('ip_pools', {
    name: (0, pg_core_1.text)('name').primaryKey(),
    rangeStart: (0, pg_core_1.inet)('range_start').notNull(),
    rangeEnd: (0, pg_core_1.inet)('range_end').notNull(),
    createdAt: createdAt(),
});
// ---------------------------------------------------------------- subscribers
exports.subscribers = (0, pg_core_1.pgTable)('subscribers', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    username: (0, pg_core_1.text)('username').notNull(),
    passwordEnc: (0, pg_core_1.text)('password_enc').notNull(),
    fullName: (0, pg_core_1.text)('full_name'),
    phone: (0, pg_core_1.text)('phone'),
    macAddress: (0, pg_core_1.text)('mac_address'),
    serviceId: (0, pg_core_1.integer)('service_id').notNull(),
    resellerId: (0, pg_core_1.integer)('reseller_id').notNull(),
    status: (0, pg_core_1.text)('status').notNull().default('active'),
    staticIp: (0, pg_core_1.inet)('static_ip'),
    region: (0, pg_core_1.text)('region'),
    building: (0, pg_core_1.text)('building'),
    address: (0, pg_core_1.text)('address'),
    nationality: (0, pg_core_1.text)('nationality'),
    country: (0, pg_core_1.text)('country'),
    notes: (0, pg_core_1.text)('notes'),
    price: money('price'),
    overridePrice: (0, pg_core_1.boolean)('override_price').notNull().default(false),
    fupLevel: (0, pg_core_1.smallint)('fup_level').notNull().default(0),
    dailyQuotaUsed: (0, pg_core_1.bigint)('daily_quota_used', { mode: 'number' }).notNull().default(0),
    monthlyQuotaUsed: (0, pg_core_1.bigint)('monthly_quota_used', { mode: 'number' }).notNull().default(0),
    /** Per-subscriber overrides of the plan's quotas (bulk set_daily_quota / set_monthly_quota). */
    dailyQuotaGb: (0, pg_core_1.numeric)('daily_quota_gb', { precision: 12, scale: 3 }),
    monthlyQuotaGb: (0, pg_core_1.numeric)('monthly_quota_gb', { precision: 12, scale: 3 }),
    extraQuotaBytes: (0, pg_core_1.bigint)('extra_quota_bytes', { mode: 'number' }).notNull().default(0),
    /** UTC day the daily counter covers (its month: the monthly counter's); kept by the radacct usage trigger. */
    usageDay: (0, pg_core_1.date)('usage_day'),
    /** Usage moved since the FUP engine last compared it with the plan (set by the radacct usage trigger). */
    fupPending: (0, pg_core_1.boolean)('fup_pending').notNull().default(false),
    walletBalance: money('wallet_balance').notNull().default(0),
    expiryDate: (0, pg_core_1.date)('expiry_date').notNull(),
    lastRenewedOn: (0, pg_core_1.date)('last_renewed_on'),
    /** Kept by a trigger on radacct so list filters need no scan of accounting. */
    isOnline: (0, pg_core_1.boolean)('is_online').notNull().default(false),
    ipAddress: (0, pg_core_1.inet)('ip_address'),
    lastNasId: (0, pg_core_1.integer)('last_nas_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: (0, pg_core_1.timestamp)('deleted_at', { withTimezone: true }),
}, (t) => [
    (0, pg_core_1.uniqueIndex)('subscribers_username_live_uq').on(t.username).where((0, drizzle_orm_1.sql) `${t.deletedAt} is null`),
    // One live subscriber per static address, so two concurrent assignments cannot both win.
    (0, pg_core_1.uniqueIndex)('subscribers_static_ip_live_uq').on(t.staticIp).where((0, drizzle_orm_1.sql) `${t.deletedAt} is null and ${t.staticIp} is not null`),
    (0, pg_core_1.index)('subscribers_reseller_idx').on(t.resellerId),
    (0, pg_core_1.index)('subscribers_service_idx').on(t.serviceId),
    (0, pg_core_1.index)('subscribers_expiry_idx').on(t.expiryDate),
    (0, pg_core_1.index)('subscribers_created_idx').on(t.createdAt),
    (0, pg_core_1.index)('subscribers_last_nas_idx').on(t.lastNasId),
    // The list's default page (live rows, newest first, id as tie-breaker) and its expiry sort read
    // these in order and stop after one page, instead of sorting every match. Online subscribers
    // are a small share, possibly all far down the created_at order, so they get their own index.
    // The trailing reseller_id (and the status index) let the list's capped count of a filter,
    // reseller-scoped or not, be an index-only scan that stops after 10,001 entries.
    (0, pg_core_1.index)('subscribers_live_created_idx').on(t.createdAt, t.id).where((0, drizzle_orm_1.sql) `${t.deletedAt} is null`),
    (0, pg_core_1.index)('subscribers_live_expiry_idx').on(t.expiryDate, t.id, t.resellerId).where((0, drizzle_orm_1.sql) `${t.deletedAt} is null`),
    (0, pg_core_1.index)('subscribers_live_online_created_idx').on(t.createdAt, t.id, t.resellerId).where((0, drizzle_orm_1.sql) `${t.isOnline} and ${t.deletedAt} is null`),
    (0, pg_core_1.index)('subscribers_live_status_idx').on(t.status, t.resellerId).where((0, drizzle_orm_1.sql) `${t.deletedAt} is null`),
    (0, pg_core_1.index)('subscribers_username_trgm').using('gin', (0, drizzle_orm_1.sql) `${t.username} gin_trgm_ops`),
    (0, pg_core_1.index)('subscribers_full_name_trgm').using('gin', (0, drizzle_orm_1.sql) `${t.fullName} gin_trgm_ops`),
    (0, pg_core_1.index)('subscribers_phone_trgm').using('gin', (0, drizzle_orm_1.sql) `${t.phone} gin_trgm_ops`),
    (0, pg_core_1.index)('subscribers_mac_trgm').using('gin', (0, drizzle_orm_1.sql) `${t.macAddress} gin_trgm_ops`),
    (0, pg_core_1.index)('subscribers_fup_pending_idx').on(t.id).where((0, drizzle_orm_1.sql) `${t.fupPending}`),
    (0, pg_core_1.index)('subscribers_usage_day_idx').on(t.usageDay).where((0, drizzle_orm_1.sql) `${t.usageDay} is not null`),
]);
exports.dailyUsage = (0, pg_core_1.pgTable)('daily_usage', {
    subscriberId: (0, pg_core_1.integer)('subscriber_id').notNull(),
    date: (0, pg_core_1.date)('date').notNull(),
    downloadBytes: (0, pg_core_1.bigint)('download_bytes', { mode: 'number' }).notNull().default(0),
    uploadBytes: (0, pg_core_1.bigint)('upload_bytes', { mode: 'number' }).notNull().default(0),
}, (t) => [(0, pg_core_1.primaryKey)({ columns: [t.subscriberId, t.date] })]);
exports.bandwidthRules = (0, pg_core_1.pgTable)('bandwidth_rules', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    subscriberId: (0, pg_core_1.integer)('subscriber_id').notNull(),
    direction: (0, pg_core_1.text)('direction').notNull(),
    rateKbps: (0, pg_core_1.integer)('rate_kbps').notNull(),
    startTime: (0, pg_core_1.text)('start_time'),
    endTime: (0, pg_core_1.text)('end_time'),
    days: (0, pg_core_1.jsonb)('days').$type(),
    priority: (0, pg_core_1.integer)('priority').notNull().default(8),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
}, (t) => [(0, pg_core_1.index)('bandwidth_rules_subscriber_idx').on(t.subscriberId)]);
// ---------------------------------------------------------------- billing
exports.invoices = (0, pg_core_1.pgTable)('invoices', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    invoiceNumber: (0, pg_core_1.text)('invoice_number').notNull(),
    subscriberId: (0, pg_core_1.integer)('subscriber_id').notNull(),
    resellerId: (0, pg_core_1.integer)('reseller_id').notNull(),
    kind: (0, pg_core_1.text)('kind').notNull().default('manual'),
    amount: money('amount').notNull(),
    taxRate: (0, pg_core_1.numeric)('tax_rate', { precision: 5, scale: 2 }).notNull(),
    taxAmount: money('tax_amount').notNull(),
    total: money('total').notNull(),
    paidAmount: money('paid_amount').notNull().default(0),
    status: (0, pg_core_1.text)('status').notNull().default('pending'),
    currency: (0, pg_core_1.char)('currency', { length: 3 }).notNull(),
    issueDate: (0, pg_core_1.date)('issue_date').notNull(),
    dueDate: (0, pg_core_1.date)('due_date').notNull(),
    paidAt: (0, pg_core_1.timestamp)('paid_at', { withTimezone: true }),
    notes: (0, pg_core_1.text)('notes'),
    commissionRate: (0, pg_core_1.numeric)('commission_rate', { precision: 5, scale: 2 }).notNull().default('0'),
    commissionAmount: money('commission_amount').notNull().default(0),
    consolidatedInto: (0, pg_core_1.integer)('consolidated_into'),
    /** Public link: the token is HMAC(key, id, nonce), never stored; its hash is, for the check. */
    publicTokenNonce: (0, pg_core_1.text)('public_token_nonce'),
    publicTokenHash: (0, pg_core_1.text)('public_token_hash'),
    createdBy: (0, pg_core_1.integer)('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
}, (t) => [
    (0, pg_core_1.uniqueIndex)('invoices_number_uq').on(t.invoiceNumber),
    (0, pg_core_1.index)('invoices_subscriber_idx').on(t.subscriberId, t.issueDate, t.id),
    (0, pg_core_1.index)('invoices_reseller_idx').on(t.resellerId, t.id),
    (0, pg_core_1.index)('invoices_status_idx').on(t.status, t.id),
    (0, pg_core_1.index)('invoices_issue_date_idx').on(t.issueDate, t.id),
    // Commissions (migration 0008 adds INCLUDE (status, amount, commission_amount): index-only sums).
    (0, pg_core_1.index)('invoices_commission_idx').on(t.resellerId, t.issueDate),
    (0, pg_core_1.index)('invoices_number_trgm').using('gin', (0, drizzle_orm_1.sql) `${t.invoiceNumber} gin_trgm_ops`),
    // Migration 0009 adds `search_text` (number, username and full name, lower-cased, kept by
    // triggers) and invoices_search_idx (id) INCLUDE (search_text) for broad searches; SQL only.
]);
exports.invoiceItems = (0, pg_core_1.pgTable)('invoice_items', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    invoiceId: (0, pg_core_1.integer)('invoice_id').notNull(),
    position: (0, pg_core_1.integer)('position').notNull(),
    description: (0, pg_core_1.text)('description').notNull(),
    qty: (0, pg_core_1.numeric)('qty', { precision: 14, scale: 3 }).notNull(),
    unitPrice: money('unit_price').notNull(),
    amount: money('amount').notNull(),
}, (t) => [(0, pg_core_1.index)('invoice_items_invoice_idx').on(t.invoiceId, t.position)]);
/** Gap-free numbering: one row per (prefix, year), bumped inside the creating transaction. */
exports.invoiceSequences = (0, pg_core_1.pgTable)('invoice_sequences', {
    prefix: (0, pg_core_1.text)('prefix').notNull(),
    year: (0, pg_core_1.integer)('year').notNull(),
    lastValue: (0, pg_core_1.integer)('last_value').notNull(),
}, (t) => [(0, pg_core_1.primaryKey)({ columns: [t.prefix, t.year] })]);
/** The ledger: every movement of money, the source of revenue figures. */
exports.transactions = (0, pg_core_1.pgTable)('transactions', {
    id: (0, pg_core_1.bigserial)('id', { mode: 'number' }).primaryKey(),
    type: (0, pg_core_1.text)('type').notNull(),
    amount: money('amount').notNull(),
    currency: (0, pg_core_1.char)('currency', { length: 3 }).notNull(),
    subscriberId: (0, pg_core_1.integer)('subscriber_id'),
    username: (0, pg_core_1.text)('username'),
    resellerId: (0, pg_core_1.integer)('reseller_id'),
    invoiceId: (0, pg_core_1.integer)('invoice_id'),
    method: (0, pg_core_1.text)('method'),
    reference: (0, pg_core_1.text)('reference'),
    notes: (0, pg_core_1.text)('notes'),
    createdBy: (0, pg_core_1.integer)('created_by'),
    createdAt: createdAt(),
}, (t) => [
    (0, pg_core_1.index)('transactions_subscriber_idx').on(t.subscriberId),
    (0, pg_core_1.index)('transactions_reseller_idx').on(t.resellerId),
    (0, pg_core_1.index)('transactions_invoice_idx').on(t.invoiceId),
    (0, pg_core_1.index)('transactions_username_idx').on(t.username),
]);
exports.invoicePayments = (0, pg_core_1.pgTable)('invoice_payments', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    invoiceId: (0, pg_core_1.integer)('invoice_id').notNull(),
    transactionId: (0, pg_core_1.bigint)('transaction_id', { mode: 'number' }).notNull(),
    amount: money('amount').notNull(),
    method: (0, pg_core_1.text)('method').notNull(),
    reference: (0, pg_core_1.text)('reference'),
    paidAt: (0, pg_core_1.timestamp)('paid_at', { withTimezone: true }).notNull(),
    notes: (0, pg_core_1.text)('notes'),
    createdBy: (0, pg_core_1.integer)('created_by'),
    createdAt: createdAt(),
}, (t) => [(0, pg_core_1.index)('invoice_payments_invoice_idx').on(t.invoiceId)]);
/** Subscriber prepaid credit; `subscribers.wallet_balance` is the running sum of these rows. */
exports.walletEntries = (0, pg_core_1.pgTable)('wallet_entries', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    subscriberId: (0, pg_core_1.integer)('subscriber_id').notNull(),
    amount: money('amount').notNull(),
    transactionId: (0, pg_core_1.bigint)('transaction_id', { mode: 'number' }),
    reason: (0, pg_core_1.text)('reason').notNull(),
    createdAt: createdAt(),
}, (t) => [(0, pg_core_1.index)('wallet_entries_subscriber_idx').on(t.subscriberId)]);
exports.idempotencyKeys = (0, pg_core_1.pgTable)('idempotency_keys', {
    managerId: (0, pg_core_1.integer)('manager_id').notNull(),
    key: (0, pg_core_1.text)('key').notNull(),
    route: (0, pg_core_1.text)('route').notNull(),
    requestHash: (0, pg_core_1.text)('request_hash').notNull(),
    statusCode: (0, pg_core_1.integer)('status_code'),
    response: (0, pg_core_1.jsonb)('response'),
    createdAt: createdAt(),
}, (t) => [(0, pg_core_1.primaryKey)({ columns: [t.managerId, t.key] })]);
exports.deliveries = (0, pg_core_1.pgTable)('deliveries', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    invoiceId: (0, pg_core_1.integer)('invoice_id'),
    subscriberId: (0, pg_core_1.integer)('subscriber_id'),
    invoiceIds: (0, pg_core_1.jsonb)('invoice_ids').$type(),
    provider: (0, pg_core_1.text)('provider').notNull(),
    phone: (0, pg_core_1.text)('phone').notNull(),
    status: (0, pg_core_1.text)('status').notNull(),
    providerMessageId: (0, pg_core_1.text)('provider_message_id'),
    error: (0, pg_core_1.text)('error'),
    attempts: (0, pg_core_1.integer)('attempts').notNull().default(0),
    createdBy: (0, pg_core_1.integer)('created_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
}, (t) => [(0, pg_core_1.index)('deliveries_invoice_idx').on(t.invoiceId)]);
// ---------------------------------------------------------------- operations
/** Invoices per reseller, kept by triggers in the writing transaction (migration 0008): exact list totals. */
exports.invoiceCounts = (0, pg_core_1.pgTable)('invoice_counts', {
    resellerId: (0, pg_core_1.integer)('reseller_id').primaryKey(),
    n: (0, pg_core_1.bigint)('n', { mode: 'number' }).notNull(),
});
/**
 * Deltas of invoices per (reseller, status), appended by triggers in the writing transaction and
 * folded by the billing service (migration 0012, services/billing/invoice-status-counts.ts): exact
 * status list totals without a row that payers would wait on.
 */
exports.invoiceStatusCounts = (0, pg_core_1.pgTable)('invoice_status_counts', {
    resellerId: (0, pg_core_1.integer)('reseller_id').notNull(),
    status: (0, pg_core_1.text)('status').notNull(),
    n: (0, pg_core_1.bigint)('n', { mode: 'number' }).notNull(),
}, (t) => [(0, pg_core_1.index)('invoice_status_counts_idx').on(t.status, t.resellerId)]);
/**
 * One row: bumped at COMMIT by every write that can change which invoices a list holds (migrations
 * 0010 and 0012's deferred triggers), so a page kept between requests knows when it is stale.
 */
exports.invoiceListGeneration = (0, pg_core_1.pgTable)('invoice_list_generation', {
    one: (0, pg_core_1.boolean)('one').primaryKey().default(true),
    n: (0, pg_core_1.bigint)('n', { mode: 'number' }).notNull(),
});
/**
 * Each invoice under every reseller on its reseller's path, itself included, kept by triggers in the
 * writing transaction (migration 0014): a reseller tree's list page is one range of the primary key.
 */
exports.invoiceTree = (0, pg_core_1.pgTable)('invoice_tree', {
    ancestorId: (0, pg_core_1.integer)('ancestor_id').notNull(),
    invoiceId: (0, pg_core_1.integer)('invoice_id').notNull(),
}, (t) => [(0, pg_core_1.primaryKey)({ columns: [t.ancestorId, t.invoiceId] })]);
/** Moves when a reseller is created, deleted or given another path (migration 0013): scopes carry it. */
exports.resellerTreeGeneration = (0, pg_core_1.pgTable)('reseller_tree_generation', {
    one: (0, pg_core_1.boolean)('one').primaryKey().default(true),
    n: (0, pg_core_1.bigint)('n', { mode: 'number' }).notNull(),
});
/** Rendered invoice PDFs, keyed by a hash of everything the page shows (services/billing/pdf-cache.ts). */
exports.pdfCache = (0, pg_core_1.pgTable)('pdf_cache', {
    key: (0, pg_core_1.text)('key').primaryKey(),
    invoiceId: (0, pg_core_1.integer)('invoice_id').notNull().references(() => exports.invoices.id, { onDelete: 'cascade' }),
    paper: (0, pg_core_1.text)('paper').notNull(),
    pdf: bytea('pdf').notNull(),
    size: (0, pg_core_1.integer)('size').notNull(),
    createdAt: createdAt(),
    usedAt: (0, pg_core_1.timestamp)('used_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [(0, pg_core_1.index)('pdf_cache_invoice_idx').on(t.invoiceId, t.paper), (0, pg_core_1.index)('pdf_cache_used_idx').on(t.usedAt)]);
exports.settings = (0, pg_core_1.pgTable)('settings', {
    key: (0, pg_core_1.text)('key').primaryKey(),
    value: (0, pg_core_1.jsonb)('value').notNull(),
    updatedAt: updatedAt(),
});
exports.bulkJobs = (0, pg_core_1.pgTable)('bulk_jobs', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    managerId: (0, pg_core_1.integer)('manager_id'),
    action: (0, pg_core_1.text)('action').notNull(),
    ids: (0, pg_core_1.jsonb)('ids').$type().notNull(),
    payload: (0, pg_core_1.jsonb)('payload').notNull().default({}),
    status: (0, pg_core_1.text)('status').notNull().default('running'),
    total: (0, pg_core_1.integer)('total').notNull(),
    processed: (0, pg_core_1.integer)('processed').notNull().default(0),
    succeeded: (0, pg_core_1.jsonb)('succeeded').$type().notNull().default([]),
    failed: (0, pg_core_1.jsonb)('failed').$type().notNull().default([]),
    createdAt: createdAt(),
    finishedAt: (0, pg_core_1.timestamp)('finished_at', { withTimezone: true }),
});
/** Router side effects written in the same transaction as the change; a relay publishes them. */
exports.outbox = (0, pg_core_1.pgTable)('outbox', {
    id: (0, pg_core_1.bigserial)('id', { mode: 'number' }).primaryKey(),
    event: (0, pg_core_1.text)('event').notNull(),
    payload: (0, pg_core_1.jsonb)('payload').notNull(),
    createdAt: createdAt(),
    publishedAt: (0, pg_core_1.timestamp)('published_at', { withTimezone: true }),
    attempts: (0, pg_core_1.integer)('attempts').notNull().default(0),
}, (t) => [
    (0, pg_core_1.index)('outbox_unpublished_idx').on(t.id).where((0, drizzle_orm_1.sql) `${t.publishedAt} is null`),
    (0, pg_core_1.index)('outbox_published_idx').on(t.publishedAt).where((0, drizzle_orm_1.sql) `${t.publishedAt} is not null`),
]);
/** Events network-access has already acted on, so a redelivered outbox event is a no-op. */
exports.processedEvents = (0, pg_core_1.pgTable)('processed_events', {
    eventId: (0, pg_core_1.bigint)('event_id', { mode: 'number' }).primaryKey(),
    processedAt: (0, pg_core_1.timestamp)('processed_at', { withTimezone: true }).notNull().defaultNow(),
});
/** One per router action: an outbox event (event_id) or a direct request; what happened, per session. */
exports.coaOutcomes = (0, pg_core_1.pgTable)('coa_outcomes', {
    id: (0, pg_core_1.bigserial)('id', { mode: 'number' }).primaryKey(),
    eventId: (0, pg_core_1.bigint)('event_id', { mode: 'number' }),
    /** `event` (outbox) or `request` (POST /api/subscribers/:id/disconnect). */
    source: (0, pg_core_1.text)('source').notNull(),
    /** `disconnect` or `rate_limit`. */
    action: (0, pg_core_1.text)('action').notNull(),
    subscriberId: (0, pg_core_1.integer)('subscriber_id'),
    username: (0, pg_core_1.text)('username').notNull(),
    reason: (0, pg_core_1.text)('reason'),
    /** disconnected, applied, offline, rejected, kicked or failed (services/network-access/coa/outcome.ts). */
    outcome: (0, pg_core_1.text)('outcome').notNull(),
    sessions: (0, pg_core_1.jsonb)('sessions').$type().notNull().default([]),
    createdAt: createdAt(),
}, (t) => [
    (0, pg_core_1.uniqueIndex)('coa_outcomes_event_uq').on(t.eventId).where((0, drizzle_orm_1.sql) `${t.eventId} is not null`),
    (0, pg_core_1.index)('coa_outcomes_subscriber_idx').on(t.subscriberId, t.createdAt),
]);
exports.auditLog = (0, pg_core_1.pgTable)('audit_log', {
    id: (0, pg_core_1.bigserial)('id', { mode: 'number' }).primaryKey(),
    managerId: (0, pg_core_1.integer)('manager_id'),
    action: (0, pg_core_1.text)('action').notNull(),
    entity: (0, pg_core_1.text)('entity').notNull(),
    entityId: (0, pg_core_1.integer)('entity_id'),
    details: (0, pg_core_1.jsonb)('details').notNull().default({}),
    createdAt: createdAt(),
}, (t) => [(0, pg_core_1.index)('audit_log_entity_idx').on(t.entity, t.entityId)]);
// ---------------------------------------------------------------- FreeRADIUS (its own names)
exports.radcheck = (0, pg_core_1.pgTable)('radcheck', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    username: (0, pg_core_1.text)('username').notNull().default(''),
    attribute: (0, pg_core_1.text)('attribute').notNull().default(''),
    op: (0, pg_core_1.varchar)('op', { length: 2 }).notNull().default('=='),
    value: (0, pg_core_1.text)('value').notNull().default(''),
}, (t) => [(0, pg_core_1.index)('radcheck_username').on(t.username, t.attribute)]);
exports.radreply = (0, pg_core_1.pgTable)('radreply', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    username: (0, pg_core_1.text)('username').notNull().default(''),
    attribute: (0, pg_core_1.text)('attribute').notNull().default(''),
    op: (0, pg_core_1.varchar)('op', { length: 2 }).notNull().default('='),
    value: (0, pg_core_1.text)('value').notNull().default(''),
}, (t) => [(0, pg_core_1.index)('radreply_username').on(t.username, t.attribute)]);
exports.radgroupcheck = (0, pg_core_1.pgTable)('radgroupcheck', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    groupname: (0, pg_core_1.text)('groupname').notNull().default(''),
    attribute: (0, pg_core_1.text)('attribute').notNull().default(''),
    op: (0, pg_core_1.varchar)('op', { length: 2 }).notNull().default('=='),
    value: (0, pg_core_1.text)('value').notNull().default(''),
}, (t) => [(0, pg_core_1.index)('radgroupcheck_groupname').on(t.groupname, t.attribute)]);
exports.radgroupreply = (0, pg_core_1.pgTable)('radgroupreply', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    groupname: (0, pg_core_1.text)('groupname').notNull().default(''),
    attribute: (0, pg_core_1.text)('attribute').notNull().default(''),
    op: (0, pg_core_1.varchar)('op', { length: 2 }).notNull().default('='),
    value: (0, pg_core_1.text)('value').notNull().default(''),
}, (t) => [(0, pg_core_1.index)('radgroupreply_groupname').on(t.groupname, t.attribute)]);
exports.radusergroup = (0, pg_core_1.pgTable)('radusergroup', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    username: (0, pg_core_1.text)('username').notNull().default(''),
    groupname: (0, pg_core_1.text)('groupname').notNull().default(''),
    priority: (0, pg_core_1.integer)('priority').notNull().default(0),
}, (t) => [(0, pg_core_1.index)('radusergroup_username').on(t.username)]);
exports.radacct = (0, pg_core_1.pgTable)('radacct', {
    radacctid: (0, pg_core_1.bigserial)('radacctid', { mode: 'number' }).primaryKey(),
    acctsessionid: (0, pg_core_1.text)('acctsessionid').notNull(),
    acctuniqueid: (0, pg_core_1.text)('acctuniqueid').notNull(),
    username: (0, pg_core_1.text)('username'),
    realm: (0, pg_core_1.text)('realm'),
    nasipaddress: (0, pg_core_1.inet)('nasipaddress').notNull(),
    nasportid: (0, pg_core_1.text)('nasportid'),
    nasporttype: (0, pg_core_1.text)('nasporttype'),
    acctstarttime: (0, pg_core_1.timestamp)('acctstarttime', { withTimezone: true }),
    acctupdatetime: (0, pg_core_1.timestamp)('acctupdatetime', { withTimezone: true }),
    acctstoptime: (0, pg_core_1.timestamp)('acctstoptime', { withTimezone: true }),
    acctinterval: (0, pg_core_1.bigint)('acctinterval', { mode: 'number' }),
    acctsessiontime: (0, pg_core_1.bigint)('acctsessiontime', { mode: 'number' }),
    acctauthentic: (0, pg_core_1.text)('acctauthentic'),
    connectinfoStart: (0, pg_core_1.text)('connectinfo_start'),
    connectinfoStop: (0, pg_core_1.text)('connectinfo_stop'),
    acctinputoctets: (0, pg_core_1.bigint)('acctinputoctets', { mode: 'number' }),
    acctoutputoctets: (0, pg_core_1.bigint)('acctoutputoctets', { mode: 'number' }),
    calledstationid: (0, pg_core_1.text)('calledstationid'),
    callingstationid: (0, pg_core_1.text)('callingstationid'),
    acctterminatecause: (0, pg_core_1.text)('acctterminatecause'),
    servicetype: (0, pg_core_1.text)('servicetype'),
    framedprotocol: (0, pg_core_1.text)('framedprotocol'),
    framedipaddress: (0, pg_core_1.inet)('framedipaddress'),
    framedipv6address: (0, pg_core_1.inet)('framedipv6address'),
    framedipv6prefix: (0, pg_core_1.inet)('framedipv6prefix'),
    framedinterfaceid: (0, pg_core_1.text)('framedinterfaceid'),
    delegatedipv6prefix: (0, pg_core_1.inet)('delegatedipv6prefix'),
    class: (0, pg_core_1.text)('class'),
}, (t) => [
    (0, pg_core_1.uniqueIndex)('radacct_acctuniqueid').on(t.acctuniqueid),
    (0, pg_core_1.index)('radacct_active_session_idx').on(t.username).where((0, drizzle_orm_1.sql) `${t.acctstoptime} is null`),
    (0, pg_core_1.index)('radacct_username_start_idx').on(t.username, t.acctstarttime),
    (0, pg_core_1.index)('radacct_start_idx').on(t.acctstarttime),
    (0, pg_core_1.index)('radacct_nasip_idx').on(t.nasipaddress),
]);
exports.radpostauth = (0, pg_core_1.pgTable)('radpostauth', {
    id: (0, pg_core_1.bigserial)('id', { mode: 'number' }).primaryKey(),
    username: (0, pg_core_1.text)('username').notNull(),
    pass: (0, pg_core_1.text)('pass'),
    reply: (0, pg_core_1.text)('reply'),
    calledstationid: (0, pg_core_1.text)('calledstationid'),
    callingstationid: (0, pg_core_1.text)('callingstationid'),
    authdate: (0, pg_core_1.timestamp)('authdate', { withTimezone: true }).notNull().defaultNow(),
    class: (0, pg_core_1.text)('class'),
});
/** FreeRADIUS's client table, plus the columns network-access needs to reach the router. */
exports.nas = (0, pg_core_1.pgTable)('nas', {
    id: (0, pg_core_1.serial)('id').primaryKey(),
    nasname: (0, pg_core_1.text)('nasname').notNull(),
    shortname: (0, pg_core_1.text)('shortname').notNull(),
    type: (0, pg_core_1.text)('type').notNull().default('other'),
    ports: (0, pg_core_1.integer)('ports'),
    secret: (0, pg_core_1.text)('secret').notNull(),
    server: (0, pg_core_1.text)('server'),
    community: (0, pg_core_1.text)('community'),
    description: (0, pg_core_1.text)('description'),
    coaPort: (0, pg_core_1.integer)('coa_port').notNull().default(3799),
    apiPort: (0, pg_core_1.integer)('api_port'),
    apiUsername: (0, pg_core_1.text)('api_username'),
    apiPasswordEnc: (0, pg_core_1.text)('api_password_enc'),
    createdAt: createdAt(),
}, (t) => [(0, pg_core_1.uniqueIndex)('nas_nasname_uq').on(t.nasname)]);
//# sourceMappingURL=schema.js.map