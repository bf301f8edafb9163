/**
 * Headers of the pages served without sign-in (the public receipt and its PDF, the online payment
 * return page; docs/security.md): the console's protections, and, because their URL carries a
 * secret (a token, a reference), nothing that keeps it in a cache, a search engine or a Referer.
 */
import crypto from 'node:crypto';

const BASE = {
  'Cache-Control': 'private, no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Robots-Tag': 'noindex',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

/**
 * The headers for a page that may use exactly `styles` (style sheets, allowed by their hashes) and,
 * with `images`, inline (data:) images; no script, fetch, form or frame ever. Nothing allowed: the
 * strictest policy, for a PDF or a page without style.
 */
export function publicPageHeaders(page: { styles?: string[]; images?: boolean } = {}): Record<string, string> {
  const hashes = (page.styles ?? []).map(
    (css) => `'sha256-${crypto.createHash('sha256').update(css).digest('base64')}'`,
  );
  const csp = [
    "default-src 'none'",
    ...(hashes.length ? [`style-src ${hashes.join(' ')}`] : []),
    ...(page.images ? ['img-src data:'] : []),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { ...BASE, 'Content-Security-Policy': csp };
}
