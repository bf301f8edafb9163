/**
 * A Disconnect-ACK is the NAS's word, not the session's end (daloRADIUS #463: the router
 * acknowledges and the user stays online). Every `DISCONNECT_VERIFY_CHECK_MS` this looks at the
 * sessions acknowledged (`outcome: disconnected` in `coa_outcomes`) at least
 * `DISCONNECT_VERIFY_SECONDS` (60) ago: a session whose `radacct` row is still open is recorded as
 * such (a `coa_outcomes` row, `source: verify`) and removed through the router API
 * (`/ppp/active/remove`, found by name or by its IPv4 or IPv6 addresses), when the NAS has API
 * credentials.
 *
 * The rows are read by id from a watermark (the newest outcome already looked at), so the check
 * costs a primary-key range of the last minute's outcomes however long `coa_outcomes` grows; one
 * process at a time checks (advisory lock), so replicas neither kick nor record twice.
 */
import { sql } from 'drizzle-orm';
import { db } from '../../shared/db/client';
import { withTryLock } from '../../shared/db/try-lock';
import { intVar } from '../../shared/config';
import type { OutcomeRecord } from './outcomes';
import { loadNas } from './reconcile';
import { RouterOsError, type RouterOsClient } from './routeros/client';
import type { SessionResult } from './router-actions';
import { apiTarget, routerKey } from './sessions';

const VERIFY_LOCK = 26_0002;
/** How far back (outcome ids) the first check of a process looks. */
const START_LOOKBACK_IDS = 200_000;

export interface VerifyOptions {
  afterSeconds: number;
  checkMs: number;
}

export function verifyOptions(env: NodeJS.ProcessEnv = process.env): VerifyOptions {
  return {
    afterSeconds: intVar(env, 'DISCONNECT_VERIFY_SECONDS', 60, 1),
    checkMs: intVar(env, 'DISCONNECT_VERIFY_CHECK_MS', 10_000, 50),
  };
}

interface StillOpen extends Record<string, unknown> {
  outcome_id: string;
  subscriber_id: number | null;
  username: string;
  session: SessionResult;
  acked_at: Date;
  /** The open accounting row: the name and addresses the router may know the session by. */
  acct_username: string | null;
  framed_ip: string | null;
  framed_ipv6_prefix: string | null;
  delegated_ipv6_prefix: string | null;
  calling_station_id: string | null;
}

export class DisconnectVerifier {
  private watermark: number | undefined;

  constructor(
    private readonly routeros: RouterOsClient,
    private readonly write: (records: OutcomeRecord[]) => Promise<void>,
    readonly options: VerifyOptions = verifyOptions(),
  ) {}

  /** One check; the records written (empty when another process holds the lock). */
  async check(): Promise<OutcomeRecord[]> {
    return (await withTryLock(VERIFY_LOCK, () => this.checkLocked())) ?? [];
  }

  private async checkLocked(): Promise<OutcomeRecord[]> {
    if (this.watermark === undefined) {
      const { rows } = await db().execute<{ id: string | null }>(sql`
        select max(id) as id from coa_outcomes
         where id > (select coalesce(max(id), 0) from coa_outcomes) - ${START_LOOKBACK_IDS}
           and created_at < now() - make_interval(secs => ${this.options.afterSeconds * 10})`);
      this.watermark = Number(rows[0]?.id ?? 0);
    }
    // The acknowledged sessions of outcomes now old enough, and the newest such outcome id.
    const { rows: due } = await db().execute<{ max_id: string | null }>(sql`
      select max(id) as max_id from coa_outcomes
       where id > ${this.watermark} and created_at < now() - make_interval(secs => ${this.options.afterSeconds})`);
    const upTo = Number(due[0]?.max_id ?? 0);
    if (!upTo) return [];
    const { rows } = await db().execute<StillOpen>(sql`
      select o.id as outcome_id, o.subscriber_id, o.username, s as session, o.created_at as acked_at,
             r.username as acct_username, host(r.framedipaddress) as framed_ip,
             text(r.framedipv6prefix) as framed_ipv6_prefix, text(r.delegatedipv6prefix) as delegated_ipv6_prefix,
             nullif(r.callingstationid, '') as calling_station_id
        from coa_outcomes o
        cross join lateral jsonb_array_elements(o.sessions) s
        cross join lateral (
           select r.username, r.framedipaddress, r.framedipv6prefix, r.delegatedipv6prefix, r.callingstationid
             from radacct r
            where r.acctstoptime is null
              and r.acctsessionid = s->>'session_id'
              and r.nasipaddress = (s->>'nas_ip')::inet
              and coalesce(r.acctstarttime, o.created_at) <= o.created_at
            limit 1) r
       where o.id > ${this.watermark} and o.id <= ${upTo}
         and o.action = 'disconnect' and o.source in ('event', 'request')
         and s->>'outcome' = 'disconnected'
       order by o.id`);
    this.watermark = upTo;
    const records: OutcomeRecord[] = [];
    for (const r of rows) records.push(await this.retry(r));
    if (records.length) await this.write(records);
    return records;
  }

  private async retry(r: StillOpen): Promise<OutcomeRecord> {
    const s = r.session;
    const note = `acknowledged (outcome ${r.outcome_id}) but still open in accounting ${this.options.afterSeconds} s later`;
    const result: SessionResult = { ...s, via: 'api', error_cause: null, attempts: 0, rtt_ms: null, detail: note };
    const nas = s.nas ? await loadNas(s.nas.id).catch(() => undefined) : undefined;
    const target = nas ? apiTarget(nas) : null;
    if (!target) {
      result.outcome = 'failed';
      result.detail = `${note}; no router API credentials to retry with`;
    } else {
      try {
        const removed = await this.routeros.removePppSession(
          target,
          routerKey(r.username, {
            username: r.acct_username ?? r.username,
            framedIp: r.framed_ip,
            framedIpv6Prefix: r.framed_ipv6_prefix,
            delegatedIpv6Prefix: r.delegated_ipv6_prefix,
            callingStationId: r.calling_station_id,
          }),
        );
        result.outcome = removed > 0 ? 'kicked' : 'offline';
        result.detail =
          removed > 0
            ? `${note}; removed through the router API`
            : `${note}; the router has no such session (accounting missed its Stop)`;
      } catch (err) {
        result.outcome = 'failed';
        result.detail = `${note}; router API: ${err instanceof RouterOsError ? `${err.kind}: ${err.message}` : String(err)}`;
      }
    }
    return {
      event_id: null,
      source: 'verify',
      action: 'disconnect',
      subscriber_id: r.subscriber_id,
      username: r.username,
      reason: note,
      outcome: result.outcome,
      sessions: [result],
    };
  }
}
