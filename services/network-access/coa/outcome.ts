/** RFC 5176 replies in the words an operator reads: what happened to the session. */

/** RFC 5176 section 3.5, the Error-Cause values a NAS may put in a NAK. */
export const ERROR_CAUSES: Record<number, string> = {
  201: 'Residual Session Context Removed',
  202: 'Invalid EAP Packet (Ignored)',
  401: 'Unsupported Attribute',
  402: 'Missing Attribute',
  403: 'NAS Identification Mismatch',
  404: 'Invalid Request',
  405: 'Unsupported Service',
  406: 'Unsupported Extension',
  407: 'Invalid Attribute Value',
  501: 'Administratively Prohibited',
  502: 'Request Not Routable (Proxy)',
  503: 'Session Context Not Found',
  504: 'Session Context Not Removable',
  505: 'Other Proxy Processing Error',
  506: 'Resources Unavailable',
  507: 'Request Initiated',
  508: 'Multiple Session Selection Unsupported',
};

export const SESSION_NOT_FOUND = 503;
export const RESOURCES_UNAVAILABLE = 506;

export interface ErrorCause {
  code: number;
  name: string;
}

export function errorCause(code: number | null): ErrorCause | null {
  if (code === null) return null;
  return { code, name: ERROR_CAUSES[code] ?? 'Unknown' };
}

/** How one CoA exchange ended, as the client saw it on the wire. */
export type CoaReply =
  | { kind: 'ack'; attempts: number; rttMs: number }
  | { kind: 'nak'; errorCause: number | null; attempts: number; rttMs: number }
  | { kind: 'timeout'; attempts: number }
  | { kind: 'error'; attempts: number; message: string };

/**
 * What happened to the session, as the API and the outcome table state it:
 * - `disconnected` / `applied`: the NAS acknowledged the Disconnect / CoA;
 * - `offline`: no live session in accounting, or the NAS says it has none (Error-Cause 503);
 * - `rejected`: the NAS refused (NAK) with another cause;
 * - `kicked`: CoA went unanswered and the router API removed the session;
 * - `failed`: neither CoA nor the fallback did it (no answer, no API access, unknown NAS).
 */
export type Outcome = 'disconnected' | 'applied' | 'offline' | 'rejected' | 'kicked' | 'failed';

export function outcomeOfReply(reply: CoaReply, action: 'disconnect' | 'rate_limit'): Outcome | 'timeout' {
  switch (reply.kind) {
    case 'ack':
      return action === 'disconnect' ? 'disconnected' : 'applied';
    case 'nak':
      return reply.errorCause === SESSION_NOT_FOUND ? 'offline' : 'rejected';
    case 'timeout':
      return 'timeout';
    case 'error':
      return 'failed';
  }
}

/** Several sessions of one subscriber: the one outcome that says the most about the subscriber. */
const RANK: Outcome[] = ['failed', 'rejected', 'kicked', 'disconnected', 'applied', 'offline'];

export function combineOutcomes(outcomes: Outcome[]): Outcome {
  if (outcomes.length === 0) return 'offline';
  return outcomes.reduce((best, o) => (RANK.indexOf(o) < RANK.indexOf(best) ? o : best));
}
