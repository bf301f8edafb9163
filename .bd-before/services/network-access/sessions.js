"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ROUTEROS_API_PORT = void 0;
exports.liveSessions = liveSessions;
exports.apiTarget = apiTarget;
exports.processedAmong = processedAmong;
/**
 * Live sessions as FreeRADIUS accounting records them (an open `radacct` row), each with the access
 * server that owns it (`nas` row by `nasipaddress`): where a CoA goes and with which secret.
 */
const drizzle_orm_1 = require("drizzle-orm");
const secrets_1 = require("../../shared/auth/secrets");
const client_1 = require("../../shared/db/client");
/** RouterOS's API port when the nas row names none. */
exports.ROUTEROS_API_PORT = 8728;
/**
 * Open sessions per owner's user name (newest first); an owner with none is absent from the map.
 * A rename moves the subscriber's accounting rows to the new name in the same transaction, while
 * the router keeps the old one until the session ends: so the rows are looked up under the name
 * given (the one the router knows) and under the subscriber's current name.
 */
async function liveSessions(owners) {
    const out = new Map();
    if (owners.length === 0)
        return out;
    const { rows } = await (0, client_1.db)().execute((0, drizzle_orm_1.sql) `
    with t as (
      select distinct * from unnest(${drizzle_orm_1.sql.param(owners.map((o) => o.username))}::text[], ${drizzle_orm_1.sql.param(owners.map((o) => o.subscriberId ?? null))}::int[])
        as t(username, subscriber_id)
    )
    select t.username as key, r.username, r.acctsessionid, host(r.framedipaddress) as framed_ip, host(r.nasipaddress) as nas_ip,
           n.id as nas_id, n.shortname, n.secret, n.coa_port, n.api_port, n.api_username, n.api_password_enc
      from t
      left join subscribers s on s.id = t.subscriber_id
      cross join lateral (
        select * from radacct r
         where r.acctstoptime is null and r.username = any(array[t.username, s.username])
      ) r
      left join nas n on n.nasname = host(r.nasipaddress)
     order by t.username, r.acctstarttime desc nulls last, r.radacctid desc`);
    const seen = new Set();
    for (const r of rows) {
        // One session reached through two owners of the same name is listed once.
        const id = JSON.stringify([r.key, r.acctsessionid, r.nas_ip]);
        if (seen.has(id))
            continue;
        seen.add(id);
        const session = {
            username: r.username,
            acctSessionId: r.acctsessionid,
            framedIp: r.framed_ip,
            nasIp: r.nas_ip,
            nas: r.nas_id === null ? null : {
                id: r.nas_id,
                name: r.shortname ?? '',
                ip: r.nas_ip,
                secret: r.secret ?? '',
                coaPort: r.coa_port ?? 3799,
                api: r.api_username && r.api_password_enc
                    ? { port: r.api_port ?? exports.ROUTEROS_API_PORT, username: r.api_username, passwordEnc: r.api_password_enc }
                    : null,
            },
        };
        const list = out.get(r.key);
        if (list)
            list.push(session);
        else
            out.set(r.key, [session]);
    }
    return out;
}
/** The router API login of a NAS, its password decrypted for this use only. */
function apiTarget(nas) {
    if (!nas.api)
        return null;
    return { host: nas.ip, port: nas.api.port, username: nas.api.username, password: (0, secrets_1.decrypt)(nas.api.passwordEnc) };
}
/** The ids among `eventIds` already acted on. */
async function processedAmong(eventIds) {
    if (eventIds.length === 0)
        return new Set();
    const { rows } = await (0, client_1.db)().execute((0, drizzle_orm_1.sql) `
    select event_id from processed_events where event_id = any(${drizzle_orm_1.sql.param(eventIds)}::bigint[])`);
    return new Set(rows.map((r) => Number(r.event_id)));
}
//# sourceMappingURL=sessions.js.map