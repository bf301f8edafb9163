/** GET /api/reports/aging: open invoice balances by days past due, per subscriber or per reseller, as of today. */
import type { Auth } from '../../../shared/auth/claims';
import { todayUtc } from '../../../shared/billing/dates';
import type { Meta } from '../../../shared/http/context';
import { fromMinor } from '../../../shared/money';
import { answer, type ReportRow } from '../output';
import * as q from '../queries';
import type { AgingInput } from '../schemas';
import { reportScope } from '../scope';

const BUCKETS = ['not_due', 'd1_30', 'd31_60', 'd61_90', 'over_90', 'total'] as const;

type AgingRow = Record<(typeof BUCKETS)[number], string> & {
  subscriber_id?: number;
  username?: string;
  reseller_id: number;
  reseller: string;
  currency: string;
  invoices: string;
};

export async function agingReport(caller: Auth | undefined, p: AgingInput, meta: Meta) {
  const scope = await reportScope(caller, p.reseller_id);
  const today = todayUtc();
  const by = p.by as 'subscriber' | 'reseller';
  const who =
    by === 'subscriber'
      ? (['subscriber_id', 'username', 'reseller_id', 'reseller'] as const)
      : (['reseller_id', 'reseller'] as const);
  return answer<AgingRow>(p, meta, {
    name: `aging-${by}-${today}`,
    ...q.agingRows(scope, today, by),
    columns: [...who, 'currency', ...BUCKETS, 'invoices'],
    view: (r) => {
      const out: ReportRow = {};
      for (const k of who) out[k] = r[k];
      out.currency = r.currency;
      for (const b of BUCKETS) out[b] = fromMinor(Number(r[b]), r.currency);
      out.invoices = Number(r.invoices);
      return out;
    },
    page: { page: p.page, limit: p.limit },
    pageQuery: (limit, offset) => q.agingPage(scope, today, by, limit, offset),
    extra: async () => ({ as_of: today }),
  });
}
