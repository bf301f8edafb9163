"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.callProvider = callProvider;
exports.excerpt = excerpt;
/** One HTTP call to a provider, its failure sorted into rejected (4xx) or transient (the rest). */
const types_1 = require("./types");
async function callProvider(url, init, timeoutMs, errorText) {
    let res;
    try {
        res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    }
    catch (err) {
        const cause = err.cause?.code;
        throw new types_1.TransientProviderError(`network error: ${cause ?? err.message}`);
    }
    const text = await res.text();
    let body = text;
    try {
        body = JSON.parse(text);
    }
    catch {
        // Proxies and load balancers answer HTML; keep the text for the message.
    }
    if (res.ok)
        return body;
    const message = errorText(body, res.status);
    if (res.status >= 500 || res.status === 429)
        throw new types_1.TransientProviderError(message);
    throw new types_1.ProviderRejectedError(message);
}
/** A short, single-line excerpt of a body that was not the provider's JSON. */
function excerpt(body, status) {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return `HTTP ${status}: ${text.replace(/\s+/g, ' ').slice(0, 200)}`;
}
//# sourceMappingURL=http.js.map