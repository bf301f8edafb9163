/**
 * Checking a second-factor code against a manager's row, and the token a finished sign-in gets.
 * A 6-digit code is a TOTP code, anything else a recovery code (docs/two-factor.md).
 */
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { recordAuditAs } from '../../shared/audit';
import type { Role } from '../../shared/auth/claims';
import { signToken } from '../../shared/auth/jwt';
import { decrypt } from '../../shared/auth/secrets';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { managerRecoveryCodes, managers } from '../../shared/db/schema';
import { recoveryCodeHash } from './recovery-codes';
import { matchingStep, TOTP_CODE } from './totp';

export type ManagerRow = typeof managers.$inferSelect;

/**
 * Which kind of code was accepted, or null. Acceptance is one conditional statement: a TOTP code
 * moves `totp_last_step` forward only past the last step used (of two requests with one code, one
 * wins, and a code seen once is refused for the rest of its window), a recovery code is marked used
 * only while unused, with its audit row in the same transaction (`ip`: the caller's address).
 */
export async function acceptCode(
  manager: ManagerRow,
  code: string,
  ip: string | null,
): Promise<'totp' | 'recovery' | null> {
  if (!manager.totpSecret) return null;
  if (TOTP_CODE.test(code)) {
    const step = matchingStep(decrypt(manager.totpSecret), code);
    if (step === null) return null;
    const moved = await db()
      .update(managers)
      .set({ totpLastStep: step })
      .where(and(eq(managers.id, manager.id), or(isNull(managers.totpLastStep), lt(managers.totpLastStep, step))))
      .returning({ id: managers.id });
    return moved.length ? 'totp' : null;
  }
  if (manager.totpEnabledAt === null) return null;
  return db().transaction(async (tx) => {
    const used = await tx
      .update(managerRecoveryCodes)
      .set({ usedAt: sql`now()` })
      .where(
        and(
          eq(managerRecoveryCodes.managerId, manager.id),
          eq(managerRecoveryCodes.codeHash, recoveryCodeHash(code)),
          isNull(managerRecoveryCodes.usedAt),
        ),
      )
      .returning({ id: managerRecoveryCodes.id });
    if (!used.length) return null;
    await recordAuditAs(
      tx,
      { managerId: manager.id, actorType: 'manager', apiKeyId: null, ip },
      { action: 'auth.recovery_code_used', entity: 'manager', entityId: manager.id, resellerId: manager.resellerId },
    );
    return 'recovery' as const;
  });
}

/** The access token of a sign-in: `amr` says how it was proved; `enrolOnly` under require_two_factor. */
export function issueToken(
  manager: ManagerRow,
  amr: string[],
  enrolOnly = false,
): { token: string; expires_at: string } {
  const cfg = config();
  const { token, expiresAt } = signToken(
    {
      managerId: manager.id,
      role: manager.role as Role,
      resellerId: manager.resellerId,
      permissions: manager.permissions,
      tokenVersion: manager.tokenVersion,
      amr,
      enrolOnly,
    },
    cfg.jwtSecret,
    cfg.jwtTtlSeconds,
  );
  return { token, expires_at: expiresAt.toISOString() };
}
