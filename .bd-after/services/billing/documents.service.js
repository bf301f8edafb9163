"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.documentsService = void 0;
const drizzle_orm_1 = require("drizzle-orm");
const billing_1 = require("../../shared/billing");
const policy_1 = require("../../shared/auth/policy");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const money_1 = require("../../shared/money");
const public_links_1 = require("../../shared/public-links");
const settings_1 = require("../../shared/settings");
const documents_data_1 = require("./documents-data");
const documents_model_1 = require("./documents-model");
const invoice_pdf_1 = require("./invoice-pdf");
const pdf_cache_1 = require("./pdf-cache");
const invoice_1 = require("./templates/invoice");
const labels_1 = require("./templates/labels");
const document_schemas_1 = require("./document-schemas");
const schemas_1 = require("../../shared/http/schemas");
const NOT_FOUND = 'invoice not found';
async function documentSettings(conn = (0, client_1.db)()) {
    return (0, settings_1.loadSettings)(conn, [...invoice_pdf_1.DOCUMENT_SETTINGS]);
}
/** The invoice for a public request: a missing, wrong or absent token looks exactly like no invoice. */
async function publicInvoice(id, token) {
    const invoice = await (0, documents_data_1.loadInvoiceRow)((0, client_1.db)(), id);
    if (!invoice || !(0, public_links_1.verifyPublicToken)(invoice.publicTokenHash, token))
        throw (0, errors_1.notFound)(NOT_FOUND);
    return invoice;
}
async function invoiceInScope(ctx, id, access) {
    const invoice = await (0, documents_data_1.loadInvoiceRow)((0, client_1.db)(), id);
    await (0, policy_1.assertRecordInScope)((0, client_1.db)(), (0, context_1.authOf)(ctx), access, invoice?.resellerId, NOT_FOUND);
    return invoice;
}
async function singleHtml(invoice, s, mode, paper, pdfUrl, conn = (0, client_1.db)()) {
    // In sequence: `conn` may be a transaction (one connection, one query at a time).
    const doc = await (0, documents_data_1.loadDocument)(conn, invoice);
    const sub = await (0, documents_data_1.loadSubscriber)(conn, invoice.subscriberId);
    const link = invoice.publicTokenNonce ? (0, public_links_1.publicUrl)(invoice.id, invoice.publicTokenNonce) : null;
    return (0, invoice_1.renderInvoiceHtml)(await (0, documents_model_1.invoiceModel)(doc, sub, s, { mode, paper, publicUrl: link, pdfUrl }));
}
function renderPdf(ctx, html, paper, filename) {
    ctx.meta.$responseHeaders = { 'Content-Disposition': `inline; filename="${filename}"`, 'Cache-Control': 'private, no-store' };
    return ctx.call('pdf-renderer.render', { html, paper });
}
/**
 * The invoice's own PDF, from the shared cache or rendered and kept (invoice-pdf.ts). A gateway on
 * this node takes the bytes as they are; one on another node gets a stream of 64 KiB chunks
 * (transporter messages are capped, NATS at 1 MB).
 */
