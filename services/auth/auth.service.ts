import { eq } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { verifyPassword } from '../../shared/auth/passwords';
import { signToken } from '../../shared/auth/jwt';
import type { Role } from '../../shared/auth/claims';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { auditLog, managers, tokenBlacklist } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { authOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { emptyBody, object, type Infer } from '../../shared/http/schemas';

const loginBody = object(
  {
    username: { type: 'string', minLength: 1, maxLength: 200 },
    password: { type: 'string', minLength: 1, maxLength: 200 },
  },
  ['username', 'password'],
);

/**
 * Failed sign-ins per username and per client address (docs/security.md): past the limit within
 * the window, 429 with Retry-After until the window ends. Kept in each auth process's memory.
 */
let limiters: { username: RateLimiterMemory; address: RateLimiterMemory } | undefined;
function limits() {
  const cfg = config();
  limiters ??= {
    username: new RateLimiterMemory({ points: cfg.loginFailuresPerUsername, duration: cfg.loginLockSeconds }),
    address: new RateLimiterMemory({ points: cfg.loginFailuresPerAddress, duration: cfg.loginLockSeconds }),
  };
  return limiters;
}

async function refuseWhileLocked(ctx: Ctx<unknown>, username: string, ip: string): Promise<void> {
  const l = limits();
  const [byName, byAddress] = await Promise.all([l.username.get(username), l.address.get(ip)]);
  const locked = [
    [byName, l.username.points],
    [byAddress, l.address.points],
  ] as const;
  const waitMs = Math.max(
    0,
    ...locked.filter(([r, max]) => r && r.consumedPoints >= max).map(([r]) => r!.msBeforeNext),
  );
  if (waitMs > 0) {
    ctx.meta.$responseHeaders = { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) };
    throw fail('loginLocked');
  }
}

export const authService: ServiceSchema = {
  name: 'auth',
  actions: {
    login: {
      rest: 'POST /api/auth/login',
      http: {
        auth: 'public',
        access: 'none',
        summary: 'Exchange manager credentials for a JWT',
        tag: 'auth',
        body: loginBody,
        errors: {
          401: 'Wrong username or password',
          429: `${FAILURES.loginLocked.message} (per username and per address; Retry-After)`,
        },
      },
      async handler(ctx: Ctx<Infer<typeof loginBody>>): Promise<ActionResult> {
        const ip = ctx.meta.ip ?? 'unknown';
        const username = ctx.params.username.toLowerCase();
        await refuseWhileLocked(ctx, username, ip);
        const [manager] = await db().select().from(managers).where(eq(managers.username, ctx.params.username));
        const ok = await verifyPassword(ctx.params.password, manager?.passwordHash);
        if (!manager || !ok) {
          // Counted and audited alike whether the username exists or not: the answer tells nothing.
          await Promise.all([limits().username.penalty(username), limits().address.penalty(ip)]);
          await db()
            .insert(auditLog)
            .values({
              actorType: 'anonymous',
              ip,
              action: 'auth.login_failed',
              entity: 'manager',
              entityId: manager?.id ?? null,
              details: { username: ctx.params.username },
            });
          throw fail('badCredentials');
        }
        await limits().username.delete(username);
        if (!manager.active) throw fail('managerDisabled');
        const cfg = config();
        const { token, expiresAt } = signToken(
          {
            managerId: manager.id,
            role: manager.role as Role,
            resellerId: manager.resellerId,
            permissions: manager.permissions,
            tokenVersion: manager.tokenVersion,
          },
          cfg.jwtSecret,
          cfg.jwtTtlSeconds,
        );
        return { data: { token, expires_at: expiresAt.toISOString() } };
      },
    },
    logout: {
      rest: 'POST /api/auth/logout',
      http: {
        auth: 'jwt',
        access: 'any authenticated',
        summary: 'Revoke the calling token (its jti is blacklisted)',
        tag: 'auth',
        body: emptyBody,
      },
      async handler(ctx: Ctx): Promise<ActionResult> {
        const auth = authOf(ctx);
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
