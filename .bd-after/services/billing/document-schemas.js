"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.sendErrors = exports.sendBody = exports.renderErrors = exports.token = exports.paper = exports.TAG = void 0;
const schemas_1 = require("../../shared/http/schemas");
const paper_1 = require("../../shared/paper");
exports.TAG = 'invoice documents';
exports.paper = { type: 'string', enum: [...paper_1.PAPER_NAMES] };
/** Optional in the schema on purpose: a missing token must be 404 like a wrong one, never 400. */
exports.token = { type: 'string', maxLength: 200 };
exports.renderErrors = { 503: 'renderer busy (queue full) or restarting', 504: 'render timed out' };
exports.sendBody = (0, schemas_1.object)({
    phone: { type: 'string', minLength: 1, maxLength: 64 },
    caption: { type: 'string', maxLength: 1000 },
});
exports.sendErrors = {
    400: 'phone is required (the subscriber has no phone), or not valid for the provider',
    403: "not authorized (role, or outside the caller's tree)",
    404: 'invoice not found',
    409: 'no messaging account configured',
    502: 'the provider rejected the message (its message is quoted)',
    503: 'the provider stayed unreachable after retries, or the renderer is busy',
};
//# sourceMappingURL=document-schemas.js.map