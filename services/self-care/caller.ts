/**
 * Who is calling a self-care route: the subscriber the gateway verified from its token. Every
 * /api/my read and write is scoped by this id and by nothing the request says.
 */
import { subscriberActor, type Auth } from '../../shared/auth/claims';
import { fail } from '../../shared/failures';
import type { Ctx, SubscriberCaller } from '../../shared/http/context';

export function callerOf(ctx: Ctx<unknown>): SubscriberCaller {
  const me = ctx.meta.subscriber;
  // A manager's identity never stands in for a subscriber's (the gateway never sets both).
  if (!me || ctx.meta.auth) throw fail('unauthorized');
  return me;
}

/** The actor the operators' use cases run as for this subscriber (audit: actor_type `subscriber`). */
export function actorFor(ctx: Ctx<unknown>): Auth {
  const me = callerOf(ctx);
  return subscriberActor(me.subscriberId, me.jti, ctx.meta.ip);
}
