"use strict";
/** RFC 5176 replies in the words an operator reads: what happened to the session. */
Object.defineProperty(exports, "__esModule", { value: true });
exports.RESOURCES_UNAVAILABLE = exports.SESSION_NOT_FOUND = exports.ERROR_CAUSES = void 0;
exports.errorCause = errorCause;
exports.outcomeOfReply = outcomeOfReply;
exports.combineOutcomes = combineOutcomes;
/** RFC 5176 section 3.5, the Error-Cause values a NAS may put in a NAK. */
exports.ERROR_CAUSES = {
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
exports.SESSION_NOT_FOUND = 503;
exports.RESOURCES_UNAVAILABLE = 506;
function errorCause(code) {
    if (code === null)
        return null;
    return { code, name: exports.ERROR_CAUSES[code] ?? 'Unknown' };
}
function outcomeOfReply(reply, action) {
    switch (reply.kind) {
        case 'ack': return action === 'disconnect' ? 'disconnected' : 'applied';
        case 'nak': return reply.errorCause === exports.SESSION_NOT_FOUND ? 'offline' : 'rejected';
        case 'timeout': return 'timeout';
        case 'error': return 'failed';
    }
}
/** Several sessions of one subscriber: the one outcome that says the most about the subscriber. */
const RANK = ['failed', 'rejected', 'kicked', 'disconnected', 'applied', 'offline'];
function combineOutcomes(outcomes) {
    if (outcomes.length === 0)
        return 'offline';
    return outcomes.reduce((best, o) => (RANK.indexOf(o) < RANK.indexOf(best) ? o : best));
}
//# sourceMappingURL=outcome.js.map