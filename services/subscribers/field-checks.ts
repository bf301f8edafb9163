/**
 * Field shapes of create and update that the JSON Schema leaves to the action, so the 400 says what
 * a valid value looks like. `''` clears a nullable field; `undefined` leaves it as it is.
 */
import { isIPv4, isValidUsername, normaliseMac } from '../../shared/domain/subscriber';
import { fail } from '../../shared/failures';
import { IPV6_LENGTHS } from '../../shared/access/ipv6-pools';
import { formatIpv6Prefix, parseIpv6Prefix } from '../../shared/net/ipv6-prefix';

export function checkUsername(username: string, field = 'username'): void {
  if (!isValidUsername(username)) throw fail('usernameInvalid', field);
}

export function macOrBadRequest(mac: string | null | undefined): string | null | undefined {
  if (mac === undefined || mac === null || mac === '') return mac === '' ? null : mac;
  const normal = normaliseMac(mac);
  if (!normal) throw fail('macInvalid');
  return normal;
}

export function ipOrBadRequest(ip: string | null | undefined): string | null | undefined {
  if (ip === undefined || ip === null || ip === '') return ip === '' ? null : ip;
  if (!isIPv4(ip)) throw fail('staticIpInvalid');
  return ip;
}

export type Ipv6Field = keyof typeof IPV6_LENGTHS;

/** The canonical text of an IPv6 prefix field (`''` clears it), or a 400 that shows a valid one. */
export function ipv6PrefixOrBadRequest(field: Ipv6Field, text: string | null | undefined): string | null | undefined {
  if (text === undefined || text === null || text === '') return text === '' ? null : text;
  const [min, max] = IPV6_LENGTHS[field];
  const p = parseIpv6Prefix(text);
  if (!p || p.length < min || p.length > max) throw fail('ipv6PrefixInvalid', field, `${min}-${max}`);
  return formatIpv6Prefix(p);
}
