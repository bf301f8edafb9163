"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.REPLY_CODE_BY_NUMBER = exports.REPLY_CODES = exports.MIKROTIK_VENDOR_ID = void 0;
exports.sessionAttributes = sessionAttributes;
exports.encodeRequest = encodeRequest;
exports.verifyReply = verifyReply;
exports.errorCauseOf = errorCauseOf;
exports.decodeRequest = decodeRequest;
exports.encodeReply = encodeReply;
/**
 * The one place that touches the npm `radius` package: packet encoding, Response Authenticator
 * verification and attribute decoding for RFC 5176 (Disconnect / CoA). The package bundles the RFC
 * dictionaries only, so the MikroTik vendor dictionary is registered here before first use.
 */
const node_fs_1 = __importDefault(require("node:fs"));
const node_os_1 = __importDefault(require("node:os"));
const node_path_1 = __importDefault(require("node:path"));
const radius_1 = __importDefault(require("radius"));
exports.MIKROTIK_VENDOR_ID = 14988;
/** FreeRADIUS's dictionary.mikrotik, the attributes a PPPoE server acts on in a CoA. */
const MIKROTIK_DICTIONARY = `
VENDOR Mikrotik 14988
BEGIN-VENDOR Mikrotik
ATTRIBUTE Mikrotik-Recv-Limit 1 integer
ATTRIBUTE Mikrotik-Xmit-Limit 2 integer
ATTRIBUTE Mikrotik-Group 3 string
ATTRIBUTE Mikrotik-Rate-Limit 8 string
ATTRIBUTE Mikrotik-Address-List 19 string
END-VENDOR Mikrotik
`;
let registered = false;
/**
 * `radius` reads dictionaries from files, once, at its first encode or decode; a file written to
 * the temporary folder keeps the built image free of non-compiled assets.
 */
function ensureDictionaries() {
    if (registered)
        return;
    const dir = node_fs_1.default.mkdtempSync(node_path_1.default.join(node_os_1.default.tmpdir(), 'isp-billing-radius-'));
    const file = node_path_1.default.join(dir, 'dictionary.mikrotik');
    node_fs_1.default.writeFileSync(file, MIKROTIK_DICTIONARY);
    radius_1.default.add_dictionary(file);
    registered = true;
}
exports.REPLY_CODES = {
    'Disconnect-Request': { ack: 'Disconnect-ACK', nak: 'Disconnect-NAK' },
    'CoA-Request': { ack: 'CoA-ACK', nak: 'CoA-NAK' },
};
function sessionAttributes(s) {
    const out = [['User-Name', s.userName]];
    if (s.acctSessionId)
        out.push(['Acct-Session-Id', s.acctSessionId]);
    if (s.framedIp)
        out.push(['Framed-IP-Address', s.framedIp]);
    if (s.rateLimit)
        out.push(['Vendor-Specific', exports.MIKROTIK_VENDOR_ID, [['Mikrotik-Rate-Limit', s.rateLimit]]]);
    return out;
}
function encodeRequest(code, identifier, secret, attributes) {
    ensureDictionaries();
    return radius_1.default.encode({ code, identifier, secret, attributes, add_message_authenticator: false });
}
/** Response Authenticator = MD5(Code+Identifier+Length+RequestAuthenticator+Attributes+Secret). */
function verifyReply(request, reply, secret) {
    ensureDictionaries();
    try {
        return radius_1.default.verify_response({ request, response: reply, secret });
    }
    catch {
        return false;
    }
}
exports.REPLY_CODE_BY_NUMBER = { 41: 'Disconnect-ACK', 42: 'Disconnect-NAK', 44: 'CoA-ACK', 45: 'CoA-NAK' };
const ERROR_CAUSE_TYPE = 101;
/** RFC 5176 Error-Cause (attribute 101, a 32-bit integer), or null when the reply carries none. */
function errorCauseOf(reply) {
    ensureDictionaries();
    const decoded = radius_1.default.decode_without_secret({ packet: reply });
    for (const [type, value] of decoded.raw_attributes) {
        if (Number(type) === ERROR_CAUSE_TYPE && Buffer.isBuffer(value) && value.length === 4)
            return value.readUInt32BE(0);
    }
    return null;
}
/** Decodes and checks a request's Request Authenticator with `secret` (throws when it does not match). */
function decodeRequest(packet, secret) {
    ensureDictionaries();
    const decoded = radius_1.default.decode({ packet, secret });
    return {
        code: decoded.code,
        identifier: decoded.identifier,
        authenticator: packet.subarray(4, 20),
        attributes: decoded.attributes,
        packet: decoded,
    };
}
function encodeReply(request, code, secret, errorCause) {
    ensureDictionaries();
    const attributes = errorCause === undefined ? [] : [['Error-Cause', errorCause]];
    return radius_1.default.encode_response({ packet: request.packet, code, secret, attributes });
}
//# sourceMappingURL=codec.js.map