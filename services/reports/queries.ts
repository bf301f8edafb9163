/**
 * The SQL of the dashboard and the reports. Every money figure is a sum over the ledger
 * (`transactions`, or its rollup `ledger_rollup`, which equals it: migration 0052) or over
 * invoices, cards and wallets as they stand, scoped like the lists (scope.ts). Amounts stay integer
 * minor units here; the use cases turn them into the API's decimals per currency.
 */
import { rollupDays } from '../../shared/db/ledger-rollup';
import { Params, scopeSql, type ReportScope } from './scope';
import { usageCover } from './usage-cover';
import { monthStart, type DayRange, type Grouping } from './periods';

/** Revenue is what subscribers paid on invoices: the ledger's payment rows, every method (docs/reports.md). */
export const REVENUE_TYPE = 'invoice_payment';
/**
 * Value a plan change gave back to the wallet (negative in the ledger): taken off revenue, since
 * the wallet's payments it funds are revenue again, and no cash came in for it.
 */
export const REVERSAL_TYPE = 'plan_change_credit';
const REVENUE_TYPES = `'${REVENUE_TYPE}', '${REVERSAL_TYPE}'`;
/** A revenue row's method; a reversal has none and is keyed by its type. */
const REVENUE_METHOD = `case when l.type = '${REVERSAL_TYPE}' then l.type else l.method end`;
/** Ledger rows that move a reseller's balance: its statement lists exactly these. */
export const BALANCE_TYPES = ['reseller_credit', 'reseller_debit', 'renewal', 'rename_fee', 'refill_fee'] as const;

export interface Sql {
  text: string;
  values: unknown[];
}

/** `[from, to]` days as the half-open instants `[from 00:00 UTC, to + 1 day 00:00 UTC)`. */
function instants(range: DayRange, p: Params): { start: string; end: string } {
  return {
    start: `(${p.add(range.from)}::date::timestamp at time zone 'UTC')`,
    end: `((${p.add(range.to)}::date + 1)::timestamp at time zone 'UTC')`,
  };
}

// ------------------------------------------------------------------ dashboard

/** The scope's live subscribers counted, from subscriber_counts (a row per reseller and expiry day). */
export function subscriberCounts(scope: ReportScope, today: string): Sql {
  const p = new Params();
  const d = p.add(today);
  return {
    text: `select coalesce(sum(n), 0) as total, coalesce(sum(active), 0) as active, coalesce(sum(inactive), 0) as inactive,
             coalesce(sum(n) filter (where day < ${d}::date), 0) as expired,
             coalesce(sum(n) filter (where day >= ${d}::date and day <= ${d}::date + 7), 0) as expiring_7d,
             coalesce(sum(blocked), 0) as blocked, coalesce(sum(online), 0) as online,
             coalesce(sum(wallets), 0) as wallets
        from subscriber_counts where kind = 'x' and ${scopeSql(scope, 'reseller_id', p)}`,
    values: p.values,
  };
}

/**
 * Payments and wallet top-ups per currency and method: today by day; this month and last month at the
 * month grain (a row per key and month instead of one per key and day), this month less any row
 * dated after today.
 */
export function ledgerFigures(scope: ReportScope, today: string, monthFrom: string, lastMonthFrom: string): Sql {
  const p = new Params();
  const t = p.add(today);
  const m = p.add(monthFrom);
  const l = p.add(lastMonthFrom);
  const later = `grain = 'd' and day > ${t}::date`;
  const sign = `case when ${later} then -1 else 1 end`;
  const thisMonth = `(grain = 'm' and day = ${m}::date or ${later})`;
  return {
    text: `select type, currency, method,
             coalesce(sum(incoming + outgoing) filter (where grain = 'd' and day = ${t}::date), 0) as today,
             coalesce(sum(${sign} * (incoming + outgoing)) filter (where ${thisMonth}), 0) as month,
             coalesce(sum(${sign} * n) filter (where ${thisMonth}), 0) as month_count,
             coalesce(sum(incoming + outgoing) filter (where grain = 'm' and day = ${l}::date), 0) as last_month
        from ledger_rollup
       where type in (${REVENUE_TYPES}, 'wallet_credit')
         and ((grain = 'm' and day in (${m}::date, ${l}::date))
              or (grain = 'd' and day >= ${t}::date and day < (${m}::date + interval '1 month')::date))
         and ${scopeSql(scope, 'reseller_id', p)}
       group by type, currency, method`,
    values: p.values,
  };
}

