/** Reading one subscriber for an action: the row (for `recordInScope` of the policy), its plan and its view. */
import { and, eq, isNull } from 'drizzle-orm';
import { db, type DbOrTx } from '../../shared/db/client';
import { services, subscribers } from '../../shared/db/schema';
import { fail } from '../../shared/failures';
import { loadSettings } from '../../shared/settings';
import { plansById, subscriberView, type PlanRow, type SubscriberRow } from './subscriber-view';

/** The row by id; `live` leaves out soft-deleted ones. */
export async function loadRow(id: number, live = true): Promise<SubscriberRow | undefined> {
  const [row] = await db()
    .select()
    .from(subscribers)
    .where(live ? and(eq(subscribers.id, id), isNull(subscribers.deletedAt)) : eq(subscribers.id, id));
  return row;
}

/** A plan a subscriber may move to: it exists and is not retired (400 otherwise, as a body field). */
export async function livePlan(db_: DbOrTx, id: number): Promise<PlanRow> {
  const [plan] = await db_
    .select()
    .from(services)
    .where(and(eq(services.id, id), isNull(services.deletedAt)));
  if (!plan) throw fail('referenceNotFound', 'service_id');
  return plan;
}

/** The API view, in the currency of the subscriber's plan (the system's when the plan is gone). */
export async function viewOf(row: SubscriberRow) {
  const plans = await plansById(db(), [row.serviceId]);
  return subscriberView(row, plans.get(row.serviceId)?.currency ?? (await loadSettings(db(), ['currency'])).currency);
}
