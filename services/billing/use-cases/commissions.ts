/**
 * GET /api/invoices/commissions: a reseller's commission per month. A reseller sees its own
 * invoices unless it names one of its tree; an admin sees all unless it names one.
 */
import { eq } from 'drizzle-orm';
import type { Auth } from '../../../shared/auth/claims';
import { requireAuth, resellerInScope, scopeFor, type Scope } from '../../../shared/auth/policy';
import { db } from '../../../shared/db/client';
import { resellers } from '../../../shared/db/schema';
import { fail } from '../../../shared/failures';
import { fromMinor, isCurrency } from '../../../shared/money';
import { loadSettings } from '../../../shared/settings';
import type { CommissionsInput } from '../invoice-schemas';
import { commissionRows } from '../queries';

/** The named reseller's own rate and currency (400 when it does not exist, 403 outside the caller's tree). */
async function resellerTerms(scope: Scope, resellerId: number): Promise<{ rate: number; currency: string }> {
  const [r] = await db()
    .select({ rate: resellers.commissionRate, currency: resellers.currency })
    .from(resellers)
    .where(eq(resellers.id, resellerId));
  if (!r) throw fail('referenceNotFound', 'reseller_id');
  if (!(await resellerInScope(db(), scope, resellerId))) throw fail('notAuthorized');
  return { rate: Number(r.rate), currency: r.currency };
}

/**
 * Sums of one currency only (`currency`, else the reseller's own, else the system's): minor units
 * of two currencies added up were reported as one amount (1,500 JPY as 15.00 USD).
 */
export async function commissionReport(caller: Auth | undefined, p: CommissionsInput) {
  const auth = requireAuth(caller);
  const scope = await scopeFor(db(), auth, 'read');
  const resellerId = p.reseller_id ?? auth.resellerId ?? undefined;
  const terms = resellerId === undefined ? undefined : await resellerTerms(scope, resellerId);
  const settings = await loadSettings(db(), ['commission_basis', 'currency']);
  const currency = p.currency ?? terms?.currency ?? settings.currency;
  if (!isCurrency(currency)) throw fail('currencyInvalid');
  // An explicit status wins; otherwise the basis setting decides: paid invoices, or every non-void one.
  const statuses = p.status ? [p.status] : settings.commission_basis === 'paid' ? ['paid'] : undefined;
  const rows = await commissionRows(scope, { currency, resellerId, from: p.from, to: p.to, statuses });
  const totalInvoiced = rows.reduce((s, r) => s + Number(r.invoiced), 0);
  const totalCommission = rows.reduce((s, r) => s + Number(r.commission), 0);
  // Without a reseller, the rate is the effective one over what was selected.
  const rate = terms?.rate ?? (totalInvoiced === 0 ? 0 : Math.round((totalCommission * 10000) / totalInvoiced) / 100);
  return {
    total_commission: fromMinor(totalCommission, currency),
    total_invoiced: fromMinor(totalInvoiced, currency),
    rate,
    currency,
    rows: rows.map((r) => ({
      month: r.month,
      invoiced: fromMinor(Number(r.invoiced), currency),
      commission: fromMinor(Number(r.commission), currency),
    })),
  };
}
