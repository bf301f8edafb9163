/** Rows the billing tests need, inserted directly (the subscribers service is built elsewhere). */
import { eq } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import * as schema from '../../shared/db/schema';
import { resellers, services, subscribers } from '../../shared/db/schema';

type Db = NodePgDatabase<typeof schema>;

export async function seedReseller(
  db: Db,
  opts: { name: string; parentId?: number; commissionRate?: string; currency?: string },
) {
  const parent = opts.parentId
    ? (await db.select().from(resellers).where(eq(resellers.id, opts.parentId)))[0]
    : undefined;
  const [row] = await db
    .insert(resellers)
    .values({
      name: opts.name,
      parentId: opts.parentId ?? null,
      path: '',
      commissionRate: opts.commissionRate ?? '0',
      currency: opts.currency ?? 'USD',
    })
    .returning();
  const [withPath] = await db
    .update(resellers)
    .set({ path: `${parent?.path ?? '/'}${row.id}/` })
    .where(eq(resellers.id, row.id))
    .returning();
  return withPath;
}

let planSeq = 0;
export async function seedPlan(
  db: Db,
  opts: { price: number; durationDays?: number; currency?: string; name?: string },
) {
  const [row] = await db
    .insert(services)
    .values({
      name: opts.name ?? `plan-${++planSeq}-${Math.random().toString(36).slice(2, 8)}`,
      price: opts.price,
      currency: opts.currency ?? 'USD',
      durationDays: opts.durationDays ?? 30,
    })
    .returning();
  return row;
}

let subSeq = 0;
export async function seedSubscriber(
  db: Db,
  opts: {
    resellerId: number;
    serviceId: number;
    username?: string;
    fullName?: string;
    expiryDate?: string;
    price?: number;
    overridePrice?: boolean;
  },
) {
  const [row] = await db
    .insert(subscribers)
    .values({
      username: opts.username ?? `user${++subSeq}-${Math.random().toString(36).slice(2, 8)}@isp`,
      passwordEnc: 'x',
      fullName: opts.fullName ?? null,
      serviceId: opts.serviceId,
      resellerId: opts.resellerId,
      expiryDate: opts.expiryDate ?? '2099-01-01',
      price: opts.price ?? null,
      overridePrice: opts.overridePrice ?? false,
    })
    .returning();
  return row;
}

/** A reseller, a plan and one subscriber of both: the id of the subscriber. */
export async function seedBillingSubscriber(db: Db, resellerName: string): Promise<number> {
  const r = await seedReseller(db, { name: resellerName, commissionRate: '12.5' });
  const plan = await seedPlan(db, { price: 1000 });
  return (await seedSubscriber(db, { resellerId: r.id, serviceId: plan.id })).id;
}
