/**
 * GET /api/dashboard: what an owner asks every morning, in one call, over the caller's scope. Money is
 * in the system currency; what was received in other currencies is listed apart, never added in.
 */
import type { Auth } from '../../../shared/auth/claims';
import { addDays, todayUtc } from '../../../shared/billing/dates';
import { readPool } from '../../../shared/db/client';
import { ApiError } from '../../../shared/errors';
import { fromMinor } from '../../../shared/money';
import { loadSettings } from '../../../shared/settings';
import { db } from '../../../shared/db/client';
import * as q from '../queries';
import { addMonths, dashboardPeriods } from '../periods';
import type { DashboardInput } from '../schemas';
import { reportScope, type ReportScope } from '../scope';

type Row = Record<string, string | number | boolean | null>;

const run = async (s: q.Sql): Promise<Row[]> => (await readPool().query<Row>(s.text, s.values)).rows;
const n = (v: unknown): number => Number(v ?? 0);

interface Received {
  today: number;
  month: number;
  last_month: number;
  by_method: Record<string, number>;
  wallet_topups: { today: number; month: number; last_month: number };
}

/** Ledger figures of one currency: payments by period and method (this month's), wallet top-ups apart. */
function received(rows: Row[], currency: string): Received {
  const out: Received = {
    today: 0,
    month: 0,
    last_month: 0,
    by_method: {},
    wallet_topups: { today: 0, month: 0, last_month: 0 },
  };
  for (const r of rows) {
    const revenue = r.type === q.REVENUE_TYPE || r.type === q.REVERSAL_TYPE;
    const into = revenue ? out : out.wallet_topups;
    into.today += n(r.today);
    into.month += n(r.month);
    into.last_month += n(r.last_month);
    // A method with no payment this month (only last month's, or one moved out) is not listed,
    // as the revenue report leaves out a key whose rows cancel out.
    if (revenue && n(r.month_count) !== 0) {
      const method = r.type === q.REVERSAL_TYPE ? q.REVERSAL_TYPE : ((r.method as string | null) ?? 'unspecified');
      out.by_method[method] = (out.by_method[method] ?? 0) + n(r.month);
    }
  }
  const dec = (minor: number) => fromMinor(minor, currency);
  return {
    today: dec(out.today),
    month: dec(out.month),
    last_month: dec(out.last_month),
    by_method: Object.fromEntries(Object.entries(out.by_method).map(([k, v]) => [k, dec(v)])),
    wallet_topups: {
      today: dec(out.wallet_topups.today),
      month: dec(out.wallet_topups.month),
      last_month: dec(out.wallet_topups.last_month),
    },
  };
}

function byCurrency(rows: Row[]): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const r of rows) {
    const c = String(r.currency);
    out.set(c, [...(out.get(c) ?? []), r]);
  }
  return out;
}

/**
 * The card figures' scope: card batches stay in the caller's own tree (`tree-read`) where
 * `view_all` widens the rest; none when the dashboard is of a tree outside it.
 */
async function cardsScope(caller: Auth | undefined, resellerId: number | undefined): Promise<ReportScope | null> {
  try {
    return await reportScope(caller, resellerId, 'tree-read');
  } catch (err) {
    if (err instanceof ApiError && err.code === 403) return null;
    throw err;
  }
}

export async function dashboard(caller: Auth | undefined, p: DashboardInput, now = new Date()) {
  // Independent: one round trip before the figures' statements, not two.
  const [scope, cardScope, { currency }] = await Promise.all([
    reportScope(caller, p.reseller_id),
    cardsScope(caller, p.reseller_id),
    loadSettings(db(), ['currency']),
  ]);
  const today = todayUtc(now);
  const { monthFrom, lastMonthFrom } = dashboardPeriods(today);
  const [subs, ledger, invoices, cards, nas, perDay, perHour, perMonth] = await Promise.all([
    run(q.subscriberCounts(scope, today)),
    run(q.ledgerFigures(scope, today, monthFrom, lastMonthFrom)),
    run(q.invoiceFigures(scope, today)),
    cardScope ? run(q.cardFigures(cardScope, monthFrom)) : Promise.resolve([]),
    // Every server only for the admin's whole view: a named reseller gets what that reseller would see.
    run(q.nasFigures(scope, caller?.role === 'admin' && scope.rootId === null)),
    run(q.paymentsPerDay(scope, addDays(today, -29), today, currency)),
    run(q.onlinePerHour(scope)),
    run(q.subscribersPerMonth(scope, addMonths(today, -11), today)),
  ]);
  const s = subs[0];
  const ledgerBy = byCurrency(ledger);
  const invoiceBy = new Map(invoices.map((r) => [String(r.currency), r]));
  const cardBy = new Map(cards.map((r) => [String(r.currency), r]));
  const invoiceView = (r: Row | undefined, c: string) => ({
    outstanding: fromMinor(n(r?.outstanding), c),
    overdue: fromMinor(n(r?.overdue), c),
    overdue_count: n(r?.overdue_count),
  });
  const cardView = (r: Row | undefined, c: string) => ({
    sold: fromMinor(n(r?.sold), c),
    redeemed: fromMinor(n(r?.redeemed), c),
  });
  const others = (keys: Iterable<string>) => [...new Set(keys)].filter((c) => c !== currency).sort();
  return {
    data: {
      currency,
      subscribers: {
        total: n(s.total),
        active: n(s.active),
        inactive: n(s.inactive),
        expired: n(s.expired),
        expiring_7d: n(s.expiring_7d),
        blocked: n(s.blocked),
        online: n(s.online),
      },
      revenue: {
        ...received(ledgerBy.get(currency) ?? [], currency),
        other_currencies: others(ledgerBy.keys()).map((c) => ({ currency: c, ...received(ledgerBy.get(c)!, c) })),
      },
      invoices: {
        ...invoiceView(invoiceBy.get(currency), currency),
        other_currencies: others(invoiceBy.keys()).map((c) => ({ currency: c, ...invoiceView(invoiceBy.get(c), c) })),
      },
      // Wallets hold the system currency (shared/billing/wallet.ts).
      wallets: { total: fromMinor(n(s.wallets), currency) },
      cards: {
        ...cardView(cardBy.get(currency), currency),
        other_currencies: others(cardBy.keys()).map((c) => ({ currency: c, ...cardView(cardBy.get(c), c) })),
      },
      nas: nas.map((r) => ({
        id: n(r.id),
        name: r.shortname,
        ip_address: r.nasname,
        online: n(r.online),
        last_packet_age_seconds: r.last_packet_age_seconds === null ? null : n(r.last_packet_age_seconds),
      })),
      series: {
        payments_per_day: perDay.map((r) => ({
          day: String(r.day),
          amount: fromMinor(n(r.amount), currency),
          count: n(r.count),
        })),
        online_per_hour: perHour.map((r) => ({ hour: new Date(String(r.hour)).toISOString(), online: n(r.online) })),
        subscribers_per_month: perMonth.map((r) => ({
          month: String(r.month).slice(0, 7),
          new: n(r.new),
          expired_not_renewed: n(r.expired_not_renewed),
        })),
      },
    },
  };
}
