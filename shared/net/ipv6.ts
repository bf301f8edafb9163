/** IPv6 addresses as bytes, for the address policy's look inside them (shared/net/address-policy.ts). */

/** The 16 bytes of an IPv6 address that `net.isIP` accepts (a zone id, `%eth0`, is ignored). */
export function ipv6Bytes(ip: string): number[] {
  let text = ip.split('%')[0];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const first = groups(head);
  const last = groups(tail);
  const all =
    tail === undefined ? first : [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
  return all.flatMap((g) => [g >> 8, g & 0xff]);
}
