/** Request schemas and error tables of the invoice document routes (documents.service.ts). */
import { object, type IdPath, type Infer } from '../../shared/http/schemas';
import { PAPER_NAMES } from '../../shared/paper';
import { FAILURES } from '../../shared/failures';

export const TAG = 'invoice documents';
export const paper = { type: 'string', enum: PAPER_NAMES } as const;
/** Optional in the schema on purpose: a missing token must be 404 like a wrong one, never 400. */
export const token = { type: 'string', maxLength: 200 } as const;
export const renderErrors = { 503: 'renderer busy (queue full) or restarting', 504: 'render timed out' };
export const sendBody = object({
  phone: { type: 'string', minLength: 1, maxLength: 64 },
  caption: { type: 'string', maxLength: 1000 },
});

export const pdfQuery = object({ paper });
export const publicPageQuery = object({ token });
export const publicPdfQuery = object({ token, paper });

export type PdfInput = IdPath & Infer<typeof pdfQuery>;
export type PublicPageInput = IdPath & Infer<typeof publicPageQuery>;
export type PublicPdfInput = IdPath & Infer<typeof publicPdfQuery>;
export type SendInput = IdPath & Infer<typeof sendBody>;
export const sendErrors = {
  400: 'phone is required (the subscriber has no phone), or not valid for the provider',
  403: "not authorized (role, or outside the caller's tree)",
  404: FAILURES.invoiceNotFound.message,
  409: 'no messaging account configured',
  502: 'the provider rejected the message (its message is quoted)',
  503: 'the provider stayed unreachable after retries, or the renderer is busy',
};
