/** GET /api/reports/usage: the subscribers that moved the most bytes over the range, and totals per plan. */
import type { Auth } from '../../../shared/auth/claims';
import { todayUtc } from '../../../shared/billing/dates';
import { readPool } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import type { Meta } from '../../../shared/http/context';
import { wantsCsv } from '../../../shared/http/csv';
import { answer } from '../output';
import { monthStart, rangeOf } from '../periods';
import * as q from '../queries';
import type { UsageInput } from '../schemas';
import { reportScope } from '../scope';

interface UsageRow {
  subscriber_id: number;
  username: string;
  service_id: number;
  plan: string | null;
  download_bytes: string | number;
  upload_bytes: string | number;
  total_bytes: string | number;
}

interface PlanRow {
  service_id: number | null;
  plan: string | null;
  subscribers: number;
  download_bytes: number;
  upload_bytes: number;
  total_bytes: number;
}

const view = (r: UsageRow) => ({
  subscriber_id: r.subscriber_id,
  username: r.username,
  service_id: r.service_id,
  plan: r.plan,
  download_bytes: Number(r.download_bytes),
  upload_bytes: Number(r.upload_bytes),
  total_bytes: Number(r.total_bytes),
});

export async function usageReport(caller: Auth | undefined, p: UsageInput, meta: Meta) {
  const scope = await reportScope(caller, p.reseller_id);
  const today = todayUtc();
  const range = rangeOf(p, { from: monthStart(today), to: today });
  if (typeof range === 'string') throw fail('invalidRequest', range);
  if (wantsCsv(p.format, meta.accept))
    return answer<UsageRow>(p, meta, {
      name: `usage-${range.from}-${range.to}`,
      ...q.usageRows(scope, range),
      columns: ['subscriber_id', 'username', 'service_id', 'plan', 'download_bytes', 'upload_bytes', 'total_bytes'],
      view,
    });
  // The page, the count and the plans from one pass over the range's sums (queries.ts, usageSummary).
  const summary = q.usageSummary(scope, range, p.limit, (p.page - 1) * p.limit);
  const { rows } = await readPool().query<{ rows: UsageRow[]; total: string; plans: PlanRow[] }>(
    summary.text,
    summary.values,
  );
  const [{ rows: page, total, plans }] = rows;
  return {
    data: page.map(view),
    pagination: { page: p.page, limit: p.limit, total: Number(total) },
    range,
    plans: plans.map((r) => ({ ...r, subscribers: Number(r.subscribers) })),
  };
}
