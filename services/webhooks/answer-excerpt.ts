/**
 * What the delivery log keeps of a receiver's answer besides its status (docs/webhooks.md): enough
 * of a text or JSON answer to see why a receiver refused an event, and nothing that would let an
 * admin read a private address through an endpoint (issue 43): no body of a target reached only
 * because `allow_private_targets` is on, none of a binary answer, no control characters.
 */

/** Characters kept of an answer. */
export const KEPT_CHARACTERS = 200;

function isTextOrJson(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return type.startsWith('text/') || type === 'application/json' || /^application\/[^/]+\+json$/.test(type);
}

export function answerExcerpt(a: {
  contentType: string | undefined;
  body: Buffer;
  privateTarget: boolean;
}): string | null {
  if (a.privateTarget || !isTextOrJson(a.contentType)) return null;
  const text = a.body
    .toString('utf8')
    .replace(/[\p{Cc}\p{Cf}]+/gu, ' ')
    .trim();
  // By code points, so an emoji is never cut in half.
  return Array.from(text).slice(0, KEPT_CHARACTERS).join('') || null;
}
