/**
 * The one place that touches the npm `radius` package: packet encoding, Response Authenticator
 * verification and attribute decoding for RFC 5176 (Disconnect / CoA). The package bundles the RFC
 * dictionaries only, so the MikroTik vendor dictionary is registered here before first use.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import radius from 'radius';

export const MIKROTIK_VENDOR_ID = 14988;

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
function ensureDictionaries(): void {
  if (registered) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'isp-billing-radius-'));
  const file = path.join(dir, 'dictionary.mikrotik');
  fs.writeFileSync(file, MIKROTIK_DICTIONARY);
  radius.add_dictionary(file);
  registered = true;
}

export type RequestCode = 'Disconnect-Request' | 'CoA-Request';
export type ReplyCode = 'Disconnect-ACK' | 'Disconnect-NAK' | 'CoA-ACK' | 'CoA-NAK';

export const REPLY_CODES: Record<RequestCode, { ack: ReplyCode; nak: ReplyCode }> = {
  'Disconnect-Request': { ack: 'Disconnect-ACK', nak: 'Disconnect-NAK' },
  'CoA-Request': { ack: 'CoA-ACK', nak: 'CoA-NAK' },
};

/** What identifies a PPPoE session to a MikroTik (and to most NASes): RFC 5176 section 3. */
export interface SessionAttributes {
  userName: string;
  acctSessionId?: string | null;
  framedIp?: string | null;
  /** CoA-Request only: the new `Mikrotik-Rate-Limit` (e.g. `2M/2M`). */
  rateLimit?: string | null;
}

type Attribute = [string, unknown] | [string, number, [string, unknown][]];

export function sessionAttributes(s: SessionAttributes): Attribute[] {
  const out: Attribute[] = [['User-Name', s.userName]];
  if (s.acctSessionId) out.push(['Acct-Session-Id', s.acctSessionId]);
  if (s.framedIp) out.push(['Framed-IP-Address', s.framedIp]);
  if (s.rateLimit) out.push(['Vendor-Specific', MIKROTIK_VENDOR_ID, [['Mikrotik-Rate-Limit', s.rateLimit]]]);
  return out;
}

export function encodeRequest(code: RequestCode, identifier: number, secret: string, attributes: Attribute[]): Buffer {
  ensureDictionaries();
  return radius.encode({ code, identifier, secret, attributes, add_message_authenticator: false });
}

/** Response Authenticator = MD5(Code+Identifier+Length+RequestAuthenticator+Attributes+Secret). */
export function verifyReply(request: Buffer, reply: Buffer, secret: string): boolean {
  ensureDictionaries();
  try {
    return radius.verify_response({ request, response: reply, secret });
  } catch {
    return false;
  }
}

export const REPLY_CODE_BY_NUMBER: Record<number, ReplyCode> = {
  41: 'Disconnect-ACK',
  42: 'Disconnect-NAK',
  44: 'CoA-ACK',
  45: 'CoA-NAK',
};

const ERROR_CAUSE_TYPE = 101;

/** RFC 5176 Error-Cause (attribute 101, a 32-bit integer), or null when the reply carries none. */
export function errorCauseOf(reply: Buffer): number | null {
  ensureDictionaries();
  const decoded = radius.decode_without_secret({ packet: reply });
  for (const [type, value] of decoded.raw_attributes) {
    if (Number(type) === ERROR_CAUSE_TYPE && Buffer.isBuffer(value) && value.length === 4) return value.readUInt32BE(0);
  }
  return null;
}

export interface DecodedRequest {
  code: string;
  identifier: number;
  authenticator: Buffer;
  attributes: Record<string, unknown>;
  packet: ReturnType<typeof radius.decode>;
}

/** Decodes and checks a request's Request Authenticator with `secret` (throws when it does not match). */
export function decodeRequest(packet: Buffer, secret: string): DecodedRequest {
  ensureDictionaries();
  const decoded = radius.decode({ packet, secret });
  return {
    code: decoded.code,
    identifier: decoded.identifier,
    authenticator: packet.subarray(4, 20),
    attributes: decoded.attributes as Record<string, unknown>,
    packet: decoded,
  };
}

export function encodeReply(request: DecodedRequest, code: ReplyCode, secret: string, errorCause?: number): Buffer {
  ensureDictionaries();
  const attributes = errorCause === undefined ? [] : [['Error-Cause', errorCause]];
  return radius.encode_response({ packet: request.packet, code, secret, attributes });
}