async function invoicePdf(ctx, source, paper) {
    ctx.meta.$responseHeaders = { 'Content-Disposition': `inline; filename="${pdfName(source.invoiceNumber)}"`, 'Cache-Control': 'private, no-store' };
    const pdf = await (0, invoice_pdf_1.cachedPdf)(source, paper ?? source.defaultPaper, {
        store: pdfStore,
        async html(conn, p) {
            const invoice = await (0, documents_data_1.loadInvoiceRow)(conn, source.id);
            if (!invoice)
                throw (0, errors_1.notFound)(NOT_FOUND);
            return singleHtml(invoice, await documentSettings(conn), 'pdf', p, null, conn);
        },
        render: (html, p) => ctx.call('pdf-renderer.render', { html, paper: p }),
        onStoreError: (err) => ctx.service?.logger.warn('pdf cache unavailable, rendering', err),
    });
    return Buffer.isBuffer(pdf) && ctx.nodeID !== ctx.broker.nodeID ? (0, invoice_pdf_1.pdfStream)(pdf) : pdf;
}
const pdfName = (invoiceNumber) => `${invoiceNumber.replace(/[^A-Za-z0-9_.-]/g, '_')}.pdf`;
/** Public pages carry the token in their URL: keep it out of caches, search engines and Referer. */
const PUBLIC_HEADERS = { 'Cache-Control': 'private, no-store', 'Referrer-Policy': 'no-referrer', 'X-Robots-Tag': 'noindex' };
/** The shared PDF store (PDF_CACHE_MAX_MB; 0 = off), made when the service starts. */
let pdfStore;
async function deliver(ctx, pdf, request) {
    const data = await ctx.call('notifier.send', pdf, { meta: { delivery: request } });
    return { data };
}
/** What both send routes check first: role, scope, a configured provider (before any render), a recipient. */
async function prepareSend(ctx) {
    const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
    const invoice = await invoiceInScope(ctx, ctx.params.id, 'write');
    await ctx.call('notifier.ready');
    const sub = await (0, documents_data_1.loadSubscriber)((0, client_1.db)(), invoice.subscriberId);
    return { auth, invoice, sub, phone: recipient(ctx.params, sub?.phone) };
}
function recipient(params, subscriberPhone) {
    const phone = (params.phone ?? subscriberPhone ?? '').trim();
    if (!phone)
        throw (0, errors_1.badRequest)('phone is required: the subscriber has no phone number');
    return phone;
}
exports.documentsService = {
    name: 'invoice-documents',
    actions: {
        pdf: {
            rest: 'GET /api/invoices/:id/pdf',
            http: {
                auth: 'jwt',
                access: 'any authenticated (scope-checked)',
                summary: 'The invoice as a PDF stream',
                tag: document_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                query: (0, schemas_1.object)({ paper: document_schemas_1.paper }),
                produces: 'pdf',
                errors: { 400: 'unknown paper', 403: "not authorized (outside the caller's tree)", 404: 'invoice not found', ...document_schemas_1.renderErrors },
            },
            async handler(ctx) {
                const source = await (0, invoice_pdf_1.pdfSource)(ctx.params.id);
                await (0, policy_1.assertRecordInScope)((0, client_1.db)(), (0, context_1.authOf)(ctx), 'read', source?.resellerId, NOT_FOUND);
                return invoicePdf(ctx, source, ctx.params.paper);
            },
        },
        publicPage: {
            rest: 'GET /api/invoices/public/:id',
            http: {
                auth: 'public',
                access: 'none (the invoice public token in `token`)',
                summary: 'Public read-only receipt page',
                tag: document_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                query: (0, schemas_1.object)({ token: document_schemas_1.token }),
                produces: 'html',
                rateLimit: 'public',
                errors: { 404: 'invoice not found, or token missing or wrong' },
            },
            async handler(ctx) {
                const invoice = await publicInvoice(ctx.params.id, ctx.params.token);
                const s = await documentSettings();
                const pdfUrl = `/api/invoices/public/${invoice.id}/pdf?token=${encodeURIComponent(ctx.params.token ?? '')}`;
                ctx.meta.$responseHeaders = PUBLIC_HEADERS;
                return singleHtml(invoice, s, 'page', s.default_paper_size, pdfUrl);
            },
        },
        publicPdf: {
            rest: 'GET /api/invoices/public/:id/pdf',
            http: {
                auth: 'public',
                access: 'none (the invoice public token in `token`)',
                summary: 'Public PDF of the invoice',
                tag: document_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                query: (0, schemas_1.object)({ token: document_schemas_1.token, paper: document_schemas_1.paper }),
                produces: 'pdf',
                rateLimit: 'public',
                errors: { 400: 'unknown paper', 404: 'invoice not found, or token missing or wrong', ...document_schemas_1.renderErrors },
            },
            async handler(ctx) {
                const source = await (0, invoice_pdf_1.pdfSource)(ctx.params.id);
                if (!source || !(0, public_links_1.verifyPublicToken)(source.publicTokenHash, ctx.params.token))
                    throw (0, errors_1.notFound)(NOT_FOUND);
                const pdf = await invoicePdf(ctx, source, ctx.params.paper);
                ctx.meta.$responseHeaders = { ...ctx.meta.$responseHeaders, ...PUBLIC_HEADERS };
                return pdf;
            },
        },
        rotatePublicToken: {
            rest: 'POST /api/invoices/:id/public-token',
            http: {
                auth: 'jwt',
                access: 'admin or reseller (own tree)',
                summary: 'Rotate the public link: the old URL stops working',
                tag: document_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                body: (0, schemas_1.object)({}),
                errors: { 403: "not authorized (role, or outside the caller's tree)", 404: 'invoice not found' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const invoice = await invoiceInScope(ctx, ctx.params.id, 'write');
                const link = (0, public_links_1.newPublicLink)(invoice.id);
                await (0, client_1.db)().update(schema_1.invoices).set({ ...link, updatedAt: new Date() }).where((0, drizzle_orm_1.eq)(schema_1.invoices.id, invoice.id));
                return { data: { id: invoice.id, public_url: (0, public_links_1.publicUrl)(invoice.id, link.publicTokenNonce) } };
            },
        },
        sendChat: {
            rest: 'POST /api/invoices/:id/send-chat',
            http: {
                auth: 'jwt',
                access: 'admin or reseller (own tree)',
                summary: 'Send the invoice PDF to the subscriber by chat',
                tag: document_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                body: document_schemas_1.sendBody,
                errors: document_schemas_1.sendErrors,
            },
            async handler(ctx) {
                const { auth, invoice, phone } = await prepareSend(ctx);
                const s = await documentSettings();
                const paper = s.default_paper_size;
                const t = (0, labels_1.labelsFor)(s.language);
                const balance = `${(0, money_1.formatMinor)(invoice.total - invoice.paidAmount, invoice.currency)} ${invoice.currency}`;
                const pdf = await renderPdf(ctx, await singleHtml(invoice, s, 'pdf', paper, null), paper, pdfName(invoice.invoiceNumber));
                return deliver(ctx, pdf, {
                    invoiceId: invoice.id,
                    invoiceIds: [invoice.id],
                    subscriberId: invoice.subscriberId,
                    phone,
                    caption: ctx.params.caption ?? `${s.operator_name}: ${t.invoice} ${invoice.invoiceNumber}, ${t.balance} ${balance}`,
                    filename: pdfName(invoice.invoiceNumber),
                    createdBy: auth.managerId,
                });
            },
        },
        sendCombined: {
            rest: 'POST /api/invoices/:id/send-combined',
            http: {
                auth: 'jwt',
                access: 'admin or reseller (own tree)',
                summary: "Send one PDF merging the subscriber's open invoices (nothing stored changes)",
                tag: document_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                body: document_schemas_1.sendBody,
                errors: { ...document_schemas_1.sendErrors, 409: 'no messaging account configured, or no open invoice to merge' },
            },
            async handler(ctx) {
                const { auth, invoice, sub, phone } = await prepareSend(ctx);
                const docs = await (0, documents_data_1.loadOpenDocuments)((0, client_1.db)(), invoice.subscriberId, invoice.currency);
                if (docs.length === 0)
                    throw (0, errors_1.conflict)('the subscriber has no open invoice to combine');
                const s = await documentSettings();
                const paper = s.default_paper_size;
                const model = (0, documents_model_1.combinedModel)(docs, sub, s, paper, (0, billing_1.todayUtc)());
                const t = (0, labels_1.labelsFor)(s.language);
                const filename = pdfName(`statement-${sub?.username ?? invoice.subscriberId}`);
                const pdf = await renderPdf(ctx, (0, invoice_1.renderInvoiceHtml)(model), paper, filename);
                const balance = `${(0, money_1.formatMinor)(model.balanceMinor, model.currency)} ${model.currency}`;
                return deliver(ctx, pdf, {
                    invoiceId: invoice.id,
                    invoiceIds: docs.map((d) => d.invoice.id),
                    subscriberId: invoice.subscriberId,
                    phone,
                    caption: ctx.params.caption ?? `${s.operator_name}: ${t.statement} (${docs.length}), ${t.balance} ${balance}`,
                    filename,
                    createdBy: auth.managerId,
                });
            },
        },
    },
    started() {
        const { maxBytes } = (0, pdf_cache_1.pdfCacheOptionsFromEnv)();
        const log = (err) => this.logger.warn('pdf cache eviction failed', err);
        pdfStore = maxBytes > 0 ? new pdf_cache_1.BoundedPdfStore(new pdf_cache_1.PgPdfStore(client_1.pgPool), maxBytes, log) : undefined;
    },
};
//# sourceMappingURL=documents.service.js.map