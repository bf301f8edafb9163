import radius from 'radius';
import { decodeRequest, encodeReply, encodeRequest, verifyReply } from '../../services/network-access/coa/codec';

const SECRET = 'coa-secret';

/** The same request through the `radius` package: the hand-written encoder must match it byte for byte. */
function byPackage(code: string, identifier: number, attributes: unknown[]): Buffer {
  // The codec registers the MikroTik dictionary with the package at its first use of it.
  decodeRequest(encodeRequest('Disconnect-Request', 0, SECRET, { userName: 'x' }), SECRET);
  return radius.encode({ code, identifier, secret: SECRET, attributes, add_message_authenticator: false } as never);
}

it('a Disconnect-Request is the bytes the radius package writes, and its Request Authenticator checks', () => {
  const packet = encodeRequest('Disconnect-Request', 7, SECRET, {
    userName: 'ali@north',
    acctSessionId: 'sess-81',
    framedIp: '100.64.3.9',
  });
  expect(packet).toEqual(
    byPackage('Disconnect-Request', 7, [
      ['User-Name', 'ali@north'],
      ['Acct-Session-Id', 'sess-81'],
      ['Framed-IP-Address', '100.64.3.9'],
    ]),
  );
  expect(decodeRequest(packet, SECRET)).toMatchObject({
    code: 'Disconnect-Request',
    identifier: 7,
    attributes: { 'User-Name': 'ali@north', 'Acct-Session-Id': 'sess-81', 'Framed-IP-Address': '100.64.3.9' },
  });
  expect(() => decodeRequest(packet, 'another-secret')).toThrow();
});

it('a CoA-Request carries Mikrotik-Rate-Limit as the radius package writes it; a user name only is enough', () => {
  expect(
    encodeRequest('CoA-Request', 255, SECRET, { userName: 'u1', acctSessionId: 's1', rateLimit: '2M/2M' }),
  ).toEqual(
    byPackage('CoA-Request', 255, [
      ['User-Name', 'u1'],
      ['Acct-Session-Id', 's1'],
      ['Vendor-Specific', 14988, [['Mikrotik-Rate-Limit', '2M/2M']]],
    ]),
  );
  expect(encodeRequest('Disconnect-Request', 1, SECRET, { userName: 'ü@x' })).toEqual(
    byPackage('Disconnect-Request', 1, [['User-Name', 'ü@x']]),
  );
});

it('refuses a value longer than an attribute holds and a Framed-IP that is not IPv4', () => {
  expect(() => encodeRequest('Disconnect-Request', 1, SECRET, { userName: 'a'.repeat(254) })).toThrow(/253/);
  expect(() => encodeRequest('Disconnect-Request', 1, SECRET, { userName: 'u', framedIp: '2001:db8::1' })).toThrow(
    /IPv4/,
  );
});

it("a reply verifies against its request's authenticator and the secret, and nothing else", () => {
  const request = encodeRequest('Disconnect-Request', 9, SECRET, { userName: 'u', acctSessionId: 's' });
  const ack = encodeReply(decodeRequest(request, SECRET), 'Disconnect-ACK', SECRET);
  const nak = encodeReply(decodeRequest(request, SECRET), 'Disconnect-NAK', SECRET, 503);
  expect(verifyReply(request, ack, SECRET)).toBe(true);
  expect(verifyReply(request, nak, SECRET)).toBe(true);
  // Padding after the Length octets is not signed (RFC 2865 section 3).
  expect(verifyReply(request, Buffer.concat([nak, Buffer.alloc(3)]), SECRET)).toBe(true);
  expect(verifyReply(request, ack, 'another-secret')).toBe(false);
  const other = encodeRequest('Disconnect-Request', 9, SECRET, { userName: 'v' });
  expect(verifyReply(other, ack, SECRET)).toBe(false);
  const tampered = Buffer.from(nak);
  tampered[tampered.length - 1] ^= 1;
  expect(verifyReply(request, tampered, SECRET)).toBe(false);
  expect(verifyReply(request, ack.subarray(0, 19), SECRET)).toBe(false);
  const overlong = Buffer.from(ack);
  overlong.writeUInt16BE(ack.length + 1, 2);
  expect(verifyReply(request, overlong, SECRET)).toBe(false);
});
