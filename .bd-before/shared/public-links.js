"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.newPublicNonce = newPublicNonce;
exports.publicToken = publicToken;
exports.publicTokenHash = publicTokenHash;
exports.newPublicLink = newPublicLink;
exports.publicUrl = publicUrl;
exports.verifyPublicToken = verifyPublicToken;
/**
 * Public receipt links (ARCHITECTURE section 6): `/api/invoices/public/:id?token=...`.
 * The token is HMAC-SHA256(key, invoice id, nonce): 256 unguessable bits that the server can
 * re-derive to show `public_url`, while the database holds only the nonce and the token's hash
 * (a leaked database row yields no working link without the key). Rotating = a new nonce.
 */
const node_crypto_1 = __importDefault(require("node:crypto"));
const config_1 = require("./config");
let linkKey;
function key() {
    const master = (0, config_1.config)().encryptionKey;
    if (!master)
        throw new Error('ENCRYPTION_KEY is not configured');
    linkKey ??= Buffer.from(node_crypto_1.default.hkdfSync('sha256', master, Buffer.alloc(0), 'public-invoice-links', 32));
    return linkKey;
}
function newPublicNonce() {
    return node_crypto_1.default.randomBytes(16).toString('base64url');
}
function publicToken(invoiceId, nonce) {
    return node_crypto_1.default.createHmac('sha256', key()).update(`invoice:${invoiceId}:${nonce}`).digest('base64url');
}
function publicTokenHash(token) {
    return node_crypto_1.default.createHash('sha256').update(token).digest('hex');
}
/** Columns to store for a new or rotated link. */
function newPublicLink(invoiceId) {
    const nonce = newPublicNonce();
    return { publicTokenNonce: nonce, publicTokenHash: publicTokenHash(publicToken(invoiceId, nonce)) };
}
function publicUrl(invoiceId, nonce) {
    return `${(0, config_1.config)().publicBaseUrl}/api/invoices/public/${invoiceId}?token=${publicToken(invoiceId, nonce)}`;
}
/** Constant-time check of a presented token against the stored hash. */
function verifyPublicToken(storedHash, presented) {
    if (!storedHash || !presented)
        return false;
    const a = Buffer.from(publicTokenHash(presented), 'hex');
    const b = Buffer.from(storedHash, 'hex');
    return a.length === b.length && node_crypto_1.default.timingSafeEqual(a, b);
}
//# sourceMappingURL=public-links.js.map