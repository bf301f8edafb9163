/**
 * What network-access does to a subscriber's live sessions: disconnect them (CoA Disconnect-Request,
 * then, for a MikroTik, the router-API kick when the NAS does not answer) or change their rate as
 * the NAS's vendor profile says (a CoA-Request with the profile's attributes, Mikrotik-Rate-Limit for
 * a MikroTik; a service deactivated and activated again; or a disconnect). Each request identifies
 * the session by the attributes the profile names. Every session ends with an outcome; none of
 * this throws.
 */
import { DEFAULT_VENDOR, PROFILES, type VendorProfile } from '../../shared/vendors/profiles';
import type { CoaClient } from './coa/client';
import { encodeAttributes, type RawAttribute, type SessionAttributes } from './coa/codec';
import {
  combineOutcomes,
  errorCause,
  outcomeOfReply,
  SESSION_NOT_FOUND,
  type CoaReply,
  type ErrorCause,
  type Outcome,
} from './coa/outcome';
import { observeCoa, type CoaKind, type CoaOutcome } from '../../shared/metrics';
import { RouterOsError, type RouterOsClient } from './routeros/client';
import { apiTarget, routerKey, type LiveSession, type NasAccess } from './sessions';

const profileOf = (nas: NasAccess): VendorProfile => PROFILES[nas.vendor ?? DEFAULT_VENDOR];

/**
 * The attributes that identify `s` to its NAS, as its vendor profile names them. A vendor that
 * finds a session by its address gets the IPv6 ones accounting recorded when the session has no
 * IPv4 address (an IPv6-only session); a dual-stack session keeps its IPv4 Framed-IP-Address alone,
 * the one address every such NAS matches.
 */
function identify(profile: VendorProfile, username: string, s: LiveSession): SessionAttributes {
  const id = profile.identity;
  const byIpv6 = id.framedIp && !s.framedIp;
  return {
    userName: id.userName ? username : null,
    acctSessionId: id.acctSessionId ? s.acctSessionId : null,
    framedIp: id.framedIp ? s.framedIp : null,
    framedIpv6Address: byIpv6 ? s.framedIpv6Address : null,
    framedIpv6Prefix: byIpv6 ? s.framedIpv6Prefix : null,
    delegatedIpv6Prefix: byIpv6 ? s.delegatedIpv6Prefix : null,
  };
}

export interface SessionResult {
  session_id: string;
  ip_address: string | null;
  nas: { id: number; name: string; ip_address: string } | null;
  nas_ip: string;
  outcome: Outcome;
  /** How the outcome was reached: the CoA exchange, or the router API after CoA went unanswered. */
  via: 'coa' | 'api' | null;
  error_cause: ErrorCause | null;
  /** CoA transmissions (retransmissions and 506 retries included). */
  attempts: number;
  rtt_ms: number | null;
  detail: string | null;
}

export interface ActionResult {
  outcome: Outcome;
  sessions: SessionResult[];
}

export class RouterActions {
  constructor(
    private readonly coa: CoaClient,
    private readonly routeros: RouterOsClient,
  ) {}

  async disconnect(username: string, sessions: LiveSession[]): Promise<ActionResult> {
    return this.each(sessions, (s) => this.disconnectOne(username, s));
  }

  async changeRate(username: string, sessions: LiveSession[], rateLimit: string): Promise<ActionResult> {
    return this.each(sessions, async (s) => {
      const nas = s.nas;
      if (!nas) return unknownNas(s);
      const profile = profileOf(nas);
      // A vendor with no attribute a CoA could change (generic): the session comes back with the new rate.
      if (profile.rateChange === 'disconnect') return this.disconnectOne(username, s);
      let extra: RawAttribute[];
      try {
        extra = encodeAttributes(profile.coaRate(rateLimit));
      } catch (err) {
        return notSent(s, `cannot encode the rate for a ${profile.vendor} NAS: ${(err as Error).message}`);
      }
      const reply = await observed('coa', () =>
        this.coa.change(
          { host: nas.ip, port: nas.coaPort, secret: nas.secret },
          {
            ...identify(profile, username, s),
            extra,
          },
        ),
      );
      const outcome = outcomeOfReply(reply, 'rate_limit');
      if (outcome !== 'timeout') return fromReply(s, reply, outcome);
      // No router-API fallback for a rate change: the new rate applies at the next login anyway.
      return { ...fromReply(s, reply, 'failed'), detail: `CoA-Request unanswered after ${reply.attempts} attempts` };
    });
  }

