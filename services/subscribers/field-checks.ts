/**
 * Field shapes of create and update that the JSON Schema leaves to the action, so the 400 says what
 * a valid value looks like. `''` clears a nullable field; `undefined` leaves it as it is.
 */
import { isIPv4, isValidUsername, normaliseMac } from '../../shared/domain/subscriber';
import { fail } from '../../shared/failures';
import { toMinor } from '../../shared/money';

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

/** A decimal amount in minor units of `currency`; 400 naming `field` when it has too many decimals. */
export function minorOrBadRequest(value: number, currency: string, field: string): number {
  try {
    return toMinor(value, currency);
  } catch {
    throw fail('tooManyDecimals', field, currency);
  }
}

export function priceOrBadRequest(price: number | null | undefined, currency: string): number | null | undefined {
  if (price === undefined || price === null) return price;
  return minorOrBadRequest(price, currency, 'price');
}