export function invoiceFigures(scope: ReportScope, today: string): Sql {
  const p = new Params();
  const t = p.add(today);
  const overdue = `(status = 'overdue' or due_date < ${t}::date)`;
  return {
    text: `select currency, sum(total - paid_amount) as outstanding,
             coalesce(sum(total - paid_amount) filter (where ${overdue}), 0) as overdue,
             count(*) filter (where ${overdue}) as overdue_count
        from invoices
       where status in ('pending', 'partial', 'overdue') and total > paid_amount and ${scopeSql(scope, 'reseller_id', p)}
       group by currency`,
    values: p.values,
  };
}

/** A card's face value: its batch's value, or its plan's price for a plan card. */
const CARD_VALUE = 'coalesce(b.value, sp.price)';

export function cardFigures(scope: ReportScope, monthFrom: string): Sql {
  const p = new Params();
  const start = `(${p.add(monthFrom)}::date::timestamp at time zone 'UTC')`;
  const inScope = scopeSql(scope, 'b.reseller_id', p);
  return {
    text: `select currency, sum(sold) as sold, sum(redeemed) as redeemed from (
             select b.currency, ${CARD_VALUE} * b.count as sold, 0 as redeemed
               from card_batches b left join services sp on sp.id = b.service_id
              where b.created_at >= ${start} and ${inScope}
             union all
             select b.currency, 0, ${CARD_VALUE}
               from cards c join card_batches b on b.id = c.batch_id left join services sp on sp.id = b.service_id
              where c.used_at >= ${start} and ${inScope}) x
           group by currency`,
    values: p.values,
  };
}

/**
 * Each access server: the scope's subscribers online on it (nas_online, a row per reseller and
 * server), and the age of its newest accounting packet (nas_last_packet, kept by radacct's
 * triggers), shown while it has an open session (radacct_open_nas_idx, one probe per server). A
 * reseller's tree sees only the servers its subscribers are online on: the list of servers is
 * the admin's (GET /api/nas).
 */
export function nasFigures(scope: ReportScope, admin: boolean): Sql {
  const p = new Params();
  return {
    text: `select n.id, n.shortname, n.nasname, coalesce(o.online, 0) as online,
             floor(extract(epoch from now() - l.last_packet))::bigint as last_packet_age_seconds
        from nas n
        left join (select nas_id, sum(n) as online from nas_online
                    where ${scopeSql(scope, 'reseller_id', p)}
                    group by nas_id) o on o.nas_id = n.id
        left join nas_last_packet l on host(l.nasipaddress) = n.nasname
         and exists (select 1 from radacct r where r.nasipaddress = l.nasipaddress and r.acctstoptime is null)
       where ${admin ? 'true' : 'o.online > 0'}
       order by n.id`,
    values: p.values,
  };
}

export function paymentsPerDay(scope: ReportScope, from: string, today: string, currency: string): Sql {
  const p = new Params();
  const f = p.add(from);
  const t = p.add(today);
  return {
    text: `select d::date as day, coalesce(x.amount, 0) as amount, coalesce(x.n, 0) as count
        from generate_series(${f}::date, ${t}::date, interval '1 day') d
        left join (select day, sum(incoming + outgoing) as amount, sum(n) as n from ledger_rollup
                    where grain = 'd' and type in (${REVENUE_TYPES}) and currency = ${p.add(currency)}
                      and day >= ${f}::date and day <= ${t}::date
                      and ${scopeSql(scope, 'reseller_id', p)}
                    group by day) x on x.day = d::date
       order by 1`,
    values: p.values,
  };
}

/**
 * Sessions open at some instant of each of the last 24 hours (UTC hours), from session_hours: those
 * open now, less those that started after the hour, plus those that stopped in it or after. Reads the
 * open count ('-infinity') and the rows of the window per reseller, never the sessions.
 */
