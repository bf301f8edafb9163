/**
 * Telegram Bot API `sendDocument` (multipart: `chat_id`, `document`, `caption`) and `sendMessage`
 * (JSON: `chat_id`, `text`) for text. A bot cannot
 * address a phone number: the recipient is the chat id (or @channel) of a chat that has started
 * the bot, stored in the subscriber's phone field or given in the request.
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

/** Telegram's caption limit; longer captions are refused, so cut rather than fail. */
const CAPTION_MAX = 1024;
/** Telegram's message text limit. */
const TEXT_MAX = 4096;

function errorText(body: unknown, status: number): string {
  const b = body as { ok?: boolean; description?: string } | null;
  return b?.description ?? excerpt(body, status);
}

export function telegramProvider(s: Settings, timeoutMs: number): ChatProvider {
  if (!s.telegram_bot_token) throw new NotConfiguredError('telegram_bot_token must be set');
  const bot = `${s.telegram_base_url.replace(/\/+$/, '')}/bot${s.telegram_bot_token}`;
  const url = `${bot}/sendDocument`;
  const messageId = (body: unknown): string => {
    const b = body as { ok?: boolean; result?: { message_id?: number } } | null;
    if (!b?.ok || b.result?.message_id === undefined) throw new Error('telegram answered without a message id');
    return String(b.result.message_id);
  };

  return {
    name: 'telegram',
    recipient(phone: string): string {
      const id = phone.trim();
      if (!/^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$/.test(id)) {
        throw new InvalidRecipientError('phone must be a Telegram chat id (digits) or @channel for Telegram');
      }
      return id;
    },
    async send(doc: OutgoingDocument): Promise<{ messageId: string }> {
      const form = new FormData();
      form.append('chat_id', doc.to);
      form.append('document', new Blob([doc.pdf], { type: 'application/pdf' }), doc.filename);
      if (doc.caption) form.append('caption', doc.caption.slice(0, CAPTION_MAX));
      return { messageId: messageId(await callProvider(url, { method: 'POST', body: form }, timeoutMs, errorText)) };
    },
    async sendText(msg: OutgoingText): Promise<{ messageId: string }> {
      const body = JSON.stringify({ chat_id: msg.to, text: msg.text.slice(0, TEXT_MAX) });
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
      return { messageId: messageId(await callProvider(`${bot}/sendMessage`, init, timeoutMs, errorText)) };
    },
  };
}
