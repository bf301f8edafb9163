import type { Context } from 'moleculer';
import type { Auth } from '../auth/claims';
import { requireAuth } from '../auth/policy';

/** What the gateway puts in `ctx.meta`, and what an action may set for the response. */
/** The signed-in subscriber of a self-care route (docs/self-care.md), as the gateway verified it. */
export interface SubscriberCaller {
  subscriberId: number;
  jti: string;
  exp: number;
}

export interface Meta {
  auth?: Auth;
  /** Self-care routes only (`auth: 'subscriber'`); never set together with `auth`. */
  subscriber?: SubscriberCaller;
  ip?: string;
  /** Routes declaring `rawBody`: the body as received and the request's headers (no credentials). */
  rawBody?: string;
  headers?: Record<string, string | undefined>;
  route?: string;
  /** Routes declaring `csv`: the request's Accept header. */
  accept?: string;
  idempotencyKey?: string;
  $statusCode?: number;
  $responseHeaders?: Record<string, string>;
}

export type Ctx<P = Record<string, unknown>> = Context<P, Meta>;

export function authOf(ctx: Ctx<unknown>): Auth {
  return requireAuth(ctx.meta.auth);
}

export function pageOf(params: { page?: number; limit?: number }): { page: number; limit: number; offset: number } {
  const page = params.page ?? 1;
  const limit = params.limit ?? 50;
  return { page, limit, offset: (page - 1) * limit };
}