export function onlinePerHour(scope: ReportScope): Sql {
  const p = new Params();
  return {
    text: `with hours as (
             select generate_series(date_trunc('hour', now(), 'UTC') - interval '23 hours', date_trunc('hour', now(), 'UTC'), interval '1 hour') as h
           ), counts as (
             select hour, sum(starts) as starts, sum(stops) as stops from session_hours
              where (hour = '-infinity' or hour >= date_trunc('hour', now(), 'UTC') - interval '23 hours')
                and ${scopeSql(scope, 'reseller_id', p)}
              group by hour
           )
           select h.h as hour,
                  (coalesce((select sum(starts) from counts where hour = '-infinity'), 0)
                   - coalesce((select sum(starts) from counts where hour > '-infinity' and hour >= h.h + interval '1 hour'), 0)
                   + coalesce((select sum(stops) from counts where hour >= h.h), 0))::bigint as online
             from hours h
            order by h.h`,
    values: p.values,
  };
}

/**
 * New subscribers, and subscribers whose expiry fell in the month and who are still expired, per
 * month: subscriber_counts' rows by month of creation and by expiry day.
 */
export function subscribersPerMonth(scope: ReportScope, from: string, today: string): Sql {
  const p = new Params();
  const f = p.add(from);
  const t = p.add(today);
  return {
    text: `select m::date as month, coalesce(c.new, 0) as new, coalesce(c.expired, 0) as expired_not_renewed
        from generate_series(${f}::date, ${t}::date, interval '1 month') m
        left join (select date_trunc('month', day)::date as month,
                          coalesce(sum(n) filter (where kind = 'c'), 0) as new,
                          coalesce(sum(n) filter (where kind = 'x' and day < ${t}::date), 0) as expired
                     from subscriber_counts
                    where day >= ${f}::date and day <= ${t}::date and ${scopeSql(scope, 'reseller_id', p)}
                    group by 1) c on c.month = m::date
       order by 1`,
    values: p.values,
  };
}

// ------------------------------------------------------------------ reports

/**
 * The rollup rows of a range: by day for a grouping by day or week (a week straddles months), whole
 * months at the month grain otherwise.
 */
function revenueDays(range: DayRange, group: Grouping | null, p: Params): string {
  if (group === 'day' || group === 'week')
    return `l.grain = 'd' and l.day >= ${p.add(range.from)}::date and l.day <= ${p.add(range.to)}::date`;
  return rollupDays('l', range.from, range.to, (v) => p.add(v));
}

/** Payments per period and key, from the rollup (the plan is the one the ledger row recorded). */
export function revenueRows(scope: ReportScope, range: DayRange, group: Grouping, by: string): Sql {
  const p = new Params();
  const key = {
    method: REVENUE_METHOD,
    reseller: 'l.reseller_id::text',
    manager: 'l.manager_id::text',
    plan: 'l.service_id::text',
  }[by];
  const name = { method: REVENUE_METHOD, reseller: 'r.name', manager: 'm.username', plan: 'sp.name' }[by];
  const join = {
    method: '',
    reseller: 'left join resellers r on r.id = l.reseller_id',
    manager: 'left join managers m on m.id = l.manager_id',
    plan: 'left join services sp on sp.id = l.service_id',
  }[by];
  return {
    text: `select date_trunc('${group}', l.day)::date as period, ${key} as key, ${name} as name, l.currency,
             sum(l.incoming + l.outgoing) as amount, sum(l.n) as count
        from ledger_rollup l ${join}
       where l.type in (${REVENUE_TYPES}) and ${revenueDays(range, group, p)}
         and ${scopeSql(scope, 'l.reseller_id', p)}
       group by 1, 2, 3, 4
      having sum(l.n) <> 0
       order by 1, 4, 2 nulls last`,
    values: p.values,
  };
}

/** The revenue report's totals per currency: the same rows as revenueRows, summed without its grouping. */
export function revenueTotals(scope: ReportScope, range: DayRange): Sql {
  const p = new Params();
  return {
    text: `select l.currency, sum(l.incoming + l.outgoing) as amount, sum(l.n) as count from ledger_rollup l
       where l.type in (${REVENUE_TYPES}) and ${revenueDays(range, null, p)}
         and ${scopeSql(scope, 'l.reseller_id', p)}
       group by l.currency having sum(l.n) <> 0 order by l.currency`,
    values: p.values,
  };
}

/**
 * Open balances in buckets of days past due per subscriber (or reseller) and currency, from the
 * open invoices alone (invoices_open_idx, index-only); names are joined by the callers.
 */
