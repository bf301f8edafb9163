/**
 * Idempotency-Key on create, payment and quick-pay. The key row is inserted in the same transaction
 * as the write and completed with the response before commit, so:
 * - a repeat after commit finds the row and gets the stored response (status and body), nothing written;
 * - a concurrent repeat blocks on the unique key until the first commits, then does the same;
 * - when the first fails, its rollback removes the key too, and a repeat simply runs again;
 * - the same key with another route or body is 409.
 * Keys are per manager (the JWT's `sub`) and kept for 24 hours (the overdue job prunes them).
 */
import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { db, type Tx } from '../../shared/db/client';
import { idempotencyKeys } from '../../shared/db/schema';
import { fail } from '../../shared/failures';
import { authOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';

export const KEY_TTL_HOURS = 24;
const MAX_KEY_LENGTH = 200;

/** JSON with sorted object keys, so the same body hashes the same whatever its key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(route: string, params: unknown): string {
  return crypto.createHash('sha256').update(route).update('\n').update(canonical(params)).digest('hex');
}

/** Runs `work` in one transaction, honouring the request's Idempotency-Key when it has one. */
export async function idempotentWrite(
  ctx: Ctx<unknown>,
  successStatus: number,
  work: (tx: Tx) => Promise<ActionResult>,
): Promise<ActionResult> {
  const key = ctx.meta.idempotencyKey;
  if (!key) return db().transaction(work);
  if (key.length > MAX_KEY_LENGTH) throw fail('idempotencyKeyTooLong', MAX_KEY_LENGTH);
  const managerId = authOf(ctx).managerId;
  const route = ctx.meta.route ?? ctx.action?.name ?? '';
  const hash = requestHash(route, ctx.params);
  return db().transaction(async (tx) => {
    const inserted = await tx
      .insert(idempotencyKeys)
      .values({ managerId, key, route, requestHash: hash })
      .onConflictDoNothing()
      .returning({ key: idempotencyKeys.key });
    if (inserted.length === 0) {
      const [first] = await tx
        .select()
        .from(idempotencyKeys)
        .where(and(eq(idempotencyKeys.managerId, managerId), eq(idempotencyKeys.key, key)));
      if (first.route !== route || first.requestHash !== hash) {
        throw fail('idempotencyKeyReused');
      }
      ctx.meta.$statusCode = first.statusCode ?? successStatus;
      return first.response as ActionResult;
    }
    const result = await work(tx);
    await tx
      .update(idempotencyKeys)
      .set({ statusCode: successStatus, response: result })
      .where(and(eq(idempotencyKeys.managerId, managerId), eq(idempotencyKeys.key, key)));
    return result;
  });
}

/** A request's write as a use case sees it: whether it carries a key, and its transaction. */
export interface RequestWrite {
  keyed: boolean;
  transaction(work: (tx: Tx) => Promise<ActionResult>): Promise<ActionResult>;
}

export function requestWrite(ctx: Ctx<unknown>, successStatus: number): RequestWrite {
  return { keyed: Boolean(ctx.meta.idempotencyKey), transaction: (work) => idempotentWrite(ctx, successStatus, work) };
}

export async function pruneIdempotencyKeys(): Promise<number> {
  const res = await db()
    .delete(idempotencyKeys)
    .where(sql`${idempotencyKeys.createdAt} < now() - make_interval(hours => ${KEY_TTL_HOURS})`);
  return res.rowCount ?? 0;
}
