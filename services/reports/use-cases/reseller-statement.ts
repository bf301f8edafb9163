/**
 * GET /api/reports/reseller-statement: one reseller's balance over the range: the opening balance,
 * every ledger row that moved it (top-ups, debits and transfers, cards, renewals and fees charged)
 * with the balance after each, and the closing balance. Closing is the balance now less what moved
 * it after the range, so a statement up to today closes on the reseller's balance exactly.
 */
import type { Auth } from '../../../shared/auth/claims';
import { todayUtc } from '../../../shared/billing/dates';
import { db, readPool } from '../../../shared/db/client';
import { fail } from '../../../shared/failures';
import type { Meta } from '../../../shared/http/context';
import { fromMinor } from '../../../shared/money';
import { loadSettings } from '../../../shared/settings';
import { answer } from '../output';
import { monthStart, rangeOf } from '../periods';
import * as q from '../queries';
import type { StatementInput } from '../schemas';
import { reportScope } from '../scope';

interface MovementRow {
  id: number;
  created_at: Date;
  type: string;
  method: string | null;
  amount: number;
  currency: string;
  subscriber_id: number | null;
  username: string | null;
  reference: string | null;
  notes: string | null;
  balance_after: string;
}

/** What a movement was, for the reader: a card purchase is a reseller debit with method `prepaid_card`. */
export function movementKind(type: string, method: string | null): string {
  if (type === 'reseller_credit') return 'top_up';
  if (type === 'reseller_debit') return method === 'prepaid_card' ? 'cards' : 'debit';
  return type;
}

export async function resellerStatement(caller: Auth | undefined, p: StatementInput, meta: Meta) {
  const resellerId = p.reseller_id ?? caller?.resellerId ?? undefined;
  if (resellerId === undefined) throw fail('invalidRequest', 'reseller_id is required');
  await reportScope(caller, resellerId);
  const today = todayUtc();
  const range = rangeOf(p, { from: monthStart(today), to: today });
  if (typeof range === 'string') throw fail('invalidRequest', range);
  const head = q.statementHead(resellerId, range);
  const {
    rows: [h],
  } = await readPool().query<{ name: string; currency: string; balance: number; after: string; moved: string }>(
    head.text,
    head.values,
  );
  const closing = h.balance - Number(h.after);
  const opening = closing - Number(h.moved);
  const dec = (minor: number) => fromMinor(minor, h.currency);
  return answer<MovementRow>(p, meta, {
    name: `reseller-${resellerId}-statement-${range.from}-${range.to}`,
    ...q.statementRows(resellerId, range, opening),
    columns: [
      'id',
      'created_at',
      'kind',
      'type',
      'method',
      'amount',
      'currency',
      'balance_after',
      'subscriber_id',
      'username',
      'reference',
      'notes',
    ],
    view: (r) => ({
      id: r.id,
      created_at: r.created_at,
      kind: movementKind(r.type, r.method),
      type: r.type,
      method: r.method,
      amount: dec(r.amount),
      currency: r.currency,
      balance_after: dec(Number(r.balance_after)),
      subscriber_id: r.subscriber_id,
      username: r.username,
      reference: r.reference,
      notes: r.notes,
    }),
    page: { page: p.page, limit: p.limit },
    extra: async () => {
      const byType = q.statementByType(resellerId, range);
      const { commission_basis: basis } = await loadSettings(db(), ['commission_basis']);
      const commission = q.statementCommission(resellerId, range, basis === 'paid');
      const [kinds, commissions] = await Promise.all([
        readPool().query<{ type: string; method: string; amount: string; count: string }>(byType.text, byType.values),
        readPool().query<{ currency: string; commission: string }>(commission.text, commission.values),
      ]);
      const summary: Record<string, { amount: number; count: number }> = {};
      for (const k of kinds.rows) {
        const kind = movementKind(k.type, k.method || null);
        const s = (summary[kind] ??= { amount: 0, count: 0 });
        s.amount += Number(k.amount);
        s.count += Number(k.count);
      }
      return {
        statement: {
          reseller_id: resellerId,
          name: h.name,
          currency: h.currency,
          ...range,
          opening_balance: dec(opening),
          closing_balance: dec(closing),
          balance_now: dec(h.balance),
          movements: Object.fromEntries(
            Object.entries(summary).map(([k, v]) => [k, { amount: dec(v.amount), count: v.count }]),
          ),
          // Commission earned on the reseller's invoices of the range: a figure, not a movement of its balance.
          commissions: commissions.rows.map((c) => ({
            currency: c.currency,
            amount: fromMinor(Number(c.commission), c.currency),
          })),
        },
      };
    },
  });
}
