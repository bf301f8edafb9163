import { formatIpv6Prefix, parseIpv6Prefix, prefixAt, prefixCount } from '../../shared/net/ipv6-prefix';

const canonical = (text: string) => {
  const p = parseIpv6Prefix(text);
  return p && formatIpv6Prefix(p);
};

describe('IPv6 prefixes', () => {
  it('writes one canonical text for every spelling', () => {
    expect(canonical('2001:DB8:0:0:0::/56')).toBe('2001:db8::/56');
    expect(canonical(' 2001:0db8:0001:0000::/64 ')).toBe('2001:db8:1::/64');
    expect(canonical('2001:db8::1')).toBe('2001:db8::1/128');
    expect(canonical('2001:db8:0:1:0:0:0:1')).toBe('2001:db8:0:1::1/128');
    expect(canonical('::/0')).toBe('::/0');
    expect(canonical('2001:db8:0:0:1:0:0:1/128')).toBe('2001:db8::1:0:0:1/128');
  });

  it('refuses what is no prefix: IPv4, host bits set, bad lengths, zones', () => {
    for (const bad of [
      '10.0.0.1',
      '2001:db8::1/64',
      '2001:db8::/129',
      '2001:db8::/-1',
      '2001:db8::/6a',
      'fe80::1%eth0',
      '2001:db8::/48/1',
      'x',
    ])
      expect(parseIpv6Prefix(bad)).toBeNull();
  });

  it('splits a parent into children of one length, in order, never twice the same', () => {
    const parent = parseIpv6Prefix('2001:db8::/40')!;
    expect(prefixCount(40, 56)).toBe(65536n);
    expect(formatIpv6Prefix(prefixAt(parent, 56, 0n))).toBe('2001:db8::/56');
    expect(formatIpv6Prefix(prefixAt(parent, 56, 1n))).toBe('2001:db8:0:100::/56');
    expect(formatIpv6Prefix(prefixAt(parent, 56, 65535n))).toBe('2001:db8:ff:ff00::/56');
    expect(() => prefixAt(parent, 56, 65536n)).toThrow(RangeError);
    const seen = new Set(Array.from({ length: 4096 }, (_, i) => formatIpv6Prefix(prefixAt(parent, 56, BigInt(i)))));
    expect(seen.size).toBe(4096);
  });
});