function agingGroups(scope: ReportScope, today: string, by: 'subscriber' | 'reseller', p: Params): string {
  const t = p.add(today);
  const bucket = (cond: string) => `coalesce(sum(balance) filter (where ${cond}), 0)`;
  const key = by === 'subscriber' ? 'subscriber_id, reseller_id' : 'reseller_id';
  // A permanently removed subscriber's invoices stay; its row does not, and neither does it here,
  // per subscriber or per reseller alike, so the two views sum the same (subscriber_tombstones, a
  // few ids, instead of a lookup in subscribers per open invoice).
  const live = 'and not exists (select 1 from subscriber_tombstones d where d.id = subscriber_id)';
  return `select ${key}, currency,
             ${bucket('days <= 0')} as not_due, ${bucket('days between 1 and 30')} as d1_30,
             ${bucket('days between 31 and 60')} as d31_60, ${bucket('days between 61 and 90')} as d61_90,
             ${bucket('days > 90')} as over_90, sum(balance) as total, count(*) as invoices
        from (select subscriber_id, reseller_id, currency, total - paid_amount as balance, ${t}::date - due_date as days
                from invoices
               where status in ('pending', 'partial', 'overdue') and total > paid_amount
                 and ${scopeSql(scope, 'reseller_id', p)} ${live}) o
       group by ${key}, currency`;
}

const agingOrder = (by: 'subscriber' | 'reseller', g: string) =>
  `order by ${g}.total desc, ${by === 'subscriber' ? `${g}.subscriber_id` : `${g}.reseller_id`}, ${g}.currency`;

function agingNamed(by: 'subscriber' | 'reseller', from: string, extra = ''): string {
  const cols =
    by === 'subscriber'
      ? 'o.subscriber_id, s.username, o.reseller_id, r.name as reseller'
      : 'o.reseller_id, r.name as reseller';
  const join = by === 'subscriber' ? 'join subscribers s on s.id = o.subscriber_id' : '';
  return `select ${cols}, o.currency, o.not_due, o.d1_30, o.d31_60, o.d61_90, o.over_90, o.total, o.invoices${extra}
        from ${from} o ${join} join resellers r on r.id = o.reseller_id`;
}

/** Open balances in buckets of days past due, per subscriber or per reseller. */
export function agingRows(scope: ReportScope, today: string, by: 'subscriber' | 'reseller'): Sql {
  const p = new Params();
  return {
    text: `${agingNamed(by, `(${agingGroups(scope, today, by, p)})`)} ${agingOrder(by, 'o')}`,
    values: p.values,
  };
}

/** One page of agingRows, cut before the names are joined, with the count of all. */
export function agingPage(
  scope: ReportScope,
  today: string,
  by: 'subscriber' | 'reseller',
  limit: number,
  offset: number,
): Sql {
  const p = new Params();
  const groups = agingGroups(scope, today, by, p);
  const page = `(select g.*, count(*) over () as report_total_rows from (${groups}) g
                  ${agingOrder(by, 'g')} limit ${p.add(limit)} offset ${p.add(offset)})`;
  return {
    text: `${agingNamed(by, page, ', o.report_total_rows')} ${agingOrder(by, 'o')}`,
    values: p.values,
  };
}

/** What a renewal's wallet payment asks: the system currency, and the default tax on the price. */
export interface RenewalWallet {
  currency: string;
  taxRate: string | number;
}

/**
 * `wallet_covers`: the wallet pays the renewal invoice whole, price plus the default tax rounded
 * half-up, in the system currency (the auto-renew rule, walletCoversSql of the lifecycle sweep).
 */
function expiringSelect(scope: ReportScope, range: DayRange, wallet: RenewalWallet, p: Params): string {
  return `select s.id, s.username, s.full_name, s.reseller_id, r.name as reseller, s.service_id, sp.name as plan,
             s.expiry_date::text as expiry_date, s.auto_renew, s.wallet_balance, sp.currency,
             x.price as renewal_price,
             (sp.currency = ${p.add(wallet.currency)}
              and s.wallet_balance >= x.price + round(x.price::numeric * ${p.add(String(wallet.taxRate))}::numeric / 100)::bigint)
               as wallet_covers
        from subscribers s
        join services sp on sp.id = s.service_id
        join resellers r on r.id = s.reseller_id
        cross join lateral (select case when s.override_price and s.price is not null then s.price else sp.price end as price) x
       where s.deleted_at is null and s.expiry_date >= ${p.add(range.from)}::date and s.expiry_date <= ${p.add(range.to)}::date
         and ${scopeSql(scope, 's.reseller_id', p)}
       order by s.expiry_date, s.id`;
}

