/**
 * The console's half of the one money and date format (shared/format.ts has the server's, and
 * docs/console.md the rule): a Chromium test holds both to the same text.
 *
 * - Money: exactly the currency's ISO 4217 digits, Latin digits, "," and ".", then the code:
 *   `25,000.000 IQD`. The same in every language.
 * - Dates: Intl in the page's language with Latin digits and a short month name; a calendar
 *   date is that day everywhere, an instant is shown in the browser's time zone, to the minute.
 * - Every text returned is a Unicode isolate (left to right for money, its own direction for a
 *   date) with no-break spaces, so it neither reverses inside Arabic text nor wraps in a table.
 */
import { EXPONENT_EXCEPTIONS } from './currencies.js';
import { language } from './i18n.js';

const LRI = '\u2066';
const FSI = '\u2068';
const PDI = '\u2069';
const NBSP = '\u00a0';

/** A left-to-right island: a phone number, an invoice number, a username inside Arabic text. */
export const ltrText = (text) => `${LRI}${text}${PDI}`;

/** Free text (a name) inside a sentence, in the direction of its own first letters. */
export const ownText = (text) => `${FSI}${text}${PDI}`;

/** The currency's ISO 4217 digits (the table is shared/money.ts's, served by the gateway). */
export const exponentOf = (currency) => EXPONENT_EXCEPTIONS[currency] ?? 2;

/**
 * The sum of API amounts (`[{ amount, currency }]`) for the screen, added in minor units so that
 * no float remainder shows; one amount per currency, joined by " + ".
 */
export function moneySum(amounts) {
  const minor = new Map();
  for (const { amount, currency } of amounts) {
    const exp = exponentOf(currency);
    minor.set(currency, (minor.get(currency) ?? 0) + Math.round(Number(amount) * 10 ** exp));
  }
  if (minor.size === 0) return '—';
  return [...minor].map(([currency, m]) => money(m / 10 ** exponentOf(currency), currency)).join(' + ');
}

/** `25,000.000 IQD` from the API's decimal amount, without isolates (what the server prints). */
export function moneyText(amount, currency) {
  const exp = exponentOf(currency);
  const fixed = Math.abs(Number(amount)).toFixed(exp);
  const [whole, frac] = fixed.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ',');
  const negative = Number(amount) < 0 && /[1-9]/.test(fixed);
  return `${negative ? '-' : ''}${grouped}${frac ? `.${frac}` : ''} ${currency}`;
}

/** An amount for the screen: isolated left to right, unbroken. */
export function money(amount, currency) {
  if (amount === null || amount === undefined || amount === '') return '—';
  if (!currency) return ltrText(String(amount));
  return ltrText(moneyText(amount, currency).replace(' ', NBSP));
}

const locale = (() => {
  try {
    return Intl.getCanonicalLocales(`${language}-u-nu-latn`)[0];
  } catch {
    return 'en-u-nu-latn';
  }
})();
const DAY = new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
const MINUTE = new Intl.DateTimeFormat(locale, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

const CLOCK = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** A text without its isolates and no-break spaces, for a canvas (a chart's axis), which draws them as boxes. */
export const plain = (text) => text.replace(/[\u2066-\u2069]/g, '').replace(/\u00a0/g, ' ');

const LOCAL_DAY = new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric' });

/** The time of day of an instant (`22:00`), in the browser's time zone: a chart's hour axis. */
export const clock = (value) => CLOCK.format(new Date(value));

/** The day of an instant (`Nov 28`) in the browser's time zone, beside `clock` where the day changes. */
export const localDay = (value) => LOCAL_DAY.format(new Date(value));

const unbroken = (text) => `${FSI}${text.replace(/\s/g, NBSP)}${PDI}`;

/** A calendar date (`2025-03-15`, or the day of an instant in UTC) in the page's language. */
export function date(value) {
  if (!value) return '—';
  const d = new Date(`${String(value).slice(0, 10)}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? String(value) : unbroken(DAY.format(d));
}

/** An instant to the minute, in the browser's time zone, in the page's language. */
export function dateTime(value) {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : unbroken(MINUTE.format(d));
}

/** A number with Latin digits and "," between thousands (counts, not money). */
export const count = (n) => ltrText(Number(n).toLocaleString('en-US'));
