/**
 * Where the server may send a request of its own (chat providers, the logo fetched once, outgoing
 * webhooks, the source database of an import through the API): public addresses only, unless the
 * `allow_private_targets` setting says otherwise (docs/security.md). Loopback, private (RFC 1918,
 * unique local), link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, unspecified,
 * multicast and reserved ranges are refused, for a literal address and for every address a name
 * resolves to. An IPv6 address that carries an IPv4 address (mapped, compatible, translated, NAT64,
 * 6to4) is judged as the IPv4 address it carries.
 */
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import dns from 'node:dns';
import { fail } from '../failures';
import { ipv6Bytes } from './ipv6';

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
// `::`, `::1` and 64:ff9b::/96 are judged by the IPv4 address they carry (EMBEDDING below).
for (const [prefix, bits] of [
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/**
 * IPv6 prefixes that carry an IPv4 address, and the bytes it sits in. The local-use NAT64 prefix
 * 64:ff9b:1::/48 is subnetted as its operator likes (RFC 8215), so each place RFC 6052 allows for a
 * prefix of /48 to /96 is read (byte 8 is the format's reserved octet), and any of them may refuse it.
 */
const EMBEDDING: { prefix: number[]; at: number[][] }[] = [
  { prefix: ipv6Bytes('::').slice(0, 12), at: [[12, 13, 14, 15]] },
  { prefix: ipv6Bytes('::ffff:0:0').slice(0, 12), at: [[12, 13, 14, 15]] },
  { prefix: ipv6Bytes('::ffff:0:0:0').slice(0, 12), at: [[12, 13, 14, 15]] },
  { prefix: ipv6Bytes('64:ff9b::').slice(0, 12), at: [[12, 13, 14, 15]] },
  {
    prefix: ipv6Bytes('64:ff9b:1::').slice(0, 6),
    at: [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ],
  },
  { prefix: ipv6Bytes('2002::').slice(0, 2), at: [[2, 3, 4, 5]] },
];

/** The IPv4 addresses an IPv6 address carries, or undefined when it is in no EMBEDDING prefix. */
function embeddedIpv4(ip: string): string[] | undefined {
  const bytes = ipv6Bytes(ip);
  const found = EMBEDDING.find((e) => e.prefix.every((b, i) => bytes[i] === b));
  return found?.at.map((at) => at.map((i) => bytes[i]).join('.'));
}

/** Whether an IP address is one the server must not reach without `allow_private_targets`. */
export function isPrivateAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family !== 6) return true;
  const carried = embeddedIpv4(ip);
  if (carried) return carried.some((v4) => blocked.check(v4, 'ipv4'));
  return blocked.check(ip.split('%')[0], 'ipv6');
}

/** The URL if it is http(s) to a host whose every address is allowed; else 400 naming `field`. */
export async function checkOutgoingUrl(field: string, raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw fail('targetNotAllowed', field, 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw fail('targetNotAllowed', field, 'not http(s)');
  if (url.username || url.password) throw fail('targetNotAllowed', field, 'credentials in the URL');
  await checkOutgoingHost(field, url.hostname.replace(/^\[|\]$/g, ''), allowPrivate);
  return url;
}

/** Resolves if every address of `host` (a name or a literal address) is allowed; else 400 naming `field`. */
export async function checkOutgoingHost(field: string, host: string, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = (await lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw fail('targetNotAllowed', field, 'the host does not resolve');
    }
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) {
    throw fail('targetNotAllowed', field, 'a loopback, private or reserved address');
  }
}

/** A DNS lookup that refuses private answers at connect time, so a name cannot rebind between check and use. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const bad = !allowPrivate && list.some((a) => isPrivateAddress(a.address));
      if (bad || list.length === 0) {
        return callback(Object.assign(new Error('address not allowed'), { code: 'EADDRNOTALLOWED' }), '', 0);
      }
      if ((options as { all?: boolean }).all)
        return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/**
 * GET of a small resource under the address policy: at most `maxBytes`, within `timeoutMs`, no
 * redirects. Throws a 400 naming `field` for anything it will not or cannot fetch.
 */
export async function fetchSmall(
  field: string,
  raw: string,
  opts: { allowPrivate: boolean; maxBytes: number; timeoutMs: number },
): Promise<{ contentType: string; body: Buffer }> {
  const url = await checkOutgoingUrl(field, raw, opts.allowPrivate);
  const get = url.protocol === 'https:' ? https.get : http.get;
  return new Promise((resolve, reject) => {
    const req = get(url, { lookup: guardedLookup(opts.allowPrivate), timeout: opts.timeoutMs }, (res) => {
      if ((res.statusCode ?? 0) !== 200) {
        res.resume();
        reject(fail('targetNotAllowed', field, `answered HTTP ${res.statusCode}`));
        return;
      }
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) {
          req.destroy();
          reject(fail('targetNotAllowed', field, `larger than ${opts.maxBytes} bytes`));
          return;
        }
        parts.push(chunk);
      });
      res.on('end', () =>
        resolve({ contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(parts) }),
      );
      res.on('error', () => reject(fail('targetNotAllowed', field, 'the transfer failed')));
    });
    req.on('timeout', () => {
      req.destroy();
      reject(fail('targetNotAllowed', field, 'no answer in time'));
    });
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        fail(
          'targetNotAllowed',
          field,
          err.code === 'EADDRNOTALLOWED' ? 'a loopback, private or reserved address' : 'unreachable',
        ),
      ),
    );
  });
}
