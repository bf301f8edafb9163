/** The pure parts of outgoing webhooks: the signature, the retry schedule, what the log keeps (docs/webhooks.md). */
import { answerExcerpt } from '../../services/webhooks/answer-excerpt';
import { eventBody } from '../../services/webhooks/events';
import { isDelivered, nextAttempt, retryDelay, type RetryPolicy } from '../../services/webhooks/schedule';
import { signatureHeader, verifySignature } from '../../services/webhooks/signing';

const policy: RetryPolicy = { baseMs: 30_000, maxMs: 3_600_000, windowMs: 86_400_000, disableAfter: 20 };

describe('signature', () => {
  const body = '{"id":"e1","type":"invoice.paid"}';
  it('verifies its own header and refuses another body, secret or an old timestamp', () => {
    const header = signatureHeader('s3cret', 1_800_000_000, body);
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, body, 's3cret', 1_800_000_100)).toBe(true);
    expect(verifySignature(header, `${body} `, 's3cret', 1_800_000_100)).toBe(false);
    expect(verifySignature(header, body, 'other', 1_800_000_100)).toBe(false);
    expect(verifySignature(header, body, 's3cret', 1_800_000_301)).toBe(false);
    expect(verifySignature('t=1800000000,v1=zz', body, 's3cret', 1_800_000_000)).toBe(false);
  });
});

describe('retry schedule', () => {
  it('doubles from the base up to the cap', () => {
    expect([1, 2, 3, 4, 8, 9, 30].map((n) => retryDelay(policy, n) / 1000)).toEqual([
      30, 60, 120, 240, 3600, 3600, 3600,
    ]);
  });
  it('stops when the next attempt would fall past the day', () => {
    const created = new Date('2026-01-01T00:00:00Z');
    expect(nextAttempt(policy, created, 1, created)).toEqual(new Date('2026-01-01T00:00:30Z'));
    expect(nextAttempt(policy, created, 10, new Date('2026-01-01T23:30:00Z'))).toBeNull();
  });
  it('counts only 2xx as delivered (a redirect is not followed)', () => {
    expect([200, 204, 299, 301, 404, 500, null].map(isDelivered)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('event body', () => {
  it('sends money as decimals of its currency', () => {
    const body = eventBody({
      eventId: 'e1',
      event: 'invoice.paid',
      payload: { id: 1, total: 1050, paid_amount: 1050, currency: 'KWD' },
      createdAt: new Date('2026-01-01T00:00:00Z'),
    });
    expect(JSON.parse(body)).toEqual({
      id: 'e1',
      type: 'invoice.paid',
      created_at: '2026-01-01T00:00:00.000Z',
      data: { id: 1, total: 1.05, paid_amount: 1.05, currency: 'KWD' },
    });
  });
});

describe('what the delivery log keeps of an answer', () => {
  const kept = (contentType: string | undefined, body: string, privateTarget = false) =>
    answerExcerpt({ contentType, body: Buffer.from(body), privateTarget });

  it('nothing of a private target’s answer, whatever it is', () => {
    expect(kept('text/plain', 'thanks', true)).toBeNull();
    expect(kept('application/json', '{"ok":true}', true)).toBeNull();
  });
  it('a text or JSON answer of a public target, up to 200 characters', () => {
    expect(kept('text/plain', 'thanks')).toBe('thanks');
    expect(kept('application/json; charset=utf-8', '{"ok":true}')).toBe('{"ok":true}');
    expect(kept('application/problem+json', '{"title":"bad"}')).toBe('{"title":"bad"}');
    expect(kept('TEXT/HTML', 'x'.repeat(1000))).toBe('x'.repeat(200));
    expect(kept('text/plain', '😀'.repeat(300))).toBe('😀'.repeat(200));
  });
  it('control and format characters are taken out (a run of them becomes one space)', () => {
    expect(kept('text/plain', 'ok\u0000\u001b[31mred\r\n\tnext\u202eevil\u200b\n')).toBe('ok [31mred next evil');
  });
  it('nothing of any other answer, or of an empty one', () => {
    for (const type of ['image/png', 'application/octet-stream', 'application/xml', '', undefined]) {
      expect(kept(type, 'PNG or whatever')).toBeNull();
    }
    expect(kept('text/plain', '')).toBeNull();
    expect(kept('text/plain', '\u0000\n')).toBeNull();
  });
});
