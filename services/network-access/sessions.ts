/**
 * Live sessions as FreeRADIUS accounting records them (an open `radacct` row), each with the access
 * server that owns it (`nas` row by `nasipaddress`): where a CoA goes and with which secret.
 */
import { sql } from 'drizzle-orm';
import { decrypt } from '../../shared/auth/secrets';
import { db } from '../../shared/db/client';
import { DEFAULT_VENDOR, type Vendor } from '../../shared/vendors/profiles';
import type { PppSessionKey } from './routeros/client';

export interface NasAccess {
  id: number;
  name: string;
  ip: string;
  secret: string;
  coaPort: number;
  /** Its vendor profile (shared/vendors/profiles.ts); absent: MikroTik. */
  vendor?: Vendor;
  /** Router API for the fallback kick, ping and torch; null without credentials. */
  api: { port: number; username: string; passwordEnc: string } | null;
}

export interface LiveSession {
  username: string;
  acctSessionId: string;
  framedIp: string | null;
  /**
   * The IPv6 columns FreeRADIUS's accounting writes (radacct framedipv6address, framedipv6prefix,
   * delegatedipv6prefix), prefixes as `address/length`; absent or null when the session has none.
   */
  framedIpv6Address?: string | null;
  framedIpv6Prefix?: string | null;
  delegatedIpv6Prefix?: string | null;
  /** radacct's callingstationid (the CPE's MAC on PPPoE); absent or null when accounting has none. */
  callingStationId?: string | null;
  nasIp: string;
  /** null when the session's NAS address matches no registered access server. */
  nas: NasAccess | null;
}

/** RouterOS's API port when the nas row names none. */
const ROUTEROS_API_PORT = 8728;
/** RFC 5176's CoA port when the nas row names none. */
const COA_PORT = 3799;

/** A nas row's CoA port and router API credentials, with their defaults (null: no API credentials). */
export function nasPorts(r: {
  coa_port: number | null;
  api_port: number | null;
  api_username: string | null;
  api_password_enc: string | null;
}): Pick<NasAccess, 'coaPort' | 'api'> {
  return {
    coaPort: r.coa_port ?? COA_PORT,
    api:
      r.api_username && r.api_password_enc
        ? { port: r.api_port ?? ROUTEROS_API_PORT, username: r.api_username, passwordEnc: r.api_password_enc }
        : null,
  };
}

interface SessionRow extends Record<string, unknown> {
  key: string;
  username: string;
  acctsessionid: string;
  framed_ip: string | null;
  framed_ipv6_address: string | null;
  framed_ipv6_prefix: string | null;
  delegated_ipv6_prefix: string | null;
  calling_station_id: string | null;
  nas_ip: string;
  nas_id: number | null;
  shortname: string | null;
  secret: string | null;
  coa_port: number | null;
  api_port: number | null;
  api_username: string | null;
  api_password_enc: string | null;
  vendor: Vendor | null;
}

/** A user name the router knows a session by, and the subscriber it belongs to (when known). */
export interface SessionOwner {
  username: string;
  subscriberId?: number | null;
}

/**
 * Open sessions per owner's user name (newest first); an owner with none is absent from the map.
 * A rename moves the subscriber's accounting rows to the new name in the same transaction, while
 * the router keeps the old one until the session ends: so the rows are looked up under the name
 * given (the one the router knows) and under the subscriber's current name.
 */
export async function liveSessions(owners: SessionOwner[]): Promise<Map<string, LiveSession[]>> {
  const out = new Map<string, LiveSession[]>();
  if (owners.length === 0) return out;
  const { rows } = await db().execute<SessionRow>(sql`
    with t as (
      select distinct * from unnest(${sql.param(owners.map((o) => o.username))}::text[], ${sql.param(owners.map((o) => o.subscriberId ?? null))}::int[])
        as t(username, subscriber_id)
    )
    select t.username as key, r.username, r.acctsessionid, host(r.framedipaddress) as framed_ip,
           host(r.framedipv6address) as framed_ipv6_address, text(r.framedipv6prefix) as framed_ipv6_prefix,
           text(r.delegatedipv6prefix) as delegated_ipv6_prefix, nullif(r.callingstationid, '') as calling_station_id,
           host(r.nasipaddress) as nas_ip, n.id as nas_id, n.shortname, n.secret, n.coa_port, n.api_port, n.api_username, n.api_password_enc,
           n.vendor
      from t
      left join subscribers s on s.id = t.subscriber_id
      cross join lateral (
        select * from radacct r
         where r.acctstoptime is null and r.username = any(array[t.username, s.username])
      ) r
      left join nas n on n.nasname = host(r.nasipaddress)
     order by t.username, r.acctstarttime desc nulls last, r.radacctid desc`);
  const seen = new Set<string>();
  for (const r of rows) {
    // One session reached through two owners of the same name is listed once.
    const id = JSON.stringify([r.key, r.acctsessionid, r.nas_ip]);
    if (seen.has(id)) continue;
    seen.add(id);
    const session: LiveSession = {
      username: r.username,
      acctSessionId: r.acctsessionid,
      framedIp: r.framed_ip,
      framedIpv6Address: r.framed_ipv6_address,
      framedIpv6Prefix: r.framed_ipv6_prefix,
      delegatedIpv6Prefix: r.delegated_ipv6_prefix,
      callingStationId: r.calling_station_id,
      nasIp: r.nas_ip,
      nas:
        r.nas_id === null
          ? null
          : {
              id: r.nas_id,
              name: r.shortname ?? '',
              ip: r.nas_ip,
              secret: r.secret ?? '',
              vendor: r.vendor ?? undefined,
              ...nasPorts(r),
            },
    };
    const list = out.get(r.key);
    if (list) list.push(session);
    else out.set(r.key, [session]);
  }
  return out;
}

/** The router API login of a NAS, its password decrypted for this use only; null when it has none or is not a MikroTik (the API is RouterOS's). */
export function apiTarget(nas: NasAccess): { host: string; port: number; username: string; password: string } | null {
  if (!nas.api || (nas.vendor ?? DEFAULT_VENDOR) !== DEFAULT_VENDOR) return null;
  return { host: nas.ip, port: nas.api.port, username: nas.api.username, password: decrypt(nas.api.passwordEnc) };
}

/**
 * How the router API finds `s` (routeros/client.ts `findPppSessions`): by the name accounting
 * has, then `username` (the subscriber's), then by its addresses, IPv4 or IPv6, so that an
 * IPv6-only session, or one the router knows under a name changed since, is found as well.
 */
export function routerKey(username: string, s: Omit<LiveSession, 'nas' | 'nasIp' | 'acctSessionId'>): PppSessionKey {
  return {
    names: [s.username, username],
    ipv4: s.framedIp,
    framedIpv6Prefix: s.framedIpv6Prefix ?? null,
    delegatedIpv6Prefix: s.delegatedIpv6Prefix ?? null,
    callerId: s.callingStationId ?? null,
  };
}

/** The ids among `eventIds` already acted on. */
export async function processedAmong(eventIds: number[]): Promise<Set<number>> {
  if (eventIds.length === 0) return new Set();
  const { rows } = await db().execute<{ event_id: number }>(sql`
    select event_id from processed_events where event_id = any(${sql.param(eventIds)}::bigint[])`);
  return new Set(rows.map((r) => Number(r.event_id)));
}
