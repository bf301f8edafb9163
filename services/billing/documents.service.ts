/**
 * `invoice-documents`: the invoice as a PDF, as a public receipt page and PDF, its public link's
 * rotation, and chat delivery. It renders the one template (templates/invoice.ts), hands HTML to
 * `pdf-renderer` and the resulting stream to the gateway or to `notifier`; it never writes an
 * invoice (the public link rotation writes only the link columns).
 */
import type { Readable } from 'node:stream';
import { eq } from 'drizzle-orm';
import type { Service, ServiceSchema } from 'moleculer';
import { todayUtc, type InvoiceRow } from '../../shared/billing';
import { recordAudit } from '../../shared/audit';
import type { Auth } from '../../shared/auth/claims';
import { recordInScope, requireInvoicePermission } from '../../shared/auth/policy';
import { db, pgPool, type DbOrTx } from '../../shared/db/client';
import { invoices } from '../../shared/db/schema';
import { FAILURES, fail } from '../../shared/failures';
import { authOf, type Ctx } from '../../shared/http/context';
import { publicPageHeaders } from '../../shared/http/public-page';
import type { ActionResult } from '../../shared/http/route';
import { formatMoney, isRtl, ltrIsolate } from '../../shared/format';
import type { PaperSize } from '../../shared/paper';
import { newPublicLink, publicUrl, verifyPublicToken } from '../../shared/public-links';
import { loadSettings, type Settings } from '../../shared/settings';
import { loadDocument, loadInvoiceRow, loadOpenDocuments, loadSubscriber } from './documents-data';
import { combinedModel, invoiceModel, type BrandingSettings } from './documents-model';
import { cachedPdf, DOCUMENT_SETTINGS, pdfSource, pdfStream, type PdfSource } from './invoice-pdf';
import { BoundedPdfStore, PgPdfStore, pdfCacheOptionsFromEnv, type PdfStore } from './pdf-cache';
import { INVOICE_STYLE, renderInvoiceHtml } from './templates/invoice';
import { payLink } from './pay-link';
import { labelsFor } from './templates/labels';
import {
  TAG,
  pdfQuery,
  publicPageQuery,
  publicPdfQuery,
  renderErrors,
  sendBody,
  sendErrors,
  type PdfInput,
  type PublicPageInput,
  type PublicPdfInput,
  type SendInput,
} from './document-schemas';
import { idParams, object, type IdPath } from '../../shared/http/schemas';
import { writeAccess } from './invoice-schemas';

type DocumentSettings = BrandingSettings & Pick<Settings, 'default_paper_size'>;

/** What `notifier.send` reads from `ctx.meta` beside the PDF stream (its params). */
export interface DeliveryRequest {
  invoiceId: number;
  invoiceIds: number[];
  subscriberId: number;
  phone: string;
  caption: string;
  filename: string;
  createdBy: number | null;
}

async function documentSettings(conn: DbOrTx = db()): Promise<DocumentSettings> {
  return loadSettings(conn, [...DOCUMENT_SETTINGS]);
}

/** The invoice for a public request: a missing, wrong or absent token looks exactly like no invoice. */
async function publicInvoice(id: number, token: string | undefined): Promise<InvoiceRow> {
  const invoice = await loadInvoiceRow(db(), id);
  if (!invoice || !verifyPublicToken(invoice.publicTokenHash, token)) throw fail('invoiceNotFound');
  return invoice;
}

async function singleHtml(
  invoice: InvoiceRow,
  s: DocumentSettings,
  mode: 'page' | 'pdf',
  paper: PaperSize,
  pdfUrl: string | null,
  conn: DbOrTx = db(),
  payUrl: string | null = null,
): Promise<string> {
  // In sequence: `conn` may be a transaction (one connection, one query at a time).
  const doc = await loadDocument(conn, invoice);
  const sub = await loadSubscriber(conn, invoice.subscriberId);
  const link = invoice.publicTokenNonce ? publicUrl(invoice.id, invoice.publicTokenNonce) : null;
  return renderInvoiceHtml(await invoiceModel(doc, sub, s, { mode, paper, publicUrl: link, pdfUrl, payUrl }));
}

