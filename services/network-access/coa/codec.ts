/**
 * RFC 5176 packets (Disconnect / CoA). The client's requests and the check of their replies are
 * written here by hand (a handful of attributes, on every request); the npm `radius` package does
 * the rest, off the hot path: a NAK's Error-Cause, and the NAS simulator's decoding and replies,
 * which so cross-check the hand-written encoder. The package bundles the RFC dictionaries only, so
 * the MikroTik vendor dictionary is registered here before first use.
 */
import { hash, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import radius from 'radius';
import { ipv6Bytes } from '../../../shared/net/ipv6';
import { formatIpv6 } from '../../../shared/net/ipv6-prefix';
import { attributeByCode, type AttributeDef } from '../../../shared/vendors/dictionary';
import { definitionOf, type ReplyPair } from '../../../shared/vendors/pairs';

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

/**
 * What identifies a PPPoE session to a MikroTik (and to most NASes): RFC 5176 section 3. A vendor
 * profile may leave some out (a Juniper MX finds a session by Acct-Session-Id alone).
 */
export interface SessionAttributes {
  userName?: string | null;
  acctSessionId?: string | null;
  framedIp?: string | null;
  /**
   * A session's IPv6 identity (radacct's framedipv6address, framedipv6prefix, delegatedipv6prefix),
   * prefixes as `address/length`: router-actions gives them for a session with no IPv4 address.
   */
  framedIpv6Address?: string | null;
  framedIpv6Prefix?: string | null;
  delegatedIpv6Prefix?: string | null;
  /** CoA-Request only: the new `Mikrotik-Rate-Limit` (e.g. `2M/2M`). */
  rateLimit?: string | null;
  /** Further attributes, already encoded (`encodeAttributes`): a vendor profile's rate. */
  extra?: readonly RawAttribute[];
}

/** An attribute's type octet and value as they go on the wire (a VSA's value holds the Vendor-Id and the vendor's own TLV). */
export type RawAttribute = readonly [number, Buffer];

const REQUEST_CODE_NUMBER: Record<RequestCode, number> = { 'Disconnect-Request': 40, 'CoA-Request': 43 };
const USER_NAME = 1;
const FRAMED_IP_ADDRESS = 8;
const VENDOR_SPECIFIC = 26;
const ACCT_SESSION_ID = 44;
const FRAMED_IPV6_PREFIX = 97;
const DELEGATED_IPV6_PREFIX = 123;
const FRAMED_IPV6_ADDRESS = 168;
const MIKROTIK_RATE_LIMIT = 8;
const HEADER = 20;
/** An attribute's value: 255 octets less its type and length. */
const MAX_VALUE = 253;
const MAX_PACKET = 4096;

/**
 * A Disconnect-Request or CoA-Request, written here rather than by `radius`: it is the client's one
 * per-request computation, and the package's dictionary-driven encoder cost more than the UDP send
 * (bench:coa). Request Authenticator = MD5(Code+Identifier+Length+16 zero octets+Attributes+Secret),
 * RFC 5176 section 3. Throws on a value that does not fit an attribute or a Framed-IP that is not IPv4.
 */
export function encodeRequest(code: RequestCode, identifier: number, secret: string, s: SessionAttributes): Buffer {
  const values: (readonly [number, Buffer])[] = [];
  if (s.userName) values.push([USER_NAME, Buffer.from(s.userName, 'utf8')]);
  if (s.acctSessionId) values.push([ACCT_SESSION_ID, Buffer.from(s.acctSessionId, 'utf8')]);
  if (s.framedIp) values.push([FRAMED_IP_ADDRESS, ipv4(s.framedIp)]);
  if (s.framedIpv6Address) values.push([FRAMED_IPV6_ADDRESS, ipv6(s.framedIpv6Address)]);
  if (s.framedIpv6Prefix) values.push([FRAMED_IPV6_PREFIX, ipv6Prefix(s.framedIpv6Prefix)]);
  if (s.delegatedIpv6Prefix) values.push([DELEGATED_IPV6_PREFIX, ipv6Prefix(s.delegatedIpv6Prefix)]);
  if (s.rateLimit) values.push([VENDOR_SPECIFIC, mikrotikRateLimit(s.rateLimit)]);
  if (s.extra) values.push(...s.extra);
  let length = HEADER;
  for (const [type, value] of values) {
    if (value.length > MAX_VALUE)
      throw new Error(`attribute ${type} is ${value.length} octets, more than ${MAX_VALUE}`);
    length += 2 + value.length;
  }
  if (length > MAX_PACKET) throw new Error(`packet of ${length} octets`);
  // The secret goes after the packet for the hash, then is cut off: one buffer, one one-shot MD5.
  const secretBytes = Buffer.from(secret, 'utf8');
  const hashed = Buffer.alloc(length + secretBytes.length);
  const packet = hashed.subarray(0, length);
  packet[0] = REQUEST_CODE_NUMBER[code];
  packet[1] = identifier & 0xff;
  packet.writeUInt16BE(length, 2);
  let at = HEADER;
  for (const [type, value] of values) {
    packet[at] = type;
    packet[at + 1] = 2 + value.length;
    value.copy(packet, at + 2);
    at += 2 + value.length;
  }
  secretBytes.copy(hashed, length);
  hash('md5', hashed, 'buffer').copy(packet, 4);
  return packet;
}

function ipv4(address: string): Buffer {
  if (!isIPv4(address)) throw new Error(`Framed-IP-Address ${address} is not an IPv4 address`);
  return Buffer.from(address.split('.').map(Number));
}

function ipv6(address: string): Buffer {
  if (!isIPv6(address)) throw new Error(`${address} is not an IPv6 address`);
  return Buffer.from(ipv6Bytes(address));
}

/**
 * RFC 3162 / RFC 4818: a reserved octet, the prefix length, then the prefix. Its 16 octets in full,
 * as FreeRADIUS's radclient writes them (both lengths are valid, 4 to 20 octets).
 */
function ipv6Prefix(prefix: string): Buffer {
  const [address, length, extra] = prefix.split('/');
  const bits = length === undefined ? 128 : Number(length);
  if (extra !== undefined || !/^\d{1,3}$/.test(length ?? '128') || bits > 128)
    throw new Error(`${prefix} is not an IPv6 prefix`);
  return Buffer.concat([Buffer.from([0, bits]), ipv6(address)]);
}

/** Vendor-Specific: Vendor-Id, then the vendor's own type, length and value. */
function mikrotikRateLimit(rate: string): Buffer {
  const value = Buffer.from(rate, 'utf8');
  if (value.length > MAX_VALUE - 6) throw new Error(`Mikrotik-Rate-Limit is ${value.length} octets`);
  const vsa = Buffer.alloc(6 + value.length);
  vsa.writeUInt32BE(MIKROTIK_VENDOR_ID, 0);
  vsa[4] = MIKROTIK_RATE_LIMIT;
  vsa[5] = 2 + value.length;
  value.copy(vsa, 6);
  return vsa;
}

function valueBytes(def: AttributeDef, value: string, tag: number | undefined): Buffer {
  switch (def.type) {
    case 'integer': {
      const out = Buffer.alloc(4);
      out.writeUInt32BE(def.values?.[value] ?? Number(value));
      return out;
    }
    case 'ipaddr':
      return ipv4(value);
    case 'ipv6addr':
      return ipv6(value);
    case 'ipv6prefix':
      return ipv6Prefix(value);
    case 'string': {
      const text = Buffer.from(value, 'utf8');
      // RFC 2868: a tagged string's first octet is its tag.
      return tag === undefined ? text : Buffer.concat([Buffer.from([tag]), text]);
    }
  }
}

/**
 * Reply pairs (a vendor profile's, dictionary names) as wire attributes: a standard one as itself,
 * a vendor's inside Vendor-Specific (26) with its Vendor-Id (RFC 2865 section 5.26's format, which
 * every vendor here uses). Throws on an unknown attribute or a value that does not fit.
 */
export function encodeAttributes(pairs: readonly Omit<ReplyPair, 'op'>[]): RawAttribute[] {
  return pairs.map((p) => {
    const { def, tag } = definitionOf(p.attribute);
    const value = valueBytes(def, p.value, tag);
    if (def.vendorId === 0) return [def.number, value] as const;
    if (value.length > MAX_VALUE - 6) throw new Error(`${def.name} is ${value.length} octets`);
    const vsa = Buffer.alloc(6 + value.length);
    vsa.writeUInt32BE(def.vendorId, 0);
    vsa[4] = def.number;
    vsa[5] = 2 + value.length;
    value.copy(vsa, 6);
    return [VENDOR_SPECIFIC, vsa] as const;
  });
}

/**
 * A request's attributes by dictionary name, in packet order, vendor attributes unpacked (a tagged
 * one as `Name:tag`), for the NAS simulator and the tests: what a router would read. An attribute
 * outside the dictionary is `<vendor>/<type>` with its value in hex.
 */
export function decodeAttributes(packet: Buffer): [string, string][] {
  const out: [string, string][] = [];
  const length = Math.min(packet.readUInt16BE(2), packet.length);
  for (let at = HEADER; at + 2 <= length;) {
    const type = packet[at];
    const len = packet[at + 1];
    if (len < 2 || at + len > length) break;
    const value = packet.subarray(at + 2, at + len);
    if (type === VENDOR_SPECIFIC && value.length >= 6) {
      const vendorId = value.readUInt32BE(0);
      out.push(named(vendorId, value[4], value.subarray(6, 6 + value[5] - 2)));
    } else {
      out.push(named(0, type, value));
    }
    at += len;
  }
  return out;
}

function named(vendorId: number, type: number, value: Buffer): [string, string] {
  const def = attributeByCode(vendorId, type);
  if (!def) return [`${vendorId}/${type}`, value.toString('hex')];
  switch (def.type) {
    case 'integer':
      return [def.name, String(value.readUInt32BE(0))];
    case 'ipaddr':
      return [def.name, [...value].join('.')];
    case 'ipv6addr':
      return value.length === 16 ? [def.name, formatIpv6(bytesToBits(value))] : [def.name, value.toString('hex')];
    case 'ipv6prefix': {
      // Reserved, length, then the prefix's leading octets (up to 16), the rest zero.
      if (value.length < 2 || value.length > 18) return [def.name, value.toString('hex')];
      const full = Buffer.alloc(16);
      value.subarray(2).copy(full);
      return [def.name, `${formatIpv6(bytesToBits(full))}/${value[1]}`];
    }
    case 'string':
      return def.tagged && value.length > 0 && value[0] <= 0x1f
        ? [`${def.name}:${value[0]}`, value.subarray(1).toString('utf8')]
        : [def.name, value.toString('utf8')];
  }
}

const bytesToBits = (bytes: Buffer) => [...bytes].reduce((n, b) => (n << 8n) | BigInt(b), 0n);

/**
 * Response Authenticator = MD5(Code+Identifier+Length+RequestAuthenticator+Attributes+Secret) over
 * the reply's Length octets (what follows is padding, RFC 2865 section 3). Our requests carry no
 * Message-Authenticator, so a reply's is not required.
 */
export function verifyReply(request: Buffer, reply: Buffer, secret: string): boolean {
  if (reply.length < HEADER || request.length < HEADER) return false;
  const length = reply.readUInt16BE(2);
  if (length < HEADER || length > reply.length) return false;
  const signed = Buffer.concat([
    reply.subarray(0, 4),
    request.subarray(4, HEADER),
    reply.subarray(HEADER, length),
    Buffer.from(secret, 'utf8'),
  ]);
  return timingSafeEqual(hash('md5', signed, 'buffer'), reply.subarray(4, HEADER));
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
