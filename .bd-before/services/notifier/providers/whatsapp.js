"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.whatsappProvider = whatsappProvider;
const http_1 = require("./http");
const types_1 = require("./types");
function errorText(body, status) {
    const err = body?.error;
    if (!err?.message)
        return (0, http_1.excerpt)(body, status);
    return err.error_data?.details ? `${err.message} (${err.error_data.details})` : err.message;
}
function whatsappProvider(s, timeoutMs) {
    if (!s.whatsapp_access_token || !s.whatsapp_phone_number_id) {
        throw new types_1.NotConfiguredError('whatsapp_access_token and whatsapp_phone_number_id must be set');
    }
    const base = `${s.whatsapp_base_url.replace(/\/+$/, '')}/${encodeURIComponent(s.whatsapp_phone_number_id)}`;
    const auth = { authorization: `Bearer ${s.whatsapp_access_token}` };
    return {
        name: 'whatsapp',
        recipient(phone) {
            // E.164 as people write it: "+964 770 123-4567" -> "9647701234567".
            if (!/^\+?[\d\s().-]+$/.test(phone))
                throw new types_1.InvalidRecipientError('phone must be an international phone number for WhatsApp');
            const digits = phone.replace(/\D/g, '');
            if (digits.length < 7 || digits.length > 15)
                throw new types_1.InvalidRecipientError('phone must be an international phone number for WhatsApp');
            return digits;
        },
        async send(doc) {
            const form = new FormData();
            form.append('messaging_product', 'whatsapp');
            form.append('type', 'application/pdf');
            form.append('file', new Blob([doc.pdf], { type: 'application/pdf' }), doc.filename);
            const media = (await (0, http_1.callProvider)(`${base}/media`, { method: 'POST', headers: auth, body: form }, timeoutMs, errorText));
            if (!media?.id)
                throw new Error('whatsapp media upload answered without an id');
            const message = {
                messaging_product: 'whatsapp',
                recipient_type: 'individual',
                to: doc.to,
                type: 'document',
                document: { id: media.id, filename: doc.filename, ...(doc.caption ? { caption: doc.caption } : {}) },
            };
            const sent = (await (0, http_1.callProvider)(`${base}/messages`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(message) }, timeoutMs, errorText));
            const id = sent?.messages?.[0]?.id;
            if (!id)
                throw new Error('whatsapp send answered without a message id');
            return { messageId: id };
        },
    };
}
//# sourceMappingURL=whatsapp.js.map