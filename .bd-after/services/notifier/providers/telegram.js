"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.telegramProvider = telegramProvider;
const http_1 = require("./http");
const types_1 = require("./types");
/** Telegram's caption limit; longer captions are refused, so cut rather than fail. */
const CAPTION_MAX = 1024;
function errorText(body, status) {
    const b = body;
    return b?.description ?? (0, http_1.excerpt)(body, status);
}
function telegramProvider(s, timeoutMs) {
    if (!s.telegram_bot_token)
        throw new types_1.NotConfiguredError('telegram_bot_token must be set');
    const url = `${s.telegram_base_url.replace(/\/+$/, '')}/bot${s.telegram_bot_token}/sendDocument`;
    return {
        name: 'telegram',
        recipient(phone) {
            const id = phone.trim();
            if (!/^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$/.test(id)) {
                throw new types_1.InvalidRecipientError('phone must be a Telegram chat id (digits) or @channel for Telegram');
            }
            return id;
        },
        async send(doc) {
            const form = new FormData();
            form.append('chat_id', doc.to);
            form.append('document', new Blob([doc.pdf], { type: 'application/pdf' }), doc.filename);
            if (doc.caption)
                form.append('caption', doc.caption.slice(0, CAPTION_MAX));
            const body = (await (0, http_1.callProvider)(url, { method: 'POST', body: form }, timeoutMs, errorText));
            if (!body?.ok || body.result?.message_id === undefined)
                throw new Error('telegram answered without a message id');
            return { messageId: String(body.result.message_id) };
        },
    };
}
//# sourceMappingURL=telegram.js.map