/**
 * A code given inside a signed-in request, checked under the sign-in limits (docs/two-factor.md):
 * a manager's own change to its two-factor sign-in, and the fresh second factor that the steps
 * granting admin sign-in or another manager's second factor ask of their caller.
 */
import { eq } from 'drizzle-orm';
import type { Auth } from '../../shared/auth/claims';
import { db } from '../../shared/db/client';
import { managers } from '../../shared/db/schema';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import { acceptCode, type ManagerRow } from './second-factor';
import { startTry } from './sign-in-limits';

/** A code for `manager`, checked under the sign-in limits; wrong is counted, audited and refused. */
export async function requireCode(ctx: Ctx<unknown>, manager: ManagerRow, given: string): Promise<void> {
  const attempt = await startTry(ctx, manager.username);
  if (await acceptCode(manager, given, ctx.meta.ip ?? null)) return attempt.giveBack();
  await attempt.failed({ action: 'auth.two_factor_failed', managerId: manager.id });
  throw fail('twoFactorCodeWrong');
}

/**
 * The caller proves its own second factor in this request (`field` names where the code goes). A
 * stolen token of a manager with two-factor on is then not enough for the step. A caller without it
 * passes: it signs in with one factor, which its token already stands for; an operator who wants
 * more of every manager turns `require_two_factor` on.
 */
export async function requireFreshCode(ctx: Ctx<unknown>, auth: Auth, given: string | undefined, field: string) {
  const [caller] = await db().select().from(managers).where(eq(managers.id, auth.managerId));
  if (!caller) throw fail('managerGone');
  if (caller.totpEnabledAt === null) return;
  if (given === undefined) throw fail('freshCodeRequired', field);
  await requireCode(ctx, caller, given);
}