  private async each(sessions: LiveSession[], act: (s: LiveSession) => Promise<SessionResult>): Promise<ActionResult> {
    const results = await Promise.all(sessions.map(act));
    return { outcome: combineOutcomes(results.map((r) => r.outcome)), sessions: results };
  }

  private async disconnectOne(username: string, s: LiveSession): Promise<SessionResult> {
    if (!s.nas) return unknownNas(s);
    const nas = s.nas;
    const reply = await observed('disconnect', () =>
      this.coa.disconnect(
        { host: nas.ip, port: nas.coaPort, secret: nas.secret },
        identify(profileOf(nas), username, s),
      ),
    );
    const outcome = outcomeOfReply(reply, 'disconnect');
    if (outcome !== 'timeout') return fromReply(s, reply, outcome);
    const unanswered = `Disconnect-Request unanswered after ${reply.attempts} attempts`;
    const target = apiTarget(s.nas);
    if (!target)
      return {
        ...fromReply(s, reply, 'failed'),
        detail: `${unanswered}; no API credentials on the access server for the fallback`,
      };
    const started = performance.now();
    try {
      const removed = await this.routeros.removePppSession(target, routerKey(username, s));
      observeCoa('api', removed > 0 ? 'ack' : 'no_session', (performance.now() - started) / 1000);
      return removed > 0
        ? { ...fromReply(s, reply, 'kicked'), via: 'api', detail: `${unanswered}; removed through the router API` }
        : {
            ...fromReply(s, reply, 'offline'),
            via: 'api',
            detail: `${unanswered}; the router has no active session of this user`,
          };
    } catch (err) {
      observeCoa('api', 'error', (performance.now() - started) / 1000);
      const why = err instanceof RouterOsError ? `${err.kind}: ${err.message}` : String(err);
      return { ...fromReply(s, reply, 'failed'), detail: `${unanswered}; router API fallback failed (${why})` };
    }
  }
}

/** One CoA exchange, counted and timed (retransmissions included) in coa_requests_total / _duration_seconds. */
async function observed(kind: CoaKind, exchange: () => Promise<CoaReply>): Promise<CoaReply> {
  const started = performance.now();
  const reply = await exchange();
  observeCoa(kind, coaOutcome(reply), (performance.now() - started) / 1000);
  return reply;
}

function coaOutcome(reply: CoaReply): CoaOutcome {
  if (reply.kind === 'nak' && reply.errorCause === SESSION_NOT_FOUND) return 'no_session';
  return reply.kind;
}

function base(
  s: LiveSession,
): Omit<SessionResult, 'outcome' | 'via' | 'error_cause' | 'attempts' | 'rtt_ms' | 'detail'> {
  return {
    session_id: s.acctSessionId,
    ip_address: s.framedIp ?? s.framedIpv6Address ?? null,
    nas: s.nas ? { id: s.nas.id, name: s.nas.name, ip_address: s.nas.ip } : null,
    nas_ip: s.nasIp,
  };
}

function notSent(s: LiveSession, detail: string): SessionResult {
  return { ...base(s), outcome: 'failed', via: null, error_cause: null, attempts: 0, rtt_ms: null, detail };
}

function unknownNas(s: LiveSession): SessionResult {
  return notSent(s, `access server ${s.nasIp} is not registered (POST /api/nas)`);
}

function fromReply(s: LiveSession, reply: CoaReply, outcome: Outcome): SessionResult {
  // Written out rather than spread from base(s): one of these per request of a bulk job.
  return {
    session_id: s.acctSessionId,
    ip_address: s.framedIp ?? s.framedIpv6Address ?? null,
    nas: s.nas ? { id: s.nas.id, name: s.nas.name, ip_address: s.nas.ip } : null,
    nas_ip: s.nasIp,
    outcome,
    via: 'coa',
    error_cause: reply.kind === 'nak' ? errorCause(reply.errorCause) : null,
    attempts: reply.attempts,
    rtt_ms: reply.kind === 'ack' || reply.kind === 'nak' ? Math.round(reply.rttMs * 10) / 10 : null,
    detail: reply.kind === 'error' ? reply.message : null,
  };
}
