/**
 * The `sessions` service: what accounting (`radacct`) says about sessions, as lists. GET
 * /api/sessions (live) and GET /api/subscribers/:id/sessions (closed); disconnecting one or a
 * selection is POST /api/subscribers/:id/disconnect or the bulk action `disconnect`.
 */
import type { ServiceSchema } from 'moleculer';
import { FAILURES } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import { idParams, type IdPath } from '../../shared/http/schemas';
import { closedQuery, closedSession, liveQuery, liveSession, TAG } from './session-schemas';
import type { ClosedSessionsInput, LiveSessionsInput } from './session-schemas';
import { listClosedSessions } from './use-cases/list-closed-sessions';
import { listLiveSessions } from './use-cases/list-live-sessions';

export const sessionsService: ServiceSchema = {
  name: 'sessions',
  actions: {
    live: {
      rest: 'GET /api/sessions',
      http: {
        auth: 'jwt',
        access: 'subscribers.view (scope-filtered: an admin every session, a reseller its tree)',
        summary:
          "Open accounting sessions now: subscriber, access server, framed address, MAC, start, duration, bytes, the last interim's age and whether the session is stale; `stale_after_seconds` beside `data`",
        tag: TAG,
        query: liveQuery,
        data: { type: 'array', items: liveSession },
        errors: { 403: "permission subscribers.view, or reseller_id outside the caller's tree" },
      },
      handler(ctx: Ctx<LiveSessionsInput>) {
        return listLiveSessions(ctx.meta.auth, ctx.params);
      },
    },

    closed: {
      rest: 'GET /api/subscribers/:id/sessions',
      http: {
        auth: 'jwt',
        access: 'subscribers.view',
        summary:
          "The subscriber's closed sessions, newest first, with the live list's fields, the stop time and its cause",
        tag: 'subscribers',
        params: idParams(),
        query: closedQuery,
        data: { type: 'array', items: closedSession },
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.subscriberNotFound.message },
      },
      handler(ctx: Ctx<IdPath & ClosedSessionsInput>) {
        return listClosedSessions(ctx.meta.auth, ctx.params);
      },
    },
  },
};
