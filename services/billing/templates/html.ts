/** HTML building blocks of the billing unit's public pages (the receipt and the captive portal). */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Only http(s) and inline images may be a logo: anything else (javascript:, file:) is dropped. */
export function safeLogo(url: string): string | null {
  return /^(https?:\/\/|data:image\/(png|jpeg|gif|webp|svg\+xml);base64,)/i.test(url) ? url : null;
}

/** Amounts, numbers and dates stay left-to-right inside a right-to-left page. */
export const ltr = (text: string) => `<bdi dir="ltr">${escapeHtml(text)}</bdi>`;

export function multiline(text: string): string {
  return escapeHtml(text).replace(/\r?\n/g, '<br>');
}