export function expiringRows(scope: ReportScope, range: DayRange, wallet: RenewalWallet): Sql {
  const p = new Params();
  return { text: expiringSelect(scope, range, wallet, p), values: p.values };
}

/**
 * One page of expiringRows in index order (subscribers_live_expiry_idx) and the count of all from
 * subscriber_counts (live subscribers per reseller and expiry day), instead of every row of the
 * range counted and sorted.
 */
export function expiringPage(
  scope: ReportScope,
  range: DayRange,
  wallet: RenewalWallet,
  limit: number,
  offset: number,
): Sql {
  const p = new Params();
  const rows = expiringSelect(scope, range, wallet, p);
  return {
    text: `select q.*, (select coalesce(sum(n), 0) from subscriber_counts
                         where kind = 'x' and day >= ${p.add(range.from)}::date and day <= ${p.add(range.to)}::date
                           and ${scopeSql(scope, 'reseller_id', p)}) as report_total_rows
        from (${rows} limit ${p.add(limit)} offset ${p.add(offset)}) q
       order by q.expiry_date, q.id`,
    values: p.values,
  };
}

/**
 * Bytes per subscriber of the scope over the range, with its plan, from usage_monthly's whole months
 * and daily_usage's days (usage-cover.ts); only subscribers with a daily row in the range. The plan
 * and the scope's reseller are usage_monthly's (the subscriber's current ones, migration 0055): a
 * day's come from its month's row, which every daily row has, so no subscriber row is read.
 */
function usagePerSubscriber(scope: ReportScope, range: DayRange, p: Params): string {
  const cover = usageCover(range);
  const inScope = scopeSql(scope, 'm.reseller_id', p);
  const days = (r: DayRange, sign: '' | '-') =>
    `select d.subscriber_id, m.service_id, ${sign}1 as days, ${sign}d.download_bytes as download_bytes,
            ${sign}d.upload_bytes as upload_bytes
       from daily_usage d join usage_monthly m on m.subscriber_id = d.subscriber_id and m.month = ${p.add(monthStart(r.from))}::date
      where d.date >= ${p.add(r.from)}::date and d.date <= ${p.add(r.to)}::date and ${inScope}`;
  const parts = [
    ...(cover.months.length > 0
      ? [
          `select m.subscriber_id, m.service_id, m.days, m.download_bytes, m.upload_bytes from usage_monthly m
            where m.month = any(${p.add(cover.months)}::date[]) and ${inScope}`,
        ]
      : []),
    ...cover.plus.map((r) => days(r, '')),
    ...cover.minus.map((r) => days(r, '-')),
  ];
  return `select subscriber_id, max(service_id) as service_id, sum(download_bytes) as download_bytes,
                 sum(upload_bytes) as upload_bytes, sum(download_bytes + upload_bytes) as total_bytes
            from (${parts.join(' union all ')}) x
           group by subscriber_id having sum(days) > 0`;
}

const USAGE_COLUMNS = `u.subscriber_id, s.username, s.service_id, sp.name as plan, u.download_bytes, u.upload_bytes, u.total_bytes`;
const USAGE_JOIN = `join subscribers s on s.id = u.subscriber_id left join services sp on sp.id = s.service_id`;

/** Every subscriber of the scope with usage in the range, most bytes first. */
export function usageRows(scope: ReportScope, range: DayRange): Sql {
  const p = new Params();
  return {
    text: `select ${USAGE_COLUMNS} from (${usagePerSubscriber(scope, range, p)}) u ${USAGE_JOIN}
       order by u.total_bytes desc, u.subscriber_id`,
    values: p.values,
  };
}

/**
 * One page of usageRows, the count of all and the totals per plan (the subscriber's current one),
 * from one pass over the range's sums (a pass per figure read the same rows two or three times).
 * The page is cut from the sums before their subscribers are joined, so only its rows are looked up
 * (daily_usage rows exist only for subscribers: a permanent removal deletes them too, so the join
 * drops none). One row: `rows` and `plans` as JSON arrays, `total`.
 */
