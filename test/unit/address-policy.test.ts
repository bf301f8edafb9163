/**
 * The outgoing-address policy (shared/net/address-policy.ts) on IPv6 addresses that carry an IPv4
 * address (issue 43, finding 7): judged as the IPv4 address they carry.
 */
import { checkOutgoingUrl, isPrivateAddress } from '../../shared/net/address-policy';
import { ipv6Bytes } from '../../shared/net/ipv6';

const REFUSED = 'url refused: a loopback, private or reserved address';

describe('IPv6 with an IPv4 address inside', () => {
  it.each(['[::127.0.0.1]', '[::ffff:0:7f00:1]', '[64:ff9b:1::7f00:1]', '[2002:7f00:1::]'])(
    'refuses http://%s/ (the probe’s examples) without allow_private_targets',
    async (host) => {
      await expect(checkOutgoingUrl('url', `http://${host}/`, false)).rejects.toThrow(REFUSED);
      await expect(checkOutgoingUrl('url', `http://${host}/`, true)).resolves.toBeInstanceOf(URL);
    },
  );

  it.each([
    ['::/96 (IPv4-compatible)', '::a00:1', '::808:808'],
    ['::ffff:0:0/96 (IPv4-mapped)', '::ffff:a9fe:a9fe', '::ffff:8.8.8.8'],
    ['::ffff:0:0:0/96 (IPv4-translated)', '::ffff:0:c0a8:101', '::ffff:0:808:808'],
    ['64:ff9b::/96 (NAT64)', '64:ff9b::10.0.0.1', '64:ff9b::808:808'],
    ['64:ff9b:1::/48 (local NAT64), IPv4 last', '64:ff9b:1::a9fe:a9fe', '64:ff9b:1:808:8:808:808:808'],
    ['64:ff9b:1::/48, IPv4 after a /48 prefix', '64:ff9b:1:7f00:1:101:101:101', '64:ff9b:1:808:8:808:808:808'],
    ['2002::/16 (6to4)', '2002:c0a8:101::1', '2002:808:808::1'],
  ])('%s: refused for %s, allowed for %s', (_name, privateOne, publicOne) => {
    expect(isPrivateAddress(privateOne)).toBe(true);
    expect(isPrivateAddress(publicOne)).toBe(false);
  });

  it('still refuses ::, ::1 and the IPv6 ranges of their own; allows a public IPv6 address', () => {
    for (const ip of ['::', '::1', 'fd00::1', 'fe80::1', 'fe80::1%eth0', 'ff02::1', '2001:db8::1', '100::1']) {
      expect(isPrivateAddress(ip)).toBe(true);
    }
    expect(isPrivateAddress('2606:4700:4700::1111')).toBe(false);
    expect(isPrivateAddress('not an address')).toBe(true);
  });
});

describe('ipv6Bytes', () => {
  it('reads the compressed, full and dotted forms alike', () => {
    const loopback = [...Array<number>(15).fill(0), 1];
    expect(ipv6Bytes('::1')).toEqual(loopback);
    expect(ipv6Bytes('0:0:0:0:0:0:0:1')).toEqual(loopback);
    expect(ipv6Bytes('::0.0.0.1')).toEqual(loopback);
    expect(ipv6Bytes('2002:7f00:1::')).toEqual([0x20, 2, 0x7f, 0, 0, 1, ...Array<number>(10).fill(0)]);
    expect(ipv6Bytes('::ffff:10.1.2.3').slice(10)).toEqual([0xff, 0xff, 10, 1, 2, 3]);
    expect(ipv6Bytes('fe80::1%eth0')).toEqual([0xfe, 0x80, ...Array<number>(13).fill(0), 1]);
  });
});
