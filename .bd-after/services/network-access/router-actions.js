"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RouterActions = void 0;
const outcome_1 = require("./coa/outcome");
const client_1 = require("./routeros/client");
const sessions_1 = require("./sessions");
class RouterActions {
    coa;
    routeros;
    constructor(coa, routeros) {
        this.coa = coa;
        this.routeros = routeros;
    }
    async disconnect(username, sessions) {
        return this.each(sessions, (s) => this.disconnectOne(username, s));
    }
    async changeRate(username, sessions, rateLimit) {
        return this.each(sessions, async (s) => {
            if (!s.nas)
                return unknownNas(s);
            const reply = await this.coa.change({ host: s.nas.ip, port: s.nas.coaPort, secret: s.nas.secret }, { userName: username, acctSessionId: s.acctSessionId, framedIp: s.framedIp, rateLimit });
            const outcome = (0, outcome_1.outcomeOfReply)(reply, 'rate_limit');
            if (outcome !== 'timeout')
                return fromReply(s, reply, outcome);
            // No router-API fallback for a rate change: the new rate applies at the next login anyway.
            return { ...fromReply(s, reply, 'failed'), detail: `CoA-Request unanswered after ${reply.attempts} attempts` };
        });
    }
    async each(sessions, act) {
        const results = await Promise.all(sessions.map(act));
        return { outcome: (0, outcome_1.combineOutcomes)(results.map((r) => r.outcome)), sessions: results };
    }
    async disconnectOne(username, s) {
        if (!s.nas)
            return unknownNas(s);
        const reply = await this.coa.disconnect({ host: s.nas.ip, port: s.nas.coaPort, secret: s.nas.secret }, { userName: username, acctSessionId: s.acctSessionId, framedIp: s.framedIp });
        const outcome = (0, outcome_1.outcomeOfReply)(reply, 'disconnect');
        if (outcome !== 'timeout')
            return fromReply(s, reply, outcome);
        const unanswered = `Disconnect-Request unanswered after ${reply.attempts} attempts`;
        const target = (0, sessions_1.apiTarget)(s.nas);
        if (!target)
            return { ...fromReply(s, reply, 'failed'), detail: `${unanswered}; no API credentials on the access server for the fallback` };
        try {
            const removed = await this.routeros.removePppSession(target, username);
            return removed > 0
                ? { ...fromReply(s, reply, 'kicked'), via: 'api', detail: `${unanswered}; removed through the router API` }
                : { ...fromReply(s, reply, 'offline'), via: 'api', detail: `${unanswered}; the router has no active session of this user` };
        }
        catch (err) {
            const why = err instanceof client_1.RouterOsError ? `${err.kind}: ${err.message}` : String(err);
            return { ...fromReply(s, reply, 'failed'), detail: `${unanswered}; router API fallback failed (${why})` };
        }
    }
}
exports.RouterActions = RouterActions;
function base(s) {
    return {
        session_id: s.acctSessionId,
        ip_address: s.framedIp,
        nas: s.nas ? { id: s.nas.id, name: s.nas.name, ip_address: s.nas.ip } : null,
        nas_ip: s.nasIp,
    };
}
function unknownNas(s) {
    return {
        ...base(s), outcome: 'failed', via: null, error_cause: null, attempts: 0, rtt_ms: null,
        detail: `access server ${s.nasIp} is not registered (POST /api/nas)`,
    };
}
function fromReply(s, reply, outcome) {
    return {
        ...base(s),
        outcome,
        via: 'coa',
        error_cause: reply.kind === 'nak' ? (0, outcome_1.errorCause)(reply.errorCause) : null,
        attempts: reply.attempts,
        rtt_ms: reply.kind === 'ack' || reply.kind === 'nak' ? Math.round(reply.rttMs * 10) / 10 : null,
        detail: reply.kind === 'error' ? reply.message : null,
    };
}
//# sourceMappingURL=router-actions.js.map