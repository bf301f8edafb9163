/** GET /api/reports/usage: the subscribers that moved the most bytes over the range, and totals per plan. */
import type { Auth } from '../../../shared/auth/claims';
import { todayUtc } from '../../../shared/billing/dates';
import { readPool } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import type { Meta } from '../../../shared/http/context';
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
  download_bytes: string;
  upload_bytes: string;
  total_bytes: string;
}

export async function usageReport(caller: Auth | undefined, p: UsageInput, meta: Meta) {
  const scope = await reportScope(caller, p.reseller_id);
  const today = todayUtc();
  const range = rangeOf(p, { from: monthStart(today), to: today });
  if (typeof range === 'string') throw fail('invalidRequest', range);
  return answer<UsageRow>(p, meta, {
    name: `usage-${range.from}-${range.to}`,
    ...q.usageRows(scope, range),
    columns: ['subscriber_id', 'username', 'service_id', 'plan', 'download_bytes', 'upload_bytes', 'total_bytes'],
    view: (r) => ({
      subscriber_id: r.subscriber_id,
      username: r.username,
      service_id: r.service_id,
      plan: r.plan,
      download_bytes: Number(r.download_bytes),
      upload_bytes: Number(r.upload_bytes),
      total_bytes: Number(r.total_bytes),
    }),
    page: { page: p.page, limit: p.limit },
    pageQuery: (limit, offset) => q.usagePage(scope, range, limit, offset),
    extra: async () => {
      const plans = q.usagePerPlan(scope, range);
      const { rows } = await readPool().query<Record<string, string | number | null>>(plans.text, plans.values);
      return {
        range,
        plans: rows.map((r) => ({
          service_id: r.service_id,
          plan: r.plan,
          subscribers: Number(r.subscribers),
          download_bytes: Number(r.download_bytes),
          upload_bytes: Number(r.upload_bytes),
          total_bytes: Number(r.total_bytes),
        })),
      };
    },
  });
}
