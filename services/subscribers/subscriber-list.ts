/**
 * GET /api/subscribers. Every filter reads an indexed column of `subscribers` (is_online, ip and
 * last NAS are kept there from radacct), search uses the trigram indexes through ILIKE,
 * and the default and expiry sorts have (column, id) indexes over live rows, so a page stays fast
 * on a million rows. `total` is exact up to EXACT_TOTAL_CAP matches, an estimate above it (shared/pagination).
 */
import {
  and,
  asc,
  count,
  desc,
  eq,
  gte,
  ilike,
  isNotNull,
  like,
  isNull,
  lt,
  lte,
  or,
  sql,
  type SQL,
} from 'drizzle-orm';
import type { Auth } from '../../shared/auth/claims';
import { inScope, resellerInScope, scopeFor } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { subscribers } from '../../shared/db/schema';
import { addDays, likePattern, todayIso } from '../../shared/domain/subscriber';
import { formatIpv6Prefix, parseIpv6Prefix } from '../../shared/net/ipv6-prefix';
import { fail } from '../../shared/failures';
import { pageOf } from '../../shared/http/context';
import { EXACT_TOTAL_CAP, planRows, totalFromCappedCount, totalFromPage } from '../../shared/pagination/total';
import type { ActionResult } from '../../shared/http/route';
import { loadSettings } from '../../shared/settings';
import { looksLikePhone, phoneSearchTerm } from '../../shared/phone';
import type { Infer } from '../../shared/http/schemas';
import type { listQuery } from './subscriber-schemas';
import { viewsOf } from './subscriber-view';

export type ListParams = Infer<typeof listQuery>;

const SORT_COLUMNS = {
  created_at: subscribers.createdAt,
  username: subscribers.username,
  expiry_date: subscribers.expiryDate,
  daily_quota_used: subscribers.dailyQuotaUsed,
};

/** Exact up to EXACT_TOTAL_CAP matches, the planner's estimate above (shared/pagination/total.ts). */
async function totalOf(where: SQL | undefined): Promise<number> {
  // A builder, not a value: .limit() would change it in place, so each statement gets its own.
  const matches = () =>
    db()
      .select({ one: sql`1` })
      .from(subscribers)
      .where(where);
  const [{ n }] = await db()
    .select({ n: count() })
    .from(
      matches()
        .limit(EXACT_TOTAL_CAP + 1)
        .as('capped'),
    );
  return totalFromCappedCount(n, async () => {
    // Planning alone is under a millisecond.
    const res = await db().execute<{ 'QUERY PLAN': unknown }>(sql`explain (format json) ${matches()}`);
    return planRows(res.rows[0]['QUERY PLAN']);
  });
}

async function statusCondition(status: ListParams['status'], today: string): Promise<SQL | undefined> {
  switch (status) {
    case 'active':
    case 'inactive':
      return eq(subscribers.status, status);
    case 'expired':
      return lt(subscribers.expiryDate, today);
    case 'expiring': {
      const { expiring_days: days } = await loadSettings(db(), ['expiring_days']);
      return and(gte(subscribers.expiryDate, today), lte(subscribers.expiryDate, addDays(today, days)));
    }
    case 'online':
      return eq(subscribers.isOnline, true);
    case 'offline':
      return eq(subscribers.isOnline, false);
    default:
      return undefined;
  }
}

/**
 * `blocked_reason=` names one reason; `blocked=true` any reason (both read the partial index
 * subscribers_blocked_idx), `blocked=false` none. Both together: the reason, and false matches nothing.
 */
function blockedCondition(p: ListParams): SQL | undefined {
  if (p.blocked === false) {
    return p.blocked_reason !== undefined ? sql`false` : isNull(subscribers.blockedReason);
  }
  if (p.blocked_reason !== undefined) return eq(subscribers.blockedReason, p.blocked_reason);
  if (p.blocked === true) return isNotNull(subscribers.blockedReason);
  return undefined;
}

export async function listSubscribers(auth: Auth, p: ListParams): Promise<ActionResult> {
  const { page, limit, offset } = pageOf(p);
  const scope = await scopeFor(db(), auth, 'read');
  // reseller_id narrows the caller's own view: an admin names any reseller, others one in their tree.
  if (p.reseller_id !== undefined && !(await resellerInScope(db(), scope, p.reseller_id))) throw fail('notAuthorized');
  const pattern = p.search ? likePattern(p.search) : undefined;
  // An IPv6 address or prefix finds the subscriber whose prefix holds it (the exclusion
  // constraints' GiST indexes answer `>>=`).
  const v6 = p.search ? parseIpv6Prefix(p.search) : null;
  const v6Text = v6 && formatIpv6Prefix(v6);
  // A phone in any common spelling also matches the stored E.164 (shared/phone.ts).
  const phoneTerm =
    p.search && looksLikePhone(p.search)
      ? phoneSearchTerm(p.search, (await loadSettings(db(), ['default_country'])).default_country)
      : undefined;
  const where = and(
    isNull(subscribers.deletedAt),
    inScope(scope, subscribers.resellerId),
    await statusCondition(p.status, todayIso()),
    p.service_id !== undefined ? eq(subscribers.serviceId, p.service_id) : undefined,
    p.reseller_id !== undefined ? eq(subscribers.resellerId, p.reseller_id) : undefined,
    p.nas_id !== undefined ? eq(subscribers.lastNasId, p.nas_id) : undefined,
    p.fup_level !== undefined ? eq(subscribers.fupLevel, p.fup_level) : undefined,
    p.auto_renew !== undefined ? eq(subscribers.autoRenew, p.auto_renew) : undefined,
    blockedCondition(p),
    pattern
      ? or(
          ilike(subscribers.username, pattern),
          ilike(subscribers.fullName, pattern),
          ilike(subscribers.phone, pattern),
          phoneTerm ? like(subscribers.phone, likePattern(phoneTerm)) : undefined,
          ilike(subscribers.macAddress, pattern),
          v6Text ? sql`${subscribers.ipv6Prefix} >>= ${v6Text}::cidr` : undefined,
          v6Text ? sql`${subscribers.delegatedIpv6Prefix} >>= ${v6Text}::cidr` : undefined,
        )
      : undefined,
  );
  const dir = p.order === 'asc' ? asc : desc;
  const [rows, { currency, default_tax_rate: taxRate }] = await Promise.all([
    db()
      .select()
      .from(subscribers)
      .where(where)
      .orderBy(dir(SORT_COLUMNS[p.sort ?? 'created_at']), dir(subscribers.id))
      .limit(limit)
      .offset(offset),
    loadSettings(db(), ['currency', 'default_tax_rate']),
  ]);
  // A short page settles the total without a second pass over the matches (a search is one query).
  const total = totalFromPage(offset, limit, rows.length) ?? (await totalOf(where));
  return { data: await viewsOf(db(), rows, currency, taxRate), pagination: { page, limit, total } };
}
