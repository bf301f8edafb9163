/**
 * Money is integer minor units everywhere inside; the API speaks decimal numbers. Conversions go
 * through decimal strings and BigInt, never through floating-point arithmetic.
 */
import { fail } from './failures';

/** ISO 4217 currencies whose minor unit is not 2 digits. Every other valid code has 2. */
export const EXPONENT_EXCEPTIONS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** Active ISO 4217 codes (2024 list). */
const ISO_4217 = new Set(
  (
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN ' +
    'BZD CAD CDF CHF CLF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL ' +
    'GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW ' +
    'KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN ' +
    'NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK ' +
    'SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYI UYU ' +
    'UYW UZS VED VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWG'
  ).split(' '),
);

export function isCurrency(code: string): boolean {
  return ISO_4217.has(code);
}

export function currencyExponent(code: string): number {
  if (!isCurrency(code)) throw new RangeError(`unknown currency ${code}`);
  return EXPONENT_EXCEPTIONS[code] ?? 2;
}

/** A finite decimal as digits and scale: 12.345 -> { digits: 12345n, scale: 3 }. */
export interface Decimal {
  digits: bigint;
  scale: number;
}

export function parseDecimal(value: number | string): Decimal {
  let s = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  if (!/^-?\d+(\.\d+)?$/.test(s)) throw new RangeError(`not a decimal: ${value}`);
  const negative = s.startsWith('-');
  if (negative) s = s.slice(1);
  const [whole, frac = ''] = s.split('.');
  const digits = BigInt(whole + frac) * (negative ? -1n : 1n);
  return { digits, scale: frac.length };
}

function numberToPlainString(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`not a finite number: ${n}`);
  const s = String(n);
  if (!/e/i.test(s)) return s;
  // Shortest round-trip digits, re-expressed without exponent.
  const [mantissa, expPart] = s.toLowerCase().split('e');
  const exp = Number(expPart);
  const negative = mantissa.startsWith('-');
  const m = negative ? mantissa.slice(1) : mantissa;
  const [w, f = ''] = m.split('.');
  const allDigits = w + f;
  const point = w.length + exp;
  let out: string;
  if (point <= 0) out = '0.' + '0'.repeat(-point) + allDigits;
  else if (point >= allDigits.length) out = allDigits + '0'.repeat(point - allDigits.length);
  else out = allDigits.slice(0, point) + '.' + allDigits.slice(point);
  return (negative ? '-' : '') + out;
}

/** Divide with rounding half away from zero (half-up on magnitudes). */
export function divRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new RangeError('division by zero');
  const negative = numerator < 0n !== denominator < 0n;
  const n = numerator < 0n ? -numerator : numerator;
  const d = denominator < 0n ? -denominator : denominator;
  const q = (n * 2n + d) / (d * 2n);
  return negative ? -q : q;
}

/** Decimal amount in the API -> minor units; more decimals than the currency has is refused. */
export function toMinor(value: number, currency: string): number {
  const exp = currencyExponent(currency);
  const { digits, scale } = parseDecimal(value);
  if (scale > exp) throw new RangeError(`more than ${exp} decimal places`);
  return Number(digits * 10n ** BigInt(exp - scale));
}

/**
 * A money field of a request in minor units: more decimals than the currency has is the 400
 * `<field> has more decimal places than <currency> allows`.
 */
export function moneyField(value: number, currency: string, field: string): number {
  try {
    return toMinor(value, currency);
  } catch {
    throw fail('tooManyDecimals', field, currency);
  }
}

/** Minor units -> decimal number for the API (exact for every amount below 2^53 minor units). */
export function fromMinor(minor: number, currency: string): number {
  const exp = currencyExponent(currency);
  if (exp === 0) return minor;
  const negative = minor < 0;
  const s = String(Math.abs(minor)).padStart(exp + 1, '0');
  return Number((negative ? '-' : '') + s.slice(0, -exp) + '.' + s.slice(-exp));
}

/** Minor units as a fixed string with the currency's digits and thousands separators ("1,234.50"). */
export function formatMinor(minor: number, currency: string): string {
  const exp = currencyExponent(currency);
  const s = String(Math.abs(minor)).padStart(exp + 1, '0');
  const whole = (exp === 0 ? s : s.slice(0, -exp)).replace(/\B(?=(\d{3})+$)/g, ',');
  return (minor < 0 ? '-' : '') + whole + (exp === 0 ? '' : '.' + s.slice(-exp));
}

/** amount x rate% rounded half-up, rate given as a decimal percent such as 7.5. */
export function percentOf(minor: number, ratePercent: number | string): number {
  const { digits, scale } = parseDecimal(ratePercent);
  return Number(divRoundHalfUp(BigInt(minor) * digits, 100n * 10n ** BigInt(scale)));
}

/** amount plus its tax at rate%, rounded half-up as an invoice's own arithmetic does. */
export function withTax(minor: number, ratePercent: number | string): number {
  return minor + percentOf(minor, ratePercent);
}
