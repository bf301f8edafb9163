/** GET /api/reports/cards: per batch, the value of its cards sold (made), used and still unused. */
import type { Auth } from '../../../shared/auth/claims';
import { fail } from '../../../shared/failures';
import type { Meta } from '../../../shared/http/context';
import { fromMinor } from '../../../shared/money';
import { answer } from '../output';
import { rangeOf } from '../periods';
import * as q from '../queries';
import type { CardsReportInput } from '../schemas';
import { reportScope } from '../scope';

interface BatchRow {
  id: number;
  reseller_id: number | null;
  reseller: string | null;
  service_id: number | null;
  plan: string | null;
  currency: string;
  count: number;
  unit_value: number | null;
  charge_mode: string;
  status: string;
  created_at: Date;
  used: string;
  suspended: string;
}

export async function cardsReport(caller: Auth | undefined, p: CardsReportInput, meta: Meta) {
  // Card batches are not subscriber data: view_all does not widen them (shared/auth/policy.ts).
  const scope = await reportScope(caller, p.reseller_id, 'tree-read');
  // Without from/to: every batch.
  const range = p.from || p.to ? rangeOf(p, { from: '0001-01-01', to: '9999-12-30' }) : null;
  if (typeof range === 'string') throw fail('invalidRequest', range);
  return answer<BatchRow>(p, meta, {
    name: 'cards',
    ...q.cardBatchRows(scope, range),
    columns: [
      'batch_id',
      'reseller_id',
      'reseller',
      'service_id',
      'plan',
      'charge_mode',
      'status',
      'created_at',
      'currency',
      'unit_value',
      'count',
      'used',
      'unused',
      'suspended',
      'sold_value',
      'used_value',
      'unused_value',
    ],
    view: (r) => {
      const unit = Number(r.unit_value ?? 0);
      const used = Number(r.used);
      const dec = (minor: number) => fromMinor(minor, r.currency);
      return {
        batch_id: r.id,
        reseller_id: r.reseller_id,
        reseller: r.reseller,
        service_id: r.service_id,
        plan: r.plan,
        charge_mode: r.charge_mode,
        status: r.status,
        created_at: r.created_at,
        currency: r.currency,
        unit_value: dec(unit),
        count: r.count,
        used,
        unused: r.count - used,
        suspended: Number(r.suspended),
        sold_value: dec(unit * r.count),
        used_value: dec(unit * used),
        unused_value: dec(unit * (r.count - used)),
      };
    },
    page: { page: p.page, limit: p.limit },
    extra: async () => ({ range }),
  });
}
