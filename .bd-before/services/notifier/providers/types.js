"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.NotConfiguredError = exports.InvalidRecipientError = exports.TransientProviderError = exports.ProviderRejectedError = void 0;
/** The provider answered and refused (4xx): retrying the same request cannot help. */
class ProviderRejectedError extends Error {
    constructor(message) {
        super(message);
        this.name = 'ProviderRejectedError';
    }
}
exports.ProviderRejectedError = ProviderRejectedError;
/** Network failure, timeout, 5xx or 429: worth another attempt after a pause. */
class TransientProviderError extends Error {
    constructor(message) {
        super(message);
        this.name = 'TransientProviderError';
    }
}
exports.TransientProviderError = TransientProviderError;
class InvalidRecipientError extends Error {
    constructor(message) {
        super(message);
        this.name = 'InvalidRecipientError';
    }
}
exports.InvalidRecipientError = InvalidRecipientError;
/** Settings lack what the chosen provider needs (or none is chosen). */
class NotConfiguredError extends Error {
    constructor(detail) {
        super(detail);
        this.name = 'NotConfiguredError';
    }
}
exports.NotConfiguredError = NotConfiguredError;
//# sourceMappingURL=types.js.map