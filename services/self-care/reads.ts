/**
 * What a subscriber reads of its own account (docs/self-care.md). Every query is bound to the
 * signed-in subscriber's id, the only subscriber id these functions take: no request field can
 * name another subscriber, and a record of someone else's (an invoice by id) is simply not found.
 */
import { sql } from 'drizzle-orm';
import { db, pgPool } from '../../shared/db/client';
import type { BlockedReason } from '../../shared/domain/access';
import { addDays, todayIso } from '../../shared/domain/subscriber';
import { fail } from '../../shared/failures';
import { fromMinor, withTax } from '../../shared/money';
import { cachedSettings } from '../../shared/settings';

const GB = 1024 ** 3;

/**
 * The reads every page of /my makes (account, usage, invoices) are prepared statements: planned
 * once per connection rather than on every request (docs/self-care.md, Speed).
 */
async function prepared<T>(name: string, text: string, values: unknown[]): Promise<T[]> {
  return (await pgPool().query({ name: `self_care_${name}`, text, values })).rows as T[];
}

const num = (v: unknown): number => Number(v);
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

type AccountRow = {
  username: string;
  full_name: string | null;
  phone: string | null;
  status: string;
  expiry_date: string;
  blocked_reason: BlockedReason | null;
  wallet_balance: string;
  auto_renew: boolean;
  plan_id: number;
  plan_name: string;
  renewal_price: string;
  plan_currency: string;
  duration_days: number;
};