function renderPdf(ctx: Ctx<unknown>, html: string, paper: PaperSize, filename: string): Promise<Readable> {
  ctx.meta.$responseHeaders = {
    'Content-Disposition': `inline; filename="${filename}"`,
    'Cache-Control': 'private, no-store',
  };
  return ctx.call<Readable, { html: string; paper: PaperSize }>('pdf-renderer.render', { html, paper });
}

/**
 * The invoice's own PDF, from the shared cache or rendered and kept (invoice-pdf.ts). A gateway on
 * this node takes the bytes as they are; one on another node gets a stream of 64 KiB chunks
 * (transporter messages are capped, NATS at 1 MB).
 */
async function invoicePdf(
  ctx: Ctx<unknown>,
  source: PdfSource,
  paper: PaperSize | undefined,
): Promise<Buffer | Readable> {
  ctx.meta.$responseHeaders = {
    'Content-Disposition': `inline; filename="${pdfName(source.invoiceNumber)}"`,
    'Cache-Control': 'private, no-store',
  };
  const pdf = await cachedPdf(source, paper ?? source.defaultPaper, {
    store: pdfStore,
    async html(conn, p) {
      const invoice = await loadInvoiceRow(conn, source.id);
      if (!invoice) throw fail('invoiceNotFound');
      return singleHtml(invoice, await documentSettings(conn), 'pdf', p, null, conn);
    },
    render: (html, p) =>
      ctx.call<Readable, { html: string; paper: PaperSize }>('pdf-renderer.render', { html, paper: p }),
    onStoreError: (err) => ctx.service?.logger.warn('pdf cache unavailable, rendering', err),
  });
  return Buffer.isBuffer(pdf) && ctx.nodeID !== ctx.broker.nodeID ? pdfStream(pdf) : pdf;
}

/** A number or amount in a chat caption: an isolated left-to-right island when the caption is right to left. */
const captionIsland = (language: string) => (isRtl(language) ? ltrIsolate : (text: string) => text);

const pdfName = (invoiceNumber: string) => `${invoiceNumber.replace(/[^A-Za-z0-9_.-]/g, '_')}.pdf`;

/**
 * The public receipt (docs/security.md): its own style sheet and inline images (the logo is kept as
 * data); a PDF gets the strictest policy, a browser viewing it has nothing to load.
 */
const RECEIPT_PAGE_HEADERS = publicPageHeaders({ styles: [INVOICE_STYLE], images: true });
const RECEIPT_PDF_HEADERS = publicPageHeaders();

/** The shared PDF store (PDF_CACHE_MAX_MB; 0 = off), made when the service starts. */
let pdfStore: PdfStore | undefined;

/**
 * Sends through the notifier, then appends the audit row: the message row is the notifier's (its
 * own unit and transaction), so the row follows a send that happened rather than sharing its commit.
 */
async function deliver(
  ctx: Ctx<unknown>,
  pdf: Readable,
  request: DeliveryRequest,
  audit: { auth: Auth; action: string; resellerId: number },
): Promise<ActionResult> {
  const data = await ctx.call<Record<string, unknown>, Readable>('notifier.send', pdf, { meta: { delivery: request } });
  await recordAudit(db(), audit.auth, {
    action: audit.action,
    entity: 'invoice',
    entityId: request.invoiceId,
    resellerId: audit.resellerId,
    details: { phone: request.phone, invoice_ids: request.invoiceIds, delivery_id: data.delivery_id ?? null },
  });
  return { data };
}

/** What both send routes check first: role, scope, a configured provider (before any render), a recipient. */
async function prepareSend(ctx: Ctx<SendInput>) {
  const auth = requireInvoicePermission(ctx.meta.auth, 'invoices.send');
  const invoice = await recordInScope(
    db(),
    authOf(ctx),
    'write',
    await loadInvoiceRow(db(), ctx.params.id),
    'invoiceNotFound',
  );
  await ctx.call('notifier.ready');
  const sub = await loadSubscriber(db(), invoice.subscriberId);
  return { auth, invoice, sub, phone: recipient(ctx.params, sub?.phone) };
}

