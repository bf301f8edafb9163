/**
 * Field shapes of create and update that the JSON Schema leaves to the action, so the 400 says what
 * a valid value looks like. `''` clears a nullable field; `undefined` leaves it as it is.
 */
import { isIPv4, isValidUsername, normaliseMac } from '../../shared/domain/subscriber';
import { fail } from '../../shared/failures';

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
