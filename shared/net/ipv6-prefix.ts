/**
 * IPv6 prefixes of subscribers and pools (docs/ipv6.md): parsed to a 128-bit
 * integer, checked, and written back in one canonical text (RFC 5952: lower case, the longest run
 * of zero groups as `::`), so the same prefix typed two ways is one value in the database.
 */
import { isIPv6 } from 'node:net';
import { ipv6Bytes } from './ipv6';

export interface Ipv6Prefix {
  /** The network's first address as a 128-bit integer (host bits zero). */
  network: bigint;
  length: number;
}

const ALL = (1n << 128n) - 1n;

function addressBits(text: string): bigint | null {
  if (!isIPv6(text) || text.includes('%')) return null;
  return ipv6Bytes(text).reduce((n, b) => (n << 8n) | BigInt(b), 0n);
}

const mask = (length: number) => (length === 0 ? 0n : (ALL << BigInt(128 - length)) & ALL);

/**
 * `2001:DB8:0:0::/56` -> { network, length: 56 }; an address without a length is a /128. Null when
 * it is no IPv6 prefix, or when host bits are set (`2001:db8::1/64` names an address, not a network).
 */
export function parseIpv6Prefix(text: string): Ipv6Prefix | null {
  const [address, len, extra] = text.trim().split('/');
  if (extra !== undefined) return null;
  const bits = addressBits(address);
  if (bits === null) return null;
  const length = len === undefined ? 128 : /^\d{1,3}$/.test(len) ? Number(len) : NaN;
  if (!(length >= 0 && length <= 128)) return null;
  if ((bits & ~mask(length) & ALL) !== 0n) return null;
  return { network: bits, length };
}

/** RFC 5952 text of an address given as a 128-bit integer. */
export function formatIpv6(bits: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((bits >> BigInt(112 - 16 * i)) & 0xffffn));
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}

export function formatIpv6Prefix(p: Ipv6Prefix): string {
  return `${formatIpv6(p.network)}/${p.length}`;
}

/** How many prefixes of `childLength` a parent of `parentLength` holds. */
export function prefixCount(parentLength: number, childLength: number): bigint {
  return 1n << BigInt(childLength - parentLength);
}

/** The `index`th prefix of `childLength` inside `parent` (0 is the parent's first). */
export function prefixAt(parent: Ipv6Prefix, childLength: number, index: bigint): Ipv6Prefix {
  if (index < 0n || index >= prefixCount(parent.length, childLength))
    throw new RangeError(`index ${index} out of range`);
  return { network: parent.network | (index << BigInt(128 - childLength)), length: childLength };
}
