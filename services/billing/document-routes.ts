/** Routes of invoice documents: PDF, public receipt page and PDF, public-link rotation, chat sending. */
import type { JsonSchema, RouteDef } from '../../shared/http/route';
import { idParams, object } from '../../shared/http/schemas';
import { PAPER_NAMES } from '../../shared/paper';

const TAG = 'invoice documents';
const paper: JsonSchema = { type: 'string', enum: [...PAPER_NAMES] };
/** Optional in the schema on purpose: a missing token must be 404 like a wrong one, never 400. */
const token: JsonSchema = { type: 'string', maxLength: 200 };
const renderErrors = { 503: 'renderer busy (queue full) or restarting', 504: 'render timed out' };
const sendBody = object({
  phone: { type: 'string', minLength: 1, maxLength: 64 },
  caption: { type: 'string', maxLength: 1000 },
});
const sendErrors = {
  400: 'phone is required (the subscriber has no phone), or not valid for the provider',
  403: "not authorized (role, or outside the caller's tree)",
  404: 'invoice not found',
  409: 'no messaging account configured',
  502: 'the provider rejected the message (its message is quoted)',
  503: 'the provider stayed unreachable after retries, or the renderer is busy',
};

export const routes: RouteDef[] = [
  {
    method: 'GET', path: '/api/invoices/:id/pdf', action: 'invoice-documents.pdf', auth: 'jwt',
    access: 'any authenticated (scope-checked)', summary: 'The invoice as a PDF stream', tag: TAG,
    params: idParams(), query: object({ paper }), produces: 'pdf',
    errors: { 400: 'unknown paper', 403: "not authorized (outside the caller's tree)", 404: 'invoice not found', ...renderErrors },
  },
  {
    method: 'GET', path: '/api/invoices/public/:id', action: 'invoice-documents.publicPage', auth: 'public',
    access: 'none (the invoice public token in `token`)', summary: 'Public read-only receipt page', tag: TAG,
    params: idParams(), query: object({ token }), produces: 'html', rateLimit: 'public',
    errors: { 404: 'invoice not found, or token missing or wrong' },
  },
  {
    method: 'GET', path: '/api/invoices/public/:id/pdf', action: 'invoice-documents.publicPdf', auth: 'public',
    access: 'none (the invoice public token in `token`)', summary: 'Public PDF of the invoice', tag: TAG,
    params: idParams(), query: object({ token, paper }), produces: 'pdf', rateLimit: 'public',
    errors: { 400: 'unknown paper', 404: 'invoice not found, or token missing or wrong', ...renderErrors },
  },
  {
    method: 'POST', path: '/api/invoices/:id/public-token', action: 'invoice-documents.rotatePublicToken', auth: 'jwt',
    access: 'admin or reseller (own tree)', summary: 'Rotate the public link: the old URL stops working', tag: TAG,
    params: idParams(), body: object({}),
    errors: { 403: "not authorized (role, or outside the caller's tree)", 404: 'invoice not found' },
  },
  {
    method: 'POST', path: '/api/invoices/:id/send-chat', action: 'invoice-documents.sendChat', auth: 'jwt',
    access: 'admin or reseller (own tree)', summary: 'Send the invoice PDF to the subscriber by chat', tag: TAG,
    params: idParams(), body: sendBody, errors: sendErrors,
  },
  {
    method: 'POST', path: '/api/invoices/:id/send-combined', action: 'invoice-documents.sendCombined', auth: 'jwt',
    access: 'admin or reseller (own tree)',
    summary: "Send one PDF merging the subscriber's open invoices (nothing stored changes)", tag: TAG,
    params: idParams(), body: sendBody, errors: { ...sendErrors, 409: 'no messaging account configured, or no open invoice to merge' },
  },
];
