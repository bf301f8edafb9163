/**
 * GET /api/reports/expiring: subscribers whose expiry falls in the range (default the next 7 days),
 * with auto-renew and whether the wallet covers the renewal (system currency, price plus default tax).
 */
import type { Auth } from '../../../shared/auth/claims';
import { addDays, todayUtc } from '../../../shared/billing/dates';
import { db } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import type { Meta } from '../../../shared/http/context';
import { fromMinor } from '../../../shared/money';
import { loadSettings } from '../../../shared/settings';
import { answer } from '../output';
import { rangeOf } from '../periods';
import * as q from '../queries';
import type { ExpiringInput } from '../schemas';
import { reportScope } from '../scope';

interface ExpiringRow {
  id: number;
  username: string;
  full_name: string | null;
  reseller_id: number;
  reseller: string;
  service_id: number;
  plan: string;
  expiry_date: string;
  auto_renew: boolean;
  wallet_balance: number;
  currency: string;
  renewal_price: number;
  wallet_covers: boolean;
}

export async function expiringReport(caller: Auth | undefined, p: ExpiringInput, meta: Meta) {
  const scope = await reportScope(caller, p.reseller_id);
  const today = todayUtc();
  const range = rangeOf(p, { from: today, to: addDays(today, 7) });
  if (typeof range === 'string') throw fail('invalidRequest', range);
  const s = await loadSettings(db(), ['currency', 'default_tax_rate']);
  const wallet = { currency: s.currency, taxRate: s.default_tax_rate };
  return answer<ExpiringRow>(p, meta, {
    name: `expiring-${range.from}-${range.to}`,
    ...q.expiringRows(scope, range, wallet),
    columns: [
      'id',
      'username',
      'full_name',
      'reseller_id',
      'reseller',
      'service_id',
      'plan',
      'expiry_date',
      'auto_renew',
      'renewal_price',
      'currency',
      'wallet_balance',
      'wallet_covers',
    ],
    view: (r) => ({
      id: r.id,
      username: r.username,
      full_name: r.full_name,
      reseller_id: r.reseller_id,
      reseller: r.reseller,
      service_id: r.service_id,
      plan: r.plan,
      expiry_date: r.expiry_date,
      auto_renew: r.auto_renew,
      renewal_price: fromMinor(Number(r.renewal_price), r.currency),
      currency: r.currency,
      wallet_balance: fromMinor(Number(r.wallet_balance), wallet.currency),
      wallet_covers: r.wallet_covers,
    }),
    page: { page: p.page, limit: p.limit },
    pageQuery: (limit, offset) => q.expiringPage(scope, range, wallet, limit, offset),
    extra: async () => ({ range }),
  });
}
