"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.providerFor = providerFor;
const telegram_1 = require("./telegram");
const types_1 = require("./types");
const whatsapp_1 = require("./whatsapp");
const PROVIDERS = {
    whatsapp: whatsapp_1.whatsappProvider,
    telegram: telegram_1.telegramProvider,
};
function providerFor(s, timeoutMs) {
    const make = PROVIDERS[s.messaging_provider];
    if (!make)
        throw new types_1.NotConfiguredError('messaging_provider is not set');
    return make(s, timeoutMs);
}
//# sourceMappingURL=index.js.map