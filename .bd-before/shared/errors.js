"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.unavailable = exports.unprocessable = exports.paymentRequired = exports.conflict = exports.notFound = exports.forbidden = exports.unauthorized = exports.badRequest = exports.ApiError = void 0;
const moleculer_1 = require("moleculer");
/**
 * The one error type of the API. `code` is the HTTP status the gateway answers with and `message`
 * is the spec's message, so the error survives a trip through the transporter unchanged.
 */
class ApiError extends moleculer_1.Errors.MoleculerError {
    constructor(status, message, data) {
        super(message, status, 'API_ERROR', data);
        this.name = 'ApiError';
    }
}
exports.ApiError = ApiError;
const badRequest = (message) => new ApiError(400, message);
exports.badRequest = badRequest;
const unauthorized = (message = 'unauthorized') => new ApiError(401, message);
exports.unauthorized = unauthorized;
const forbidden = (message = 'not authorized') => new ApiError(403, message);
exports.forbidden = forbidden;
const notFound = (message = 'not found') => new ApiError(404, message);
exports.notFound = notFound;
const conflict = (message) => new ApiError(409, message);
exports.conflict = conflict;
const paymentRequired = (message) => new ApiError(402, message);
exports.paymentRequired = paymentRequired;
const unprocessable = (message) => new ApiError(422, message);
exports.unprocessable = unprocessable;
const unavailable = (message) => new ApiError(503, message);
exports.unavailable = unavailable;
//# sourceMappingURL=errors.js.map