import { eq } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { verifyPassword } from '../../shared/auth/passwords';
import { signToken } from '../../shared/auth/jwt';
import type { Role } from '../../shared/auth/claims';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { managers, tokenBlacklist } from '../../shared/db/schema';
import { unauthorized } from '../../shared/errors';
import { authOf, type Ctx } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';

export const authService: ServiceSchema = {
  name: 'auth',
  actions: {
    login: {
      async handler(ctx: Ctx<{ username: string; password: string }>): Promise<ActionResult> {
        const [manager] = await db().select().from(managers).where(eq(managers.username, ctx.params.username));
        const ok = await verifyPassword(ctx.params.password, manager?.passwordHash);
        if (!manager || !ok) throw unauthorized('invalid username or password');
        const cfg = config();
        const { token, expiresAt } = signToken(
          {
            managerId: manager.id,
            role: manager.role as Role,
            resellerId: manager.resellerId,
            permissions: manager.permissions,
          },
          cfg.jwtSecret,
          cfg.jwtTtlSeconds,
        );
        return { data: { token, expires_at: expiresAt.toISOString() } };
      },
    },
    logout: {
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
