import { eq } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { verifyPassword } from '../../shared/auth/passwords';
import { signToken } from '../../shared/auth/jwt';
import type { Role } from '../../shared/auth/claims';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { managers, tokenBlacklist } from '../../shared/db/schema';
import { fail } from '../../shared/failures';
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
        errors: { 401: 'Wrong username or password' },
      },
      async handler(ctx: Ctx<Infer<typeof loginBody>>): Promise<ActionResult> {
        const [manager] = await db().select().from(managers).where(eq(managers.username, ctx.params.username));
        const ok = await verifyPassword(ctx.params.password, manager?.passwordHash);
        if (!manager || !ok) throw fail('badCredentials');
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
