import { Errors } from 'moleculer';

/**
 * The one error type of the API. `code` is the HTTP status the gateway answers with and `message`
 * is the spec's message, so the error survives a trip through the transporter unchanged.
 */
export class ApiError extends Errors.MoleculerError {
  constructor(status: number, message: string, data?: unknown) {
    super(message, status, 'API_ERROR', data);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = (message = 'unauthorized') => new ApiError(401, message);
export const forbidden = (message = 'not authorized') => new ApiError(403, message);
export const notFound = (message = 'not found') => new ApiError(404, message);
export const conflict = (message: string) => new ApiError(409, message);
export const paymentRequired = (message: string) => new ApiError(402, message);
export const unprocessable = (message: string) => new ApiError(422, message);
export const unavailable = (message: string) => new ApiError(503, message);