export function usageSummary(scope: ReportScope, range: DayRange, limit: number, offset: number): Sql {
  const p = new Params();
  const per = usagePerSubscriber(scope, range, p);
  return {
    text: `with per as materialized (${per})
      select coalesce((select json_agg(r order by r.total_bytes desc, r.subscriber_id)
                         from (select ${USAGE_COLUMNS}
                                 from (select * from per order by total_bytes desc, subscriber_id
                                        limit ${p.add(limit)} offset ${p.add(offset)}) u ${USAGE_JOIN}) r), '[]') as rows,
             (select count(*) from per) as total,
             coalesce((select json_agg(g order by g.total_bytes desc, g.service_id)
                         from (select u.service_id, sp.name as plan, count(*) as subscribers,
                                      sum(u.download_bytes) as download_bytes, sum(u.upload_bytes) as upload_bytes,
                                      sum(u.total_bytes) as total_bytes
                                 from per u left join services sp on sp.id = u.service_id
                                group by u.service_id, sp.name) g), '[]') as plans`,
    values: p.values,
  };
}

const BALANCE_TYPES_SQL = BALANCE_TYPES.map((t) => `'${t}'`).join(', ');

/** A reseller's balance now, what moved it after the range, and within it: closing and opening follow. */
export function statementHead(resellerId: number, range: DayRange): Sql {
  const p = new Params();
  const id = p.add(resellerId);
  const { start, end } = instants(range, p);
  return {
    text: `select r.name, r.currency, r.balance,
             (select coalesce(sum(amount), 0) from transactions
               where reseller_id = ${id} and type in (${BALANCE_TYPES_SQL}) and created_at >= ${end}) as after,
             (select coalesce(sum(amount), 0) from transactions
               where reseller_id = ${id} and type in (${BALANCE_TYPES_SQL}) and created_at >= ${start} and created_at < ${end}) as moved
        from resellers r where r.id = ${id}`,
    values: p.values,
  };
}

export function statementRows(resellerId: number, range: DayRange, opening: number): Sql {
  const p = new Params();
  const id = p.add(resellerId);
  const { start, end } = instants(range, p);
  return {
    text: `select t.id, t.created_at, t.type, t.method, t.amount, t.currency, t.subscriber_id, t.username, t.reference, t.notes,
             ${p.add(opening)}::bigint + sum(t.amount) over (order by t.created_at, t.id) as balance_after
        from transactions t
       where t.reseller_id = ${id} and t.type in (${BALANCE_TYPES_SQL}) and t.created_at >= ${start} and t.created_at < ${end}
       order by t.created_at, t.id`,
    values: p.values,
  };
}

export function statementByType(resellerId: number, range: DayRange): Sql {
  const p = new Params();
  const id = p.add(resellerId);
  const { start, end } = instants(range, p);
  return {
    text: `select type, coalesce(method, '') as method, sum(amount) as amount, count(*) as count from transactions
       where reseller_id = ${id} and type in (${BALANCE_TYPES_SQL}) and created_at >= ${start} and created_at < ${end}
       group by 1, 2 order by 1, 2`,
    values: p.values,
  };
}

/** The reseller's commission on its invoices issued in the range (figures only: commissions move no balance). */
export function statementCommission(resellerId: number, range: DayRange, paidOnly: boolean): Sql {
  const p = new Params();
  return {
    text: `select currency, coalesce(sum(commission_amount), 0) as commission from invoices
       where reseller_id = ${p.add(resellerId)} and issue_date >= ${p.add(range.from)}::date and issue_date <= ${p.add(range.to)}::date
         and ${paidOnly ? "status = 'paid'" : "status <> 'void'"}
       group by currency order by currency`,
    values: p.values,
  };
}

export function cardBatchRows(scope: ReportScope, range: DayRange | null): Sql {
  const p = new Params();
  const at = range && instants(range, p);
  const within = at ? `and b.created_at >= ${at.start} and b.created_at < ${at.end}` : '';
  return {
    text: `select b.id, b.reseller_id, r.name as reseller, b.service_id, sp.name as plan, b.currency, b.count,
             ${CARD_VALUE} as unit_value, b.charge_mode, b.status, b.created_at, c.used, c.suspended
        from card_batches b
        left join resellers r on r.id = b.reseller_id
        left join services sp on sp.id = b.service_id
        cross join lateral (select count(*) filter (where status = 'used') as used,
                                   count(*) filter (where status = 'suspended') as suspended
                              from cards where batch_id = b.id) c
       where ${scopeSql(scope, 'b.reseller_id', p)} ${within}
       order by b.id desc`,
    values: p.values,
  };
}