/** Days from today to the expiry date (negative once expired). */
function daysLeft(expiry: string, today: string): number {
  return Math.round((Date.parse(`${expiry}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000);
}

export async function account(subscriberId: number) {
  const [r] = await prepared<AccountRow>(
    'account',
    `select s.username, s.full_name, s.phone, s.status, s.expiry_date::text as expiry_date, s.blocked_reason,
            s.wallet_balance, s.auto_renew, p.id as plan_id, p.name as plan_name, p.currency as plan_currency,
            p.duration_days,
            case when s.override_price and s.price is not null then s.price else p.price end as renewal_price
       from subscribers s join services p on p.id = s.service_id
      where s.id = $1 and s.deleted_at is null`,
    [subscriberId],
  );
  if (!r) throw fail('subscriberNotFound');
  const s = await cachedSettings([
    'currency',
    'default_tax_rate',
    'operator_name',
    'operator_phone',
    'operator_email',
    'operator_address',
    'how_to_pay',
    'language',
  ]);
  const today = todayIso();
  const left = daysLeft(r.expiry_date, today);
  return {
    id: subscriberId,
    username: r.username,
    full_name: r.full_name,
    phone: r.phone,
    status: r.status,
    plan: {
      id: num(r.plan_id),
      name: r.plan_name,
      price: fromMinor(num(r.renewal_price), r.plan_currency),
      // What a renewal's invoice asks (the price plus the default tax): the wallet must hold it.
      renewal_total: fromMinor(withTax(num(r.renewal_price), s.default_tax_rate), r.plan_currency),
      currency: r.plan_currency,
      duration_days: num(r.duration_days),
    },
    expiry_date: r.expiry_date,
    days_left: Math.max(0, left),
    // Until the sweep has caught up, a past expiry date already means expired (as the captive portal says).
    blocked_reason: r.blocked_reason ?? (left < 0 ? 'expired' : null),
    wallet_balance: fromMinor(num(r.wallet_balance), s.currency),
    wallet_currency: s.currency,
    auto_renew: r.auto_renew,
    operator: {
      name: s.operator_name,
      phone: s.operator_phone,
      email: s.operator_email,
      address: s.operator_address,
      how_to_pay: s.how_to_pay,
      language: s.language,
    },
  };
}

type UsageRow = {
  username: string;
  daily_used: string;
  monthly_used: string;
  extra: string;
  fup_level: number;
  daily_gb: string | null;
  monthly_gb: string | null;
  rate_limit: string | null;
  fup_tiers: { level: number; threshold_gb: number; rate_limit: string }[];
};

const quotaBytes = (gb: string | null, extra = 0) => (gb === null ? null : Math.round(Number(gb) * GB) + extra);

/** The sessions' columns /api/my/usage shows. */
const SESSION_COLUMNS = `acctstarttime, acctstoptime, host(framedipaddress) as framedipaddress, callingstationid,
  acctinputoctets, acctoutputoctets, acctterminatecause`;
const USERNAME = `(select username from subscribers where id = $1 and deleted_at is null)`;
/** Sessions under the name before this are an earlier holder's (shared/access/session-owner.ts). */
const SINCE = `(select username_since from subscribers where id = $1)`;

type SessionRow = {
  acctstarttime: string | null;
  acctstoptime: string | null;
  framedipaddress: string | null;
  callingstationid: string | null;
  acctinputoctets: string | null;
  acctoutputoctets: string | null;
  acctterminatecause: string | null;
};

export async function usage(subscriberId: number) {
  const since = addDays(todayIso(), -29);
  // Three statements at once, none waiting for another's answer. The last sessions are the newest
  // 11 by start, those without a start time after them: each half reads at most 11 rows of
  // radacct_username_start_idx however long the history (one `order by ... nulls last` over the
  // whole history fetched and sorted every session the subscriber ever had).
  const [[r], days, sessions] = await Promise.all([
    prepared<UsageRow>(
      'usage',
      `select s.username, s.daily_quota_used as daily_used, s.monthly_quota_used as monthly_used,
              s.extra_quota_bytes as extra, s.fup_level,
              coalesce(s.daily_quota_gb, p.daily_quota_gb) as daily_gb,
              coalesce(s.monthly_quota_gb, p.monthly_quota_gb) as monthly_gb, p.rate_limit, p.fup_tiers
         from subscribers s join services p on p.id = s.service_id
        where s.id = $1 and s.deleted_at is null`,
      [subscriberId],
    ),
    prepared<{ date: string; download_bytes: string; upload_bytes: string }>(
      'daily',
      `select date::text as date, download_bytes, upload_bytes from daily_usage
        where subscriber_id = $1 and date >= $2::date order by date`,
      [subscriberId, since],
    ),
    prepared<SessionRow>(
      'last_sessions',
      `select * from (
         (select ${SESSION_COLUMNS} from radacct
           where username = ${USERNAME} and acctstarttime is not null
             and (${SINCE} is null or acctstarttime >= ${SINCE}) order by acctstarttime desc limit 11)
         union all
         (select ${SESSION_COLUMNS} from radacct
           where username = ${USERNAME} and acctstarttime is null and ${SINCE} is null limit 11)
       ) last order by acctstarttime desc nulls last limit 11`,
      [subscriberId],
    ),
  ]);
  if (!r) throw fail('subscriberNotFound');
  const tier = r.fup_tiers.find((t) => t.level === r.fup_level) ?? null;
  const session = (x: SessionRow) => ({
    started_at: iso(x.acctstarttime),
    stopped_at: iso(x.acctstoptime),
    ip_address: x.framedipaddress,
    mac_address: x.callingstationid,
    upload_bytes: num(x.acctinputoctets ?? 0),
    download_bytes: num(x.acctoutputoctets ?? 0),
    terminate_cause: x.acctterminatecause,
  });
  const live = sessions.find((x) => x.acctstoptime === null);
  return {
    today: { used_bytes: num(r.daily_used), quota_bytes: quotaBytes(r.daily_gb) },
    month: {
      used_bytes: num(r.monthly_used),
      quota_bytes: quotaBytes(r.monthly_gb, num(r.extra)),
      extra_bytes: num(r.extra),
    },
    fup: { level: r.fup_level, rate_limit: tier?.rate_limit ?? r.rate_limit, tiers: r.fup_tiers.length },
    daily: days.map((d) => ({
      date: d.date,
      download_bytes: num(d.download_bytes),
      upload_bytes: num(d.upload_bytes),
    })),
    session: live
      ? {
          online: true,
          ip_address: live.framedipaddress,
          mac_address: live.callingstationid,
          since: iso(live.acctstarttime),
        }
      : { online: false, ip_address: null, mac_address: null, since: null },
    last_sessions: sessions
      .filter((x) => x !== live)
      .slice(0, 10)
      .map(session),
  };
}

type InvoiceRow = {
  id: number;
  invoice_number: string;
  kind: string;
  status: string;
  amount: string;
  tax_amount: string;
  total: string;
  paid_amount: string;
  currency: string;
  issue_date: string;
  due_date: string;
  paid_at: string | null;
};

const INVOICE_COLUMNS = `id, invoice_number, kind, status, amount, tax_amount, total, paid_amount, currency,
  issue_date::text as issue_date, due_date::text as due_date, paid_at`;

function invoiceView(r: InvoiceRow) {
  const money = (v: string) => fromMinor(num(v), r.currency);
  return {
    id: num(r.id),
    invoice_number: r.invoice_number,
    kind: r.kind,
    status: r.status,
    amount: money(r.amount),
    tax_amount: money(r.tax_amount),
    total: money(r.total),
    paid_amount: money(r.paid_amount),
    balance: fromMinor(num(r.total) - num(r.paid_amount), r.currency),
    currency: r.currency,
    issue_date: r.issue_date,
    due_date: r.due_date,
    paid_at: iso(r.paid_at),
  };
}

export interface Page {
  page: number;
  limit: number;
}

export async function invoiceList(subscriberId: number, p: Page & { status?: string }) {
  // A status or none ($2 null): one prepared statement each, the list and its count at once.
  const values = [subscriberId, p.status ?? null];
  const [list, [count]] = await Promise.all([
    prepared<InvoiceRow>(
      'invoices',
      `select ${INVOICE_COLUMNS} from invoices where subscriber_id = $1 and ($2::text is null or status = $2)
        order by issue_date desc, id desc limit $3 offset $4`,
      [...values, p.limit, (p.page - 1) * p.limit],
    ),
    prepared<{ n: string }>(
      'invoice_count',
      `select count(*) as n from invoices where subscriber_id = $1 and ($2::text is null or status = $2)`,
      values,
    ),
  ]);
  return { data: list.map(invoiceView), pagination: { ...p, total: num(count.n) } };
}

/** One of the subscriber's invoices, or 404 whether it is missing or someone else's. */
export async function ownInvoice(subscriberId: number, invoiceId: number) {
  const [row] = await prepared<InvoiceRow>(
    'invoice',
    `select ${INVOICE_COLUMNS} from invoices where id = $1 and subscriber_id = $2`,
    [invoiceId, subscriberId],
  );
  if (!row) throw fail('invoiceNotFound');
  return invoiceView(row);
}

export async function invoiceDetail(subscriberId: number, invoiceId: number) {
  const invoice = await ownInvoice(subscriberId, invoiceId);
  const [items, payments] = await Promise.all([
    db().execute<{ description: string; qty: string; unit_price: string; amount: string }>(sql`
      select description, qty, unit_price, amount from invoice_items where invoice_id = ${invoiceId} order by position`),
    db().execute<{ amount: string; method: string; paid_at: string }>(sql`
      select amount, method, paid_at from invoice_payments where invoice_id = ${invoiceId} order by paid_at, id`),
  ]);
  const money = (v: string) => fromMinor(num(v), invoice.currency);
  return {
    ...invoice,
    items: items.rows.map((i) => ({
      description: i.description,
      qty: Number(i.qty),
      unit_price: money(i.unit_price),
      amount: money(i.amount),
    })),
    payments: payments.rows.map((x) => ({ amount: money(x.amount), method: x.method, paid_at: iso(x.paid_at) })),
  };
}

/** Payments made on the subscriber's invoices, newest first. */
export async function paymentHistory(subscriberId: number, p: Page) {
  const [list, count] = await Promise.all([
    db().execute<{
      invoice_id: number;
      invoice_number: string;
      amount: string;
      currency: string;
      method: string;
      paid_at: string;
    }>(sql`
      select i.id as invoice_id, i.invoice_number, ip.amount, i.currency, ip.method, ip.paid_at
        from invoice_payments ip join invoices i on i.id = ip.invoice_id
       where i.subscriber_id = ${subscriberId}
       order by ip.paid_at desc, ip.id desc limit ${p.limit} offset ${(p.page - 1) * p.limit}`),
    db().execute<{ n: string }>(sql`
      select count(*) as n from invoice_payments ip join invoices i on i.id = ip.invoice_id
       where i.subscriber_id = ${subscriberId}`),
  ]);
  return {
    data: list.rows.map((x) => ({
      invoice_id: num(x.invoice_id),
      invoice_number: x.invoice_number,
      amount: fromMinor(num(x.amount), x.currency),
      currency: x.currency,
      method: x.method,
      paid_at: iso(x.paid_at),
    })),
    pagination: { ...p, total: num(count.rows[0].n) },
  };
}

/** The reminders and messages sent to the subscriber, newest first. */
export async function notificationList(subscriberId: number, p: Page) {
  const [list, count] = await Promise.all([
    db().execute<{
      id: number;
      kind: string;
      message: string | null;
      status: string;
      created_at: string;
      sent_at: string | null;
    }>(sql`
      select id, kind, message, status, created_at, sent_at from notifications
       where subscriber_id = ${subscriberId} order by id desc limit ${p.limit} offset ${(p.page - 1) * p.limit}`),
    db().execute<{ n: string }>(sql`select count(*) as n from notifications where subscriber_id = ${subscriberId}`),
  ]);
  return {
    data: list.rows.map((n) => ({
      id: num(n.id),
      kind: n.kind,
      message: n.message,
      status: n.status,
      created_at: iso(n.created_at),
      sent_at: iso(n.sent_at),
    })),
    pagination: { ...p, total: num(count.rows[0].n) },
  };
}
