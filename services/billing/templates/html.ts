/** HTML building blocks of the billing unit's public pages (the receipt and the captive portal). */
import { formatDate, formatDateTime, formatMoney } from '../../../shared/format';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Only http(s) and inline images may be a logo: anything else (javascript:, file:) is dropped. */
export function safeLogo(url: string): string | null {
  return /^(https?:\/\/|data:image\/(png|jpeg|gif|webp|svg\+xml);base64,)/i.test(url) ? url : null;
}

/** Amounts, phone numbers and invoice numbers stay left-to-right inside a right-to-left page. */
export const ltr = (text: string) => `<bdi dir="ltr">${escapeHtml(text)}</bdi>`;

/** An amount in the one money format (shared/format.ts), kept left to right. */
export const moneyHtml = (minor: number, currency: string) => ltr(formatMoney(minor, currency));

/** A calendar date in the language, isolated in the direction of its own words, never wrapped. */
export const dateHtml = (value: string | Date, language: string) =>
  `<bdi class="date">${escapeHtml(formatDate(value, language))}</bdi>`;

/** An instant to the minute in the language, isolated like a date. */
export const dateTimeHtml = (value: string | Date, language: string) =>
  `<bdi class="date">${escapeHtml(formatDateTime(value, language))}</bdi>`;

/**
 * Free text of the operator or the subscriber (an address, a phone, how to pay, notes), set apart
 * in the direction of its own first letters: an English address stays whole in an Arabic page and
 * a phone (no letters at all) reads left to right, as `<bdi>` without `dir` does.
 */
export const ownDirection = (text: string) => `<bdi>${multiline(text)}</bdi>`;

export function multiline(text: string): string {
  return escapeHtml(text).replace(/\r?\n/g, '<br>');
}
