/**
 * GET /api/reports/revenue: payments per period (`group`) and key (`by`), with totals per currency
 * that equal the ledger's sum of payment rows over the range to the cent.
 */
import type { Auth } from '../../../shared/auth/claims';
import { todayUtc } from '../../../shared/billing/dates';
import { readPool } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import type { Meta } from '../../../shared/http/context';
import { fromMinor } from '../../../shared/money';
import { answer } from '../output';
import { monthStart, rangeOf, type Grouping } from '../periods';
import * as q from '../queries';
import type { RevenueInput } from '../schemas';
import { reportScope } from '../scope';

interface RevenueRow {
  period: string;
  key: string | null;
  name: string | null;
  currency: string;
  amount: string;
  count: string;
}

export async function revenueReport(caller: Auth | undefined, p: RevenueInput, meta: Meta) {
  const scope = await reportScope(caller, p.reseller_id);
  const today = todayUtc();
  const range = rangeOf(p, { from: monthStart(today), to: today });
  if (typeof range === 'string') throw fail('invalidRequest', range);
  const rows = q.revenueRows(scope, range, p.group as Grouping, p.by);
  return answer<RevenueRow>(p, meta, {
    name: `revenue-${range.from}-${range.to}`,
    ...rows,
    columns: ['period', 'key', 'name', 'currency', 'amount', 'count'],
    view: (r) => ({
      period: r.period,
      key: r.key,
      name: r.name ?? (p.by === 'manager' && r.key === null ? 'system' : r.name),
      currency: r.currency,
      amount: fromMinor(Number(r.amount), r.currency),
      count: Number(r.count),
    }),
    page: { page: p.page, limit: p.limit },
    extra: async () => {
      const sums = q.revenueTotals(scope, range);
      const totals = await readPool().query<{ currency: string; amount: string; count: string }>(
        sums.text,
        sums.values,
      );
      return {
        range: { ...range, group: p.group, by: p.by },
        totals: totals.rows.map((t) => ({
          currency: t.currency,
          amount: fromMinor(Number(t.amount), t.currency),
          count: Number(t.count),
        })),
      };
    },
  });
}
