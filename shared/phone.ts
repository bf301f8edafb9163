/**
 * Phone numbers as one spelling (docs/subscribers.md, "Phones"): stored in E.164 from the
 * operator's `default_country` when libphonenumber-js reads them as a possible number, as given
 * (trimmed) otherwise, so an import never loses a number it cannot read. A search that looks like
 * a phone is read the same way, so "07801234507", "+9647801234507" and "0780 123 4507" find the
 * same subscriber.
 */
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';

export function isCountry(code: string): boolean {
  return isSupportedCountry(code);
}

function countryOf(code: string): CountryCode | undefined {
  return isSupportedCountry(code) ? (code as CountryCode) : undefined;
}

/** The stored spelling of `phone`: E.164 when it is a possible number, else the input trimmed. */
export function normalisePhone(phone: string, country: string): string {
  const trimmed = phone.trim();
  const parsed = parsePhoneNumberFromString(trimmed, countryOf(country));
  return parsed?.isPossible() ? parsed.number : trimmed;
}

export function normaliseOptionalPhone<T extends string | null | undefined>(phone: T, country: string): T {
  return (typeof phone === 'string' && phone.trim() ? normalisePhone(phone, country) : phone) as T;
}

const PHONE_LIKE = /^(\+|\()?[0-9][0-9 ().-]*$/;

/** Digits and phone punctuation only (a search worth reading as a phone). */
export function looksLikePhone(search: string): boolean {
  return PHONE_LIKE.test(search.trim());
}

/**
 * What a search that looks like a phone (digits, spaces, `+().-`, at least 4 digits) matches in
 * stored phones: its E.164 form when it is a whole number, else its digits without leading zeros
 * (a part of a number, "0780 123" inside "+9647801234507"). Undefined for any other search.
 */
export function phoneSearchTerm(search: string, country: string): string | undefined {
  const trimmed = search.trim();
  if (!PHONE_LIKE.test(trimmed)) return undefined;
  const digits = trimmed.replace(/\D/g, '');
  if (digits.length < 4) return undefined;
  const parsed = parsePhoneNumberFromString(trimmed, countryOf(country));
  if (parsed?.isPossible()) return parsed.number;
  return digits.replace(/^0+/, '') || undefined;
}
