/**
 * Enrolment in two-factor sign-in and its changes (docs/two-factor.md), for the signed-in manager
 * itself or, by an admin, for any manager (`manager_id`). Enrolment keeps an encrypted secret and
 * answers its otpauth URI and QR code; a code confirms it and enables sign-in with a second step,
 * answering ten recovery codes once. Changing one's own two-factor sign-in after that needs a code;
 * an admin changes another manager's without one (a lost phone). A wrong code counts against the
 * sign-in limits of the manager it was checked for.
 */
import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { recordAudit } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import { requireAdmin } from '../../shared/auth/policy';
import { encrypt } from '../../shared/auth/secrets';
import { db, type DbOrTx } from '../../shared/db/client';
import { managerRecoveryCodes, managers } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { authOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { idSchema, isoTimestamp, object, type Infer } from '../../shared/http/schemas';
import { loadSettings } from '../../shared/settings';
import { newRecoveryCodes, recoveryCodeHash } from './recovery-codes';
import { acceptCode, issueToken, type ManagerRow } from './second-factor';
import { startTry } from './sign-in-limits';
import { enrolmentUri, newTotpSecret, qrDataUrl } from './totp';

const managerId = { ...idSchema, description: "another manager's id (admin only); default: the caller" };
const code = { type: 'string', minLength: 1, maxLength: 64, description: 'a TOTP code, or a recovery code' } as const;
const targetQuery = object({ manager_id: managerId });
const codeBody = object({ manager_id: managerId, code }, ['code']);
const optionalCodeBody = object({ manager_id: managerId, code });

const errors = {
  400: `${FAILURES.twoFactorCodeWrong.message}; ${FAILURES.twoFactorCodeRequired.message}`,
  403: `${FAILURES.keyCannotChangeTwoFactor.message}; another manager's (not an admin)`,
  404: FAILURES.managerNotFound.message,
  429: FAILURES.loginLocked.message,
};

/** The manager a request is about: the caller, or (admin) the one it names. API keys never. */
async function target(auth: Auth, id: number | undefined): Promise<{ manager: ManagerRow; own: boolean }> {
  if (auth.keyId !== undefined) throw fail('keyCannotChangeTwoFactor');
  const own = id === undefined || id === auth.managerId;
  // An enrol-only token proved a password alone: it may set up its own manager's second step, never
  // read or set another's secret and recovery codes, even an admin's.
  if (!own && auth.enrolOnly) throw fail('twoFactorEnrolmentRequired');
  if (!own) requireAdmin(auth);
  const [manager] = await db()
    .select()
    .from(managers)
    .where(eq(managers.id, id ?? auth.managerId));
  if (!manager) throw fail('managerNotFound');
  return { manager, own };
}

/** A code for `manager`, checked under the sign-in limits; wrong is counted, audited and refused. */
async function requireCode(ctx: Ctx<unknown>, manager: ManagerRow, given: string): Promise<void> {
  const attempt = await startTry(ctx, manager.username);
  if (await acceptCode(manager, given, ctx.meta.ip ?? null)) return attempt.giveBack();
  await attempt.failed({ action: 'auth.two_factor_failed', managerId: manager.id });
  throw fail('twoFactorCodeWrong');
}

/** Disable and new codes act on a manager with two-factor on: its own call proves it with a code. */
async function enabledTarget(ctx: Ctx<{ manager_id?: number; code?: string }>, auth: Auth): Promise<ManagerRow> {
  const { manager, own } = await target(auth, ctx.params.manager_id);
  if (manager.totpEnabledAt === null) throw fail('twoFactorNotEnabled');
  if (own) {
    if (ctx.params.code === undefined) throw fail('twoFactorCodeRequired');
    await requireCode(ctx, manager, ctx.params.code);
  }
  return manager;
}

/** Replaces the manager's recovery codes; answers the new ones as shown (once). */
async function replaceRecoveryCodes(tx: DbOrTx, id: number): Promise<string[]> {
  const codes = newRecoveryCodes();
  await tx.delete(managerRecoveryCodes).where(eq(managerRecoveryCodes.managerId, id));
  await tx.insert(managerRecoveryCodes).values(codes.map((c) => ({ managerId: id, codeHash: recoveryCodeHash(c) })));
  return codes;
}

function audit(tx: DbOrTx, auth: Auth, manager: ManagerRow, action: string, details: Record<string, unknown> = {}) {
  return recordAudit(tx, auth, {
    action,
    entity: 'manager',
    entityId: manager.id,
    resellerId: manager.resellerId,
    details: { username: manager.username, ...details },
  });
}

export const twoFactorService: ServiceSchema = {
  name: 'two-factor',
  actions: {
    status: {
      rest: 'GET /api/auth/two-factor',
      http: {
        auth: 'jwt',
        access: 'any authenticated (own; admin: any manager)',
        summary: "A manager's two-factor sign-in: enabled, enrolment pending, unused recovery codes, required",
        tag: 'auth',
        query: targetQuery,
        errors,
        enrolment: true,
      },
      async handler(ctx: Ctx<Infer<typeof targetQuery>>): Promise<ActionResult> {
        const { manager } = await target(authOf(ctx), ctx.params.manager_id);
        const [[{ left }], settings] = await Promise.all([
          db()
            .select({ left: count() })
            .from(managerRecoveryCodes)
            .where(and(eq(managerRecoveryCodes.managerId, manager.id), isNull(managerRecoveryCodes.usedAt))),
          loadSettings(db(), ['require_two_factor']),
        ]);
        return {
          data: {
            manager_id: manager.id,
            enabled: manager.totpEnabledAt !== null,
            enabled_at: isoTimestamp(manager.totpEnabledAt),
            pending: manager.totpEnabledAt === null && manager.totpSecret !== null,
            recovery_codes_left: left,
            required: settings.require_two_factor,
          },
        };
      },
    },
    enrol: {
      rest: 'POST /api/auth/two-factor/enrol',
      http: {
        auth: 'jwt',
        access: 'any authenticated (own; admin: any manager)',
        summary:
          'Start enrolment: a new secret (kept encrypted), its otpauth URI and QR code (a data: URL); confirm with a code to enable',
        tag: 'auth',
        body: targetQuery,
        errors: { ...errors, 409: FAILURES.twoFactorAlreadyEnabled.message },
        enrolment: true,
      },
      async handler(ctx: Ctx<Infer<typeof targetQuery>>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const { manager } = await target(auth, ctx.params.manager_id);
        const secret = newTotpSecret();
        const started = await db().transaction(async (tx) => {
          const [row] = await tx
            .update(managers)
            .set({ totpSecret: encrypt(secret), totpLastStep: null })
            .where(and(eq(managers.id, manager.id), isNull(managers.totpEnabledAt)))
            .returning({ id: managers.id });
          if (!row) return false;
          await tx.delete(managerRecoveryCodes).where(eq(managerRecoveryCodes.managerId, manager.id));
          await audit(tx, auth, manager, 'two_factor.enrol');
          return true;
        });
        if (!started) throw fail('twoFactorAlreadyEnabled');
        const { operator_name: issuer } = await loadSettings(db(), ['operator_name']);
        const uri = enrolmentUri(secret, issuer, manager.username);
        return { data: { otpauth_url: uri, secret, qr: await qrDataUrl(uri) } };
      },
    },
    confirm: {
      rest: 'POST /api/auth/two-factor/confirm',
      http: {
        auth: 'jwt',
        access: 'any authenticated (own; admin: any manager)',
        summary:
          'Confirm enrolment with a TOTP code: enables two-factor sign-in and answers ten recovery codes, once (and, for oneself, a token with amr [pwd, otp])',
        tag: 'auth',
        body: codeBody,
        errors: {
          ...errors,
          409: `${FAILURES.twoFactorNotStarted.message}; ${FAILURES.twoFactorAlreadyEnabled.message}`,
        },
        enrolment: true,
      },
      async handler(ctx: Ctx<Infer<typeof codeBody>>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const { manager, own } = await target(auth, ctx.params.manager_id);
        if (manager.totpEnabledAt !== null) throw fail('twoFactorAlreadyEnabled');
        if (manager.totpSecret === null) throw fail('twoFactorNotStarted');
        await requireCode(ctx, manager, ctx.params.code);
        const codes = await db().transaction(async (tx) => {
          const [row] = await tx
            .update(managers)
            .set({ totpEnabledAt: sql`now()` })
            .where(and(eq(managers.id, manager.id), eq(managers.totpSecret, manager.totpSecret!)))
            .returning({ id: managers.id });
          // Enrolment started again between the check and now: this code was for the old secret.
          if (!row) throw fail('twoFactorNotStarted');
          await audit(tx, auth, manager, 'two_factor.enable');
          return replaceRecoveryCodes(tx, manager.id);
        });
        // The caller has just proved the second factor: its enrol-only token gives way to a full one.
        const token = own ? issueToken(manager, ['pwd', 'otp']) : {};
        return { data: { enabled: true, recovery_codes: codes, ...token } };
      },
    },
    disable: {
      rest: 'POST /api/auth/two-factor/disable',
      http: {
        auth: 'jwt',
        access: 'any authenticated (own, with a code; admin: any manager, without one)',
        summary: 'Turn two-factor sign-in off: the secret and recovery codes are deleted',
        tag: 'auth',
        body: optionalCodeBody,
        errors: { ...errors, 409: FAILURES.twoFactorNotEnabled.message },
      },
      async handler(ctx: Ctx<Infer<typeof optionalCodeBody>>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const manager = await enabledTarget(ctx, auth);
        await db().transaction(async (tx) => {
          await tx
            .update(managers)
            .set({ totpSecret: null, totpEnabledAt: null, totpLastStep: null })
            .where(eq(managers.id, manager.id));
          await tx.delete(managerRecoveryCodes).where(eq(managerRecoveryCodes.managerId, manager.id));
          await audit(tx, auth, manager, 'two_factor.disable');
        });
        return { data: { enabled: false } };
      },
    },
    recoveryCodes: {
      rest: 'POST /api/auth/two-factor/recovery-codes',
      http: {
        auth: 'jwt',
        access: 'any authenticated (own, with a code; admin: any manager, without one)',
        summary: 'Replace the recovery codes: ten new ones, answered once; the old ones stop working',
        tag: 'auth',
        body: optionalCodeBody,
        errors: { ...errors, 409: FAILURES.twoFactorNotEnabled.message },
      },
      async handler(ctx: Ctx<Infer<typeof optionalCodeBody>>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const manager = await enabledTarget(ctx, auth);
        const codes = await db().transaction(async (tx) => {
          await audit(tx, auth, manager, 'two_factor.recovery_codes');
          return replaceRecoveryCodes(tx, manager.id);
        });
        return { data: { recovery_codes: codes } };
      },
    },
  },
};
