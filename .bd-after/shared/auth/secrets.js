"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.encrypt = encrypt;
exports.decrypt = decrypt;
const node_crypto_1 = __importDefault(require("node:crypto"));
const config_1 = require("../config");
/**
 * AES-256-GCM for what must be readable again (subscriber passwords, router and chat credentials).
 * Stored as `v1:<iv>:<tag>:<ciphertext>` in base64url, so a later key or cipher can be told apart.
 */
function encrypt(plain, key = requireKey()) {
    const iv = node_crypto_1.default.randomBytes(12);
    const cipher = node_crypto_1.default.createCipheriv('aes-256-gcm', key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join(':');
}
function decrypt(stored, key = requireKey()) {
    const [version, iv, tag, data] = stored.split(':');
    if (version !== 'v1' || !iv || !tag || data === undefined)
        throw new Error('unknown secret format');
    const decipher = node_crypto_1.default.createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}
function requireKey() {
    const key = (0, config_1.config)().encryptionKey;
    if (!key)
        throw new Error('ENCRYPTION_KEY is not configured');
    return key;
}
//# sourceMappingURL=secrets.js.map