import { eq } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { verifyPassword } from '../../shared/auth/passwords';
import { db } from '../../shared/db/client';
import { managers, tokenBlacklist } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { authOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { emptyBody, object, type Infer } from '../../shared/http/schemas';
import { loadSettings } from '../../shared/settings';
import { signChallenge, verifyChallenge } from './challenge';
import { acceptCode, issueToken } from './second-factor';
import { startTry } from './sign-in-limits';

const loginBody = object(
  {
    username: { type: 'string', minLength: 1, maxLength: 200 },
    password: { type: 'string', minLength: 1, maxLength: 200 },
  },
  ['username', 'password'],
);

const verifyBody = object(
  {
    challenge: { type: 'string', minLength: 1, maxLength: 2000 },
    code: { type: 'string', minLength: 1, maxLength: 64 },
  },
  ['challenge', 'code'],
);

const locked = `${FAILURES.loginLocked.message} (per username and per address; Retry-After)`;

export const authService: ServiceSchema = {
  name: 'auth',
  actions: {
    login: {
      rest: 'POST /api/auth/login',
      http: {
        auth: 'public',
        access: 'none',
        summary:
          'Exchange manager credentials for a JWT; a manager with two-factor sign-in gets a challenge for POST /api/auth/login/verify instead',
        tag: 'auth',
        body: loginBody,
        errors: { 401: 'Wrong username or password', 429: locked },
      },
      async handler(ctx: Ctx<Infer<typeof loginBody>>): Promise<ActionResult> {
        const attempt = await startTry(ctx, ctx.params.username);
        const [manager] = await db().select().from(managers).where(eq(managers.username, ctx.params.username));
        const ok = await verifyPassword(ctx.params.password, manager?.passwordHash);
        // Counted, audited and answered alike whether the username exists or not, and whether its
        // manager is disabled or not: the answer tells nothing of either.
        if (!manager || !ok || !manager.active) {
          await attempt.failed({ action: 'auth.login_failed', managerId: manager?.id ?? null });
          throw fail('badCredentials');
        }
        // With two-factor sign-in the count is cleared only by the second step: a known password
        // must not buy a fresh allowance of code guesses.
        if (manager.totpEnabledAt !== null) {
          await attempt.giveBack();
          const { challenge, expiresAt } = signChallenge(manager.id, manager.tokenVersion);
          return { data: { two_factor_required: true, challenge, expires_at: expiresAt.toISOString() } };
        }
        await attempt.signedIn();
        const { require_two_factor: required } = await loadSettings(db(), ['require_two_factor']);
        if (!required) return { data: issueToken(manager, ['pwd']) };
        return { data: { ...issueToken(manager, ['pwd'], true), two_factor_setup_required: true } };
      },
    },
    verify: {
      rest: 'POST /api/auth/login/verify',
      http: {
        auth: 'public',
        access: 'none',
        summary:
          "The second step of a two-factor sign-in: the login's challenge and a TOTP code (6 digits) or an unused recovery code, for a JWT with amr [pwd, otp]",
        tag: 'auth',
        body: verifyBody,
        errors: {
          401: `${FAILURES.twoFactorCodeRejected.message}; ${FAILURES.twoFactorChallengeInvalid.message}`,
          429: locked,
        },
      },
      async handler(ctx: Ctx<Infer<typeof verifyBody>>): Promise<ActionResult> {
        const claim = verifyChallenge(ctx.params.challenge);
        const [manager] = claim ? await db().select().from(managers).where(eq(managers.id, claim.managerId)) : [];
        // A manager disabled since its password was checked has no sign-in to finish; the answer is a
        // stale challenge's, so it tells nothing of the account.
        if (
          !claim ||
          !manager ||
          !manager.active ||
          manager.tokenVersion !== claim.tokenVersion ||
          manager.totpEnabledAt === null
        )
          throw fail('twoFactorChallengeInvalid');
        const attempt = await startTry(ctx, manager.username);
        if (!(await acceptCode(manager, ctx.params.code, ctx.meta.ip ?? 'unknown'))) {
          await attempt.failed({ action: 'auth.two_factor_failed', managerId: manager.id });
          throw fail('twoFactorCodeRejected');
        }
        await attempt.signedIn();
        return { data: issueToken(manager, ['pwd', 'otp']) };
      },
    },
    logout: {
      rest: 'POST /api/auth/logout',
      http: {
        auth: 'jwt',
        access: 'any authenticated',
        summary:
          'Revoke the calling token (its jti is blacklisted); an API key is revoked with DELETE /api/api-keys/:id instead',
        tag: 'auth',
        body: emptyBody,
        errors: { 403: FAILURES.keyCannotSignOut.message },
        enrolment: true,
      },
      async handler(ctx: Ctx): Promise<ActionResult> {
        const auth = authOf(ctx);
        // A key's jti is never checked against the blacklist: "revoked" would be a lie. Its
        // manager revokes it with DELETE /api/api-keys/:id.
        if (auth.keyId !== undefined) throw fail('keyCannotSignOut');
        await db()
          .insert(tokenBlacklist)
          .values({ jti: auth.jti, expiresAt: new Date(auth.exp * 1000) })
          .onConflictDoNothing();
        await ctx.broadcast('auth.revoked', { jti: auth.jti, exp: auth.exp });
        return { data: { revoked: true } };
      },
    },
  },
};
