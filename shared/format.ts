/**
 * The one way money and dates are shown to people (issue 39): invoices, the receipt page, the
 * captive portal, chat messages and reminders. The console has the same rules in
 * services/gateway/console/format.js, and a Chromium test holds the two to the same output.
 *
 * - Money: the amount with exactly the currency's ISO 4217 digits, Latin digits, "," between
 *   thousands, "." before the fraction, then the ISO code: `25,000.000 IQD`, `302.50 USD`,
 *   `1,234 JPY`. The digits are those the ledger keeps, so a printed total is always the sum of the
 *   printed lines (no rounding for display). The same in every language.
 * - Dates: `Intl` in the document language with Latin digits and a short month name
 *   (`Mar 15, 2025`, `15 مارس 2025`); times in 24 hours. A calendar date (`2025-03-15`) is shown as
 *   that day whatever the time zone; an instant is shown in UTC on the server (documents have no
 *   reader's time zone) and in the browser's zone in the console.
 * - Right to left: amounts, phone numbers and invoice numbers are left-to-right islands; a date
 *   takes the direction of its own words. In HTML that is `<bdi>`, in plain text (chat messages)
 *   the Unicode isolates below.
 */
import { formatMinor } from './money';

/** `25,000.000 IQD`: minor units in the currency's ISO digits, then the code. */
export function formatMoney(minor: number, currency: string): string {
  return `${formatMinor(minor, currency)} ${currency}`;
}

/** The language's own words with Latin digits, as the console shows them: `ar-u-nu-latn`. */
function locale(language: string): string {
  try {
    return Intl.getCanonicalLocales(`${language}-u-nu-latn`)[0];
  } catch {
    return 'en-u-nu-latn';
  }
}

const DAY: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' };
const MINUTE: Intl.DateTimeFormatOptions = { ...DAY, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };

/** A calendar date `YYYY-MM-DD` (or the day of an instant, in UTC) in the language. */
export function formatDate(value: string | Date, language: string): string {
  const d = typeof value === 'string' ? new Date(`${value.slice(0, 10)}T00:00:00Z`) : value;
  if (Number.isNaN(d.getTime())) return String(value);
  return new Intl.DateTimeFormat(locale(language), DAY).format(d);
}

/** An instant to the minute, in UTC, in the language. */
export function formatDateTime(value: string | Date, language: string): string {
  const d = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(d.getTime())) return String(value);
  return new Intl.DateTimeFormat(locale(language), MINUTE).format(d);
}

/** Languages written right to left (the `language` setting's description names them). */
const RTL = new Set(['ar', 'fa', 'he', 'ur', 'ps', 'sd', 'yi', 'ku']);

export function isRtl(language: string): boolean {
  return RTL.has(language);
}

/** Left-to-right isolate (LRI ... PDI): an amount, phone or number kept whole inside Arabic text. */
export const ltrIsolate = (text: string) => `\u2066${text}\u2069`;

/** First-strong isolate (FSI ... PDI): a date or name set apart, in the direction of its own words. */
export const isolate = (text: string) => `\u2068${text}\u2069`;
