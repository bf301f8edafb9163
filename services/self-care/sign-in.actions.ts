/** The self-care sign-in routes (docs/self-care.md): password, one-time code, sign-out. */
import type { ServiceActionsSchema } from 'moleculer';
import { db } from '../../shared/db/client';
import { tokenBlacklist } from '../../shared/db/schema';
import { FAILURES } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { ActionResult, HttpRoute } from '../../shared/http/route';
import { emptyBody, object, subscriberPassword, type Infer } from '../../shared/http/schemas';
import { codeSignIn, requestCode } from './sign-in-code';
import { passwordSignIn } from './sign-in';
import { requireSelfCare } from './switches';
import { callerOf } from './caller';

export const TAG = 'self-care';

const username = { type: 'string', minLength: 1, maxLength: 200 } as const;
const loginBody = object({ username, password: subscriberPassword }, ['username', 'password']);
const codeBody = object({ username }, ['username']);
const verifyBody = object({ username, code: { type: 'string', minLength: 1, maxLength: 20 } }, ['username', 'code']);

const tokenData = {
  type: 'object',
  properties: {
    token: { type: 'string' },
    expires_at: { type: 'string', format: 'date-time' },
    subscriber_id: { type: 'integer' },
  },
} as const;

const locked = `${FAILURES.loginLocked.message} (per username and per address; Retry-After)`;
const off = `${FAILURES.selfCareDisabled.message}, or the feature is`;

const publicRoute = (summary: string, body: HttpRoute['body'], errors: Record<number, string>): HttpRoute => ({
  auth: 'public',
  access: 'none (a subscriber signs in)',
  summary,
  tag: TAG,
  body,
  rateLimit: 'public',
  errors,
});

export const signInActions: ServiceActionsSchema = {
  login: {
    rest: 'POST /api/my/login',
    http: {
      ...publicRoute(
        "A subscriber's PPPoE username and password for a self-care token (short-lived; /api/my routes only)",
        loginBody,
        { 401: FAILURES.badCredentials.message, 403: off, 429: locked },
      ),
      data: tokenData,
    },
    async handler(ctx: Ctx<Infer<typeof loginBody>>): Promise<ActionResult> {
      await requireSelfCare();
      return { data: await passwordSignIn(ctx, ctx.params.username, ctx.params.password) };
    },
  },

  requestCode: {
    rest: 'POST /api/my/login/code',
    http: publicRoute(
      'Send a one-time sign-in code to the subscriber’s phone over the chat channel; the same answer whether the username exists',
      codeBody,
      { 403: off, 429: 'too many code requests (per username and per address; Retry-After)' },
    ),
    async handler(ctx: Ctx<Infer<typeof codeBody>>): Promise<ActionResult> {
      await requireSelfCare('self_care_code_sign_in');
      await requestCode(ctx, ctx.params.username);
      return { data: { sent: true, expires_in_seconds: 300 } };
    },
  },

  verifyCode: {
    rest: 'POST /api/my/login/code/verify',
    http: {
      ...publicRoute(
        'A one-time sign-in code (6 digits, single use, 5 minutes, 5 tries) for a self-care token',
        verifyBody,
        {
          401: FAILURES.signInCodeRejected.message,
          403: off,
          429: locked,
        },
      ),
      data: tokenData,
    },
    async handler(ctx: Ctx<Infer<typeof verifyBody>>): Promise<ActionResult> {
      await requireSelfCare('self_care_code_sign_in');
      return { data: await codeSignIn(ctx, ctx.params.username, ctx.params.code) };
    },
  },

  logout: {
    rest: 'POST /api/my/logout',
    http: {
      auth: 'subscriber',
      access: 'subscriber (own account only)',
      summary: 'End the calling self-care token',
      tag: TAG,
      body: emptyBody,
    },
    async handler(ctx: Ctx): Promise<ActionResult> {
      const me = callerOf(ctx);
      await db()
        .insert(tokenBlacklist)
        .values({ jti: me.jti, expiresAt: new Date(me.exp * 1000) })
        .onConflictDoNothing();
      await ctx.broadcast('auth.revoked', { jti: me.jti, exp: me.exp });
      return { data: { revoked: true } };
    },
  },
};
