import { Errors } from 'moleculer';

/**
 * The one error type of the API. `code` is the HTTP status the gateway answers with and `message`
 * is the spec's message, so the error survives a trip through the transporter unchanged. Code makes
 * one through the catalogue of failures (shared/failures.ts: `throw fail('invoiceNotFound')`).
 */
export class ApiError extends Errors.MoleculerError {
  constructor(status: number, message: string, data?: unknown) {
    super(message, status, 'API_ERROR', data);
    this.name = 'ApiError';
  }
}