function recipient(params: SendInput, subscriberPhone: string | null | undefined): string {
  const phone = (params.phone ?? subscriberPhone ?? '').trim();
  if (!phone) throw fail('phoneMissing');
  return phone;
}

export const documentsService: ServiceSchema = {
  name: 'invoice-documents',
  actions: {
    pdf: {
      rest: 'GET /api/invoices/:id/pdf',
      http: {
        auth: 'jwt',
        access: 'any authenticated (scope-checked)',
        summary: 'The invoice as a PDF stream',
        tag: TAG,
        params: idParams(),
        query: pdfQuery,
        produces: 'pdf',
        errors: {
          400: 'unknown paper',
          403: "not authorized (outside the caller's tree)",
          404: FAILURES.invoiceNotFound.message,
          ...renderErrors,
        },
      },
      async handler(ctx: Ctx<PdfInput>): Promise<Buffer | Readable> {
        const source = await recordInScope(
          db(),
          authOf(ctx),
          'read',
          await pdfSource(ctx.params.id),
          'invoiceNotFound',
        );
        return invoicePdf(ctx, source, ctx.params.paper);
      },
    },

    publicPage: {
      rest: 'GET /api/invoices/public/:id',
      http: {
        auth: 'public',
        access: 'none (the invoice public token in `token`)',
        summary: 'Public read-only receipt page',
        tag: TAG,
        params: idParams(),
        query: publicPageQuery,
        produces: 'html',
        rateLimit: 'public',
        errors: { 404: `${FAILURES.invoiceNotFound.message}, or token missing or wrong` },
      },
      async handler(ctx: Ctx<PublicPageInput>): Promise<string> {
        const invoice = await publicInvoice(ctx.params.id, ctx.params.token);
        const s = await documentSettings();
        const pdfUrl = `/api/invoices/public/${invoice.id}/pdf?token=${encodeURIComponent(ctx.params.token ?? '')}`;
        const payUrl = await payLink(ctx, invoice.id, ctx.params.token);
        const html = await singleHtml(invoice, s, 'page', s.default_paper_size as PaperSize, pdfUrl, db(), payUrl);
        ctx.meta.$responseHeaders = { ...RECEIPT_PAGE_HEADERS };
        return html;
      },
    },

    publicPdf: {
      rest: 'GET /api/invoices/public/:id/pdf',
      http: {
        auth: 'public',
        access: 'none (the invoice public token in `token`)',
        summary: 'Public PDF of the invoice',
        tag: TAG,
        params: idParams(),
        query: publicPdfQuery,
        produces: 'pdf',
        rateLimit: 'public',
        errors: {
          400: 'unknown paper',
          404: `${FAILURES.invoiceNotFound.message}, or token missing or wrong`,
          ...renderErrors,
        },
      },
      async handler(ctx: Ctx<PublicPdfInput>): Promise<Buffer | Readable> {
        const source = await pdfSource(ctx.params.id);
        if (!source || !verifyPublicToken(source.publicTokenHash, ctx.params.token)) throw fail('invoiceNotFound');
        const pdf = await invoicePdf(ctx, source, ctx.params.paper);
        ctx.meta.$responseHeaders = { ...ctx.meta.$responseHeaders, ...RECEIPT_PDF_HEADERS };
        return pdf;
      },
    },

    rotatePublicToken: {
      rest: 'POST /api/invoices/:id/public-token',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.send'),
        summary: 'Rotate the public link: the old URL stops working',
        tag: TAG,
        params: idParams(),
        body: object({}),
        errors: { 403: "not authorized (role, or outside the caller's tree)", 404: FAILURES.invoiceNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        requireInvoicePermission(ctx.meta.auth, 'invoices.send');
        const invoice = await recordInScope(
          db(),
          authOf(ctx),
          'write',
          await loadInvoiceRow(db(), ctx.params.id),
          'invoiceNotFound',
        );
        const link = newPublicLink(invoice.id);
        await db().transaction(async (tx) => {
          await tx
            .update(invoices)
            .set({ ...link, updatedAt: new Date() })
            .where(eq(invoices.id, invoice.id));
          // The token is a secret: the row says only that the link changed.
          await recordAudit(tx, ctx.meta.auth, {
            action: 'invoice.public_token',
            entity: 'invoice',
            entityId: invoice.id,
            resellerId: invoice.resellerId,
            details: { public_token: 'changed' },
          });
        });
        return { data: { id: invoice.id, public_url: publicUrl(invoice.id, link.publicTokenNonce) } };
      },
    },

    sendChat: {
      rest: 'POST /api/invoices/:id/send-chat',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.send'),
        summary: 'Send the invoice PDF to the subscriber by chat',
        tag: TAG,
        params: idParams(),
        body: sendBody,
        errors: sendErrors,
      },
      async handler(ctx: Ctx<SendInput>): Promise<ActionResult> {
        const { auth, invoice, phone } = await prepareSend(ctx);
        const s = await documentSettings();
        const paper = s.default_paper_size as PaperSize;
        const t = labelsFor(s.language);
        const island = captionIsland(s.language);
        const balance = island(formatMoney(invoice.total - invoice.paidAmount, invoice.currency));
        const pdf = await renderPdf(
          ctx,
          await singleHtml(invoice, s, 'pdf', paper, null),
          paper,
          pdfName(invoice.invoiceNumber),
        );
        return deliver(
          ctx,
          pdf,
          {
            invoiceId: invoice.id,
            invoiceIds: [invoice.id],
            subscriberId: invoice.subscriberId,
            phone,
            caption:
              ctx.params.caption ??
              `${s.operator_name}: ${t.invoice} ${island(invoice.invoiceNumber)}, ${t.balance} ${balance}`,
            filename: pdfName(invoice.invoiceNumber),
            createdBy: auth.managerId,
          },
          { auth, action: 'invoice.send_chat', resellerId: invoice.resellerId },
        );
      },
    },

    sendCombined: {
      rest: 'POST /api/invoices/:id/send-combined',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.send'),
        summary: "Send one PDF merging the subscriber's open invoices (nothing stored changes)",
        tag: TAG,
        params: idParams(),
        body: sendBody,
        errors: { ...sendErrors, 409: 'no messaging account configured, or no open invoice to merge' },
      },
      async handler(ctx: Ctx<SendInput>): Promise<ActionResult> {
        const { auth, invoice, sub, phone } = await prepareSend(ctx);
        const docs = await loadOpenDocuments(db(), invoice.subscriberId, invoice.currency);
        if (docs.length === 0) throw fail('noOpenInvoice');
        const s = await documentSettings();
        const paper = s.default_paper_size as PaperSize;
        const model = combinedModel(docs, sub, s, paper, todayUtc());
        const t = labelsFor(s.language);
        const filename = pdfName(`statement-${sub?.username ?? invoice.subscriberId}`);
        const pdf = await renderPdf(ctx, renderInvoiceHtml(model), paper, filename);
        const island = captionIsland(s.language);
        const balance = island(formatMoney(model.balanceMinor, model.currency));
        return deliver(
          ctx,
          pdf,
          {
            invoiceId: invoice.id,
            invoiceIds: docs.map((d) => d.invoice.id),
            subscriberId: invoice.subscriberId,
            phone,
            caption:
              ctx.params.caption ??
              `${s.operator_name}: ${t.statement} (${island(String(docs.length))}), ${t.balance} ${balance}`,
            filename,
            createdBy: auth.managerId,
          },
          { auth, action: 'invoice.send_combined', resellerId: invoice.resellerId },
        );
      },
    },
  },

  started(this: Service) {
    const { maxBytes } = pdfCacheOptionsFromEnv();
    const log = (err: unknown) => this.logger.warn('pdf cache eviction failed', err);
    pdfStore = maxBytes > 0 ? new BoundedPdfStore(new PgPdfStore(pgPool), maxBytes, log) : undefined;
  },
};
