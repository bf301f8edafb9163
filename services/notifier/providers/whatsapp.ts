/**
 * WhatsApp Business Cloud API: upload the PDF as media (`POST /{phone-number-id}/media`, multipart
 * with `messaging_product`, `type` and `file`), then send a document message referencing the media
 * id (`POST /{phone-number-id}/messages`). Text (the lifecycle's reminders) is a `text` message on
 * the same endpoint; outside a 24-hour customer service window WhatsApp delivers only approved
 * templates, which an operator sets up with Meta (docs/lifecycle.md). Recipients are international
 * numbers, digits only.
 */
import type { Settings } from '../../../shared/settings';
import { callProvider, excerpt } from './http';
import {
  InvalidRecipientError,
  NotConfiguredError,
  type ChatProvider,
  type OutgoingDocument,
  type OutgoingText,
} from './types';

/** WhatsApp's text body limit. */
const TEXT_MAX = 4096;

function errorText(body: unknown, status: number): string {
  const err = (body as { error?: { message?: string; error_data?: { details?: string } } } | null)?.error;
  if (!err?.message) return excerpt(body, status);
  return err.error_data?.details ? `${err.message} (${err.error_data.details})` : err.message;
}

export function whatsappProvider(s: Settings, timeoutMs: number): ChatProvider {
  if (!s.whatsapp_access_token || !s.whatsapp_phone_number_id) {
    throw new NotConfiguredError('whatsapp_access_token and whatsapp_phone_number_id must be set');
  }
  const base = `${s.whatsapp_base_url.replace(/\/+$/, '')}/${encodeURIComponent(s.whatsapp_phone_number_id)}`;
  const auth = { authorization: `Bearer ${s.whatsapp_access_token}` };
  const postMessage = async (message: Record<string, unknown>): Promise<{ messageId: string }> => {
    const sent = (await callProvider(
      `${base}/messages`,
      { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(message) },
      timeoutMs,
      errorText,
    )) as { messages?: { id?: string }[] };
    const id = sent?.messages?.[0]?.id;
    if (!id) throw new Error('whatsapp send answered without a message id');
    return { messageId: id };
  };

  return {
    name: 'whatsapp',
    recipient(phone: string): string {
      // E.164 as people write it: "+964 770 123-4567" -> "9647701234567".
      if (!/^\+?[\d\s().-]+$/.test(phone))
        throw new InvalidRecipientError('phone must be an international phone number for WhatsApp');
      const digits = phone.replace(/\D/g, '');
      if (digits.length < 7 || digits.length > 15)
        throw new InvalidRecipientError('phone must be an international phone number for WhatsApp');
      return digits;
    },
    async send(doc: OutgoingDocument): Promise<{ messageId: string }> {
      const form = new FormData();
      form.append('messaging_product', 'whatsapp');
      form.append('type', 'application/pdf');
      form.append('file', new Blob([doc.pdf], { type: 'application/pdf' }), doc.filename);
      const media = (await callProvider(
        `${base}/media`,
        { method: 'POST', headers: auth, body: form },
        timeoutMs,
        errorText,
      )) as { id?: string };
      if (!media?.id) throw new Error('whatsapp media upload answered without an id');

      return postMessage({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: doc.to,
        type: 'document',
        document: { id: media.id, filename: doc.filename, ...(doc.caption ? { caption: doc.caption } : {}) },
      });
    },
    async sendText(msg: OutgoingText): Promise<{ messageId: string }> {
      return postMessage({
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to: msg.to,
        type: 'text',
        text: { body: msg.text.slice(0, TEXT_MAX), preview_url: true },
      });
    },
  };
}
