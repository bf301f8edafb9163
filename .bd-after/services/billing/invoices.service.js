"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.invoicesService = void 0;
/**
 * The `billing` service: invoice actions behind the routes in routes.ts. Every write runs in one
 * transaction through the shared billing functions (shared/billing), which the subscribers unit
 * uses too; reads are prepared statements in queries.ts.
 */
const drizzle_orm_1 = require("drizzle-orm");
const policy_1 = require("../../shared/auth/policy");
const billing_1 = require("../../shared/billing");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const context_1 = require("../../shared/http/context");
const route_1 = require("../../shared/http/route");
const pg_1 = require("../../shared/billing/pg");
const money_1 = require("../../shared/money");
const settings_1 = require("../../shared/settings");
const idempotency_1 = require("./idempotency");
const overdue_1 = require("./overdue");
const invoice_list_1 = require("./invoice-list");
const name_lookup_1 = require("./name-lookup");
const invoice_status_counts_1 = require("./invoice-status-counts");
const list_page_cache_1 = require("./list-page-cache");
const queries_1 = require("./queries");
const invoice_state_1 = require("../../shared/domain/invoice-state");
const types_1 = require("../../shared/billing/types");
const invoice_schemas_1 = require("./invoice-schemas");
const schemas_1 = require("../../shared/http/schemas");
const DAY_MS = 86_400_000;
function minor(value, currency, field) {
    try {
        return (0, money_1.toMinor)(value, currency);
    }
    catch {
        throw (0, errors_1.badRequest)(`${field} has more decimal places than ${currency} allows`);
    }
}
function itemsInMinor(items, currency) {
    return items.map((it, i) => ({ description: it.description, qty: it.qty, unitPrice: minor(it.unit_price, currency, `items[${i}].unit_price`) }));
}
async function systemCurrency() {
    return (await (0, settings_1.loadSettings)((0, client_1.db)(), ['currency'])).currency;
}
/** The invoice exists (404) and its reseller is in the caller's scope (403). */
async function invoiceInScope(auth, id, access) {
    const head = await (0, queries_1.invoiceHead)(id);
    await (0, policy_1.assertRecordInScope)((0, client_1.db)(), auth, access, head?.resellerId, 'invoice not found');
    return head;
}
/**
 * The subscriber exists and is live and its reseller is in the caller's scope (403). Missing is
 * 404 `subscriber not found` for a path id, 400 `subscriber_id not found` for a body field.
 */
async function subscriberInScope(auth, id, access, from = 'path') {
    const head = await (0, queries_1.subscriberHead)(id);
    if (!head)
        throw from === 'path' ? (0, errors_1.notFound)('subscriber not found') : (0, errors_1.badRequest)('subscriber_id not found');
    await (0, policy_1.assertRecordInScope)((0, client_1.db)(), auth, access, head.resellerId, 'subscriber not found');
    return head;
}
/** POST /api/invoices/:id/payment's answer (spec 4.1). */
function paymentResponse(r) {
    const c = r.invoice.currency;
    return {
        data: {
            invoice: {
                id: r.invoice.id,
                status: r.invoice.status,
                paid_amount: (0, money_1.fromMinor)(r.invoice.paidAmount, c),
                balance: (0, money_1.fromMinor)(r.invoice.total - r.invoice.paidAmount, c),
                paid_at: r.invoice.paidAt ? r.invoice.paidAt.toISOString() : null,
            },
            payment: { id: r.payment.id, amount: (0, money_1.fromMinor)(r.payment.amount, c), method: r.payment.method },
            transaction_id: r.transactionId,
        },
    };
}
/** A write answers with its invoice read back through the API's one JSON view, inside its transaction. */
async function writtenInvoiceJson(tx, id) {
    const invoice = await (0, queries_1.invoiceJson)(id, (0, pg_1.clientOf)(tx));
    if (!invoice)
        throw new Error(`invoice ${id} vanished inside its own transaction`);
    return invoice.json;
}
const schema = {
    name: 'billing',
    actions: {
        list: {
            rest: 'GET /api/invoices',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.READ,
                summary: 'List invoices, newest first',
                tag: invoice_schemas_1.TAG,
                query: (0, schemas_1.object)({
                    ...schemas_1.paginationProperties,
                    status: { type: 'string', enum: [...invoice_state_1.INVOICE_STATUSES] },
                    subscriber_id: schemas_1.idSchema,
                    reseller_id: schemas_1.idSchema,
                    from: schemas_1.isoDate,
                    to: schemas_1.isoDate,
                    search: { type: 'string', minLength: 1, maxLength: 100 },
                    order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
                }),
                errors: { 403: 'reseller_id outside the caller\'s tree' },
            },
            async handler(ctx) {
                const auth = (0, context_1.authOf)(ctx);
                const p = ctx.params;
                const { page, limit, offset } = (0, context_1.pageOf)(p);
                const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'read');
                if (p.reseller_id !== undefined && !(await (0, policy_1.resellerInScope)((0, client_1.db)(), scope, p.reseller_id)))
                    throw (0, errors_1.forbidden)();
                const { json, total } = await (0, invoice_list_1.listInvoicesJson)(scope, {
                    status: p.status, subscriberId: p.subscriber_id, resellerId: p.reseller_id, from: p.from, to: p.to,
                    search: p.search, order: p.order ?? 'desc', limit, offset,
                });
                return (0, route_1.rawJsonEnvelope)(json, { pagination: { page, limit, total } });
            },
        },
        get: {
            rest: 'GET /api/invoices/:id',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.READ,
                summary: 'One invoice with its lines, payment history and public link',
                tag: invoice_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                errors: invoice_schemas_1.readErrors,
            },
            async handler(ctx) {
                const auth = (0, context_1.authOf)(ctx);
                const invoice = await (0, queries_1.invoiceJson)(ctx.params.id);
                await (0, policy_1.assertRecordInScope)((0, client_1.db)(), auth, 'read', invoice?.resellerId, 'invoice not found');
                return (0, route_1.rawJsonEnvelope)(invoice.json);
            },
        },
        create: {
            rest: 'POST /api/invoices',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.WRITE,
                summary: 'Create an invoice manually',
                tag: invoice_schemas_1.TAG,
                success: 201,
                idempotent: true,
                body: (0, schemas_1.object)({ subscriber_id: schemas_1.idSchema, items: invoice_schemas_1.items, tax_rate: invoice_schemas_1.taxRate, due_date: schemas_1.isoDate, notes: invoice_schemas_1.notes, currency: schemas_1.currencyCode }, ['subscriber_id', 'items']),
                errors: { 400: 'validation (the message names the field), subscriber_id not found', 403: 'not authorized', 409: 'Idempotency-Key reused with another request' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const p = ctx.params;
                const subscriber = await subscriberInScope(auth, p.subscriber_id, 'write', 'body');
                const currency = p.currency ?? (await systemCurrency());
                if (!(0, money_1.isCurrency)(currency))
                    throw (0, errors_1.badRequest)('currency must be an ISO 4217 code');
                const items = itemsInMinor(p.items, currency);
                return (0, idempotency_1.idempotentWrite)(ctx, 201, async (tx) => {
                    const { invoice } = await (0, billing_1.createInvoice)(tx, {
                        subscriberId: p.subscriber_id, resellerId: subscriber.resellerId, items, taxRate: p.tax_rate,
                        dueDate: p.due_date, notes: p.notes, currency, createdBy: auth.managerId,
                    });
                    return (0, route_1.rawJsonEnvelope)(await writtenInvoiceJson(tx, invoice.id));
                });
            },
        },
        update: {
            rest: 'PUT /api/invoices/:id',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.WRITE,
                summary: 'Edit a pending invoice (items, tax_rate, due_date, notes); totals are recomputed',
                tag: invoice_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                body: { ...(0, schemas_1.object)({ items: invoice_schemas_1.items, tax_rate: invoice_schemas_1.taxRate, due_date: schemas_1.isoDate, notes: { type: ['string', 'null'], maxLength: 4000 } }), minProperties: 1 },
                errors: { ...invoice_schemas_1.writeErrors, 409: 'the invoice is not pending' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const p = ctx.params;
                const head = await invoiceInScope(auth, p.id, 'write');
                const items = p.items ? itemsInMinor(p.items, head.currency) : undefined;
                const json = await (0, client_1.db)().transaction(async (tx) => {
                    await (0, billing_1.updatePendingInvoice)(tx, p.id, { items, taxRate: p.tax_rate, dueDate: p.due_date, notes: p.notes });
                    return writtenInvoiceJson(tx, p.id);
                });
                return (0, route_1.rawJsonEnvelope)(json);
            },
        },
        remove: {
            rest: 'DELETE /api/invoices/:id',
            http: {
                auth: 'jwt',
                access: 'admin',
                summary: 'Hard-delete an invoice without payments',
                tag: invoice_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                errors: { 403: 'not an admin', 404: 'invoice not found', 409: 'cannot delete paid invoice' },
            },
            async handler(ctx) {
                (0, policy_1.requireAdmin)(ctx.meta.auth);
                await (0, client_1.db)().transaction((tx) => (0, billing_1.deleteInvoice)(tx, ctx.params.id));
                return { data: { id: ctx.params.id, deleted: true } };
            },
        },
        pay: {
            rest: 'POST /api/invoices/:id/payment',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.WRITE,
                summary: 'Add a payment (ledger row and payment row in one transaction)',
                tag: invoice_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                idempotent: true,
                body: (0, schemas_1.object)({ amount: invoice_schemas_1.positiveAmount, method: { type: 'string', enum: [...types_1.PAYMENT_METHODS] }, reference: invoice_schemas_1.reference, paid_at: schemas_1.isoDateTime, notes: invoice_schemas_1.notes }, ['amount']),
                errors: { 400: 'amount exceeds balance', ...invoice_schemas_1.writeErrors, 409: 'invoice is void, or Idempotency-Key reused with another request' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const p = ctx.params;
                const details = {
                    method: p.method, reference: p.reference, notes: p.notes,
                    paidAt: p.paid_at ? new Date(p.paid_at) : undefined, createdBy: auth.managerId,
                };
                const amountIn = (currency) => minor(p.amount, currency, 'amount');
                // The common case, no wallet and no Idempotency-Key: read, check, then one compare-and-set
                // statement without a transaction; if another payment changed the invoice in between,
                // fall through to the locked path below, which always settles.
                if (p.method !== 'wallet' && !ctx.meta.idempotencyKey) {
                    const invoice = await (0, billing_1.readInvoiceForPayment)((0, client_1.pgPool)(), p.id);
                    await (0, policy_1.assertRecordInScope)((0, client_1.db)(), auth, 'write', invoice.resellerId, 'invoice not found');
                    const r = await (0, billing_1.recordPaymentUnlocked)((0, client_1.pgPool)(), invoice, { ...details, amount: amountIn(invoice.currency) });
                    if (r)
                        return paymentResponse(r);
                }
                // A wallet payment locks the subscriber before the invoice (the lock order), so it checks
                // scope first; any other payment locks the invoice straight away and checks under the lock.
                const walletHead = p.method === 'wallet' ? await invoiceInScope(auth, p.id, 'write') : undefined;
                return (0, idempotency_1.idempotentWrite)(ctx, 200, async (tx) => {
                    if (walletHead)
                        return paymentResponse(await (0, billing_1.applyPayment)(tx, { ...details, invoiceId: p.id, amount: amountIn(walletHead.currency) }));
                    const invoice = await (0, billing_1.lockInvoice)(tx, p.id);
                    await (0, policy_1.assertRecordInScope)(tx, auth, 'write', invoice.resellerId, 'invoice not found');
                    return paymentResponse(await (0, billing_1.recordPayment)(tx, invoice, { ...details, amount: amountIn(invoice.currency) }));
                });
            },
        },
        payments: {
            rest: 'GET /api/invoices/:id/payments',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.READ,
                summary: 'Payment rows of an invoice',
                tag: invoice_schemas_1.TAG,
                params: (0, schemas_1.idParams)(),
                errors: invoice_schemas_1.readErrors,
            },
            async handler(ctx) {
                await invoiceInScope((0, context_1.authOf)(ctx), ctx.params.id, 'read');
                return (0, route_1.rawJsonEnvelope)(await (0, queries_1.paymentsJson)(ctx.params.id));
            },
        },
        quickPay: {
            rest: 'POST /api/invoices/quick-pay/:subscriber_id',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.WRITE,
                summary: 'Pay the subscriber\'s open invoices oldest first; the excess goes to the wallet',
                tag: invoice_schemas_1.TAG,
                params: (0, schemas_1.idParams)('subscriber_id'),
                idempotent: true,
                body: (0, schemas_1.object)({ amount: invoice_schemas_1.positiveAmount, method: { type: 'string', enum: types_1.PAYMENT_METHODS.filter((m) => m !== 'wallet') }, reference: invoice_schemas_1.reference, notes: invoice_schemas_1.notes }, ['amount']),
                errors: { 403: 'not authorized', 404: 'subscriber not found', 409: 'Idempotency-Key reused with another request' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                const p = ctx.params;
                await subscriberInScope(auth, p.subscriber_id, 'write');
                const currency = await systemCurrency();
                const amount = minor(p.amount, currency, 'amount');
                return (0, idempotency_1.idempotentWrite)(ctx, 200, async (tx) => {
                    const r = await (0, billing_1.payFifo)(tx, {
                        subscriberId: p.subscriber_id, amount, method: p.method, reference: p.reference, notes: p.notes, createdBy: auth.managerId,
                    });
                    return {
                        applied: r.applied.map((a) => ({ invoice_id: a.invoiceId, amount: (0, money_1.fromMinor)(a.amount, currency) })),
                        remaining: (0, money_1.fromMinor)(r.remaining, currency),
                    };
                });
            },
        },
        consolidate: {
            rest: 'POST /api/invoices/consolidate/:subscriber_id',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.WRITE,
                summary: 'Merge the subscriber\'s pending invoices into one new pending invoice and void them',
                tag: invoice_schemas_1.TAG,
                params: (0, schemas_1.idParams)('subscriber_id'),
                body: (0, schemas_1.object)({ notes: invoice_schemas_1.notes }),
                errors: { 403: 'not authorized', 404: 'subscriber not found', 409: 'fewer than two pending invoices, or mixed currencies or tax rates' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                await subscriberInScope(auth, ctx.params.subscriber_id, 'write');
                const { json, voidedIds } = await (0, client_1.db)().transaction(async (tx) => {
                    const r = await (0, billing_1.consolidateInvoices)(tx, { subscriberId: ctx.params.subscriber_id, notes: ctx.params.notes, createdBy: auth.managerId });
                    return { json: await writtenInvoiceJson(tx, r.invoice.id), voidedIds: r.voidedIds };
                });
                return (0, route_1.rawJsonEnvelope)(`{"consolidated_invoice":${json},"voided_invoice_ids":${JSON.stringify(voidedIds)}}`);
            },
        },
        commissions: {
            rest: 'GET /api/invoices/commissions',
            http: {
                auth: 'jwt',
                access: 'any authenticated (reseller_id: admin scope, or a reseller inside its tree)',
                summary: 'Monthly commission breakdown of a reseller',
                tag: invoice_schemas_1.TAG,
                query: (0, schemas_1.object)({ reseller_id: schemas_1.idSchema, from: schemas_1.isoDate, to: schemas_1.isoDate, status: { type: 'string', enum: [...invoice_state_1.INVOICE_STATUSES] } }),
                errors: { 403: 'reseller_id outside the caller\'s tree' },
            },
            async handler(ctx) {
                const auth = (0, context_1.authOf)(ctx);
                const p = ctx.params;
                const scope = await (0, policy_1.scopeFor)((0, client_1.db)(), auth, 'read');
                // A reseller's commissions are on its own invoices; an admin sees all unless it names one.
                const resellerId = p.reseller_id ?? auth.resellerId ?? undefined;
                let rate = null;
                if (resellerId !== undefined) {
                    const [r] = await (0, client_1.db)().select({ rate: schema_1.resellers.commissionRate }).from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, resellerId));
                    if (!r)
                        throw (0, errors_1.badRequest)('reseller_id not found');
                    if (!(await (0, policy_1.resellerInScope)((0, client_1.db)(), scope, resellerId)))
                        throw (0, errors_1.forbidden)();
                    rate = Number(r.rate);
                }
                const { commission_basis: basis, currency } = await (0, settings_1.loadSettings)((0, client_1.db)(), ['commission_basis', 'currency']);
                // An explicit status wins; otherwise the basis setting decides: paid invoices, or every non-void one.
                const statuses = p.status ? [p.status] : basis === 'paid' ? ['paid'] : undefined;
                const rows = await (0, queries_1.commissionRows)(scope, { resellerId, from: p.from, to: p.to, statuses });
                const totalInvoiced = rows.reduce((s, r) => s + Number(r.invoiced), 0);
                const totalCommission = rows.reduce((s, r) => s + Number(r.commission), 0);
                // Without a reseller, the rate is the effective one over what was selected.
                rate ??= totalInvoiced === 0 ? 0 : Math.round((totalCommission * 10000) / totalInvoiced) / 100;
                return {
                    data: {
                        total_commission: (0, money_1.fromMinor)(totalCommission, currency),
                        total_invoiced: (0, money_1.fromMinor)(totalInvoiced, currency),
                        rate,
                        rows: rows.map((r) => ({ month: r.month, invoiced: (0, money_1.fromMinor)(Number(r.invoiced), currency), commission: (0, money_1.fromMinor)(Number(r.commission), currency) })),
                    },
                };
            },
        },
        prorate: {
            rest: 'POST /api/invoices/prorate',
            http: {
                auth: 'jwt',
                access: invoice_schemas_1.WRITE,
                summary: 'Pre-compute a prorated change of plan (nothing is written)',
                tag: invoice_schemas_1.TAG,
                body: (0, schemas_1.object)({ subscriber_id: schemas_1.idSchema, new_service_id: schemas_1.idSchema }, ['subscriber_id', 'new_service_id']),
                errors: { 400: 'new_service_id not found', 403: 'not authorized', 404: 'subscriber not found' },
            },
            async handler(ctx) {
                const auth = (0, policy_1.requireAdminOrReseller)(ctx.meta.auth);
                await subscriberInScope(auth, ctx.params.subscriber_id, 'write');
                const q = await (0, billing_1.quoteServiceChange)((0, client_1.db)(), { subscriberId: ctx.params.subscriber_id, newServiceId: ctx.params.new_service_id });
                return {
                    data: {
                        old_unused_credit: (0, money_1.fromMinor)(q.oldUnusedCredit, q.currency),
                        new_service_charge: (0, money_1.fromMinor)(q.newServiceCharge, q.currency),
                        net_amount_due: (0, money_1.fromMinor)(q.netAmountDue, q.currency),
                        days_remaining: q.daysRemaining,
                    },
                };
            },
        },
        /** The daily job, callable through the broker (not routed): overdue marking and key pruning. */
        markOverdue: {
            visibility: 'public',
            async handler(ctx) {
                return { marked: await (0, overdue_1.markOverdue)(ctx.params.today) };
            },
        },
    },
    methods: {
        async runDailyJobs() {
            try {
                const marked = await (0, overdue_1.markOverdue)();
                const pruned = await (0, idempotency_1.pruneIdempotencyKeys)();
                this.logger.info('billing daily jobs', { marked_overdue: marked, pruned_idempotency_keys: pruned });
            }
            catch (err) {
                this.logger.error('billing daily jobs failed', err);
            }
        },
        /** Folds the status counts' deltas every FOLD_INTERVAL_MS, one fold at a time. */
        scheduleFold() {
            this.foldTimer = setTimeout(() => {
                this.folding = (0, invoice_status_counts_1.foldStatusCounts)()
                    .then(() => undefined, (err) => this.logger.warn('folding invoice status counts failed', err))
                    .finally(() => {
                    this.folding = undefined;
                    if (this.foldTimer)
                        this.scheduleFold();
                });
            }, invoice_status_counts_1.FOLD_INTERVAL_MS);
            this.foldTimer.unref();
        },
        /** Samples full names for the name search (name-lookup.ts); a failure keeps the last sample. */
        async sampleNames() {
            try {
                (0, invoice_list_1.useNameSample)(await (0, name_lookup_1.sampleFullNames)());
            }
            catch (err) {
                this.logger.warn('sampling full names failed', err);
            }
        },
    },
    async started() {
        (0, invoice_list_1.keepListPages)((0, list_page_cache_1.listPageEntriesFromEnv)());
        await this.sampleNames();
        this.sampleTimer = setInterval(() => {
            this.sampling = this.sampleNames();
        }, name_lookup_1.NAME_SAMPLE_INTERVAL_MS);
        this.sampleTimer.unref();
        await this.runDailyJobs();
        this.overdueTimer = setInterval(() => void this.runDailyJobs(), DAY_MS);
        this.overdueTimer.unref();
        this.scheduleFold();
    },
    async stopped() {
        if (this.overdueTimer)
            clearInterval(this.overdueTimer);
        clearTimeout(this.foldTimer);
        this.foldTimer = undefined;
        clearInterval(this.sampleTimer);
        await Promise.all([this.folding, this.sampling]);
    },
};
exports.invoicesService = schema;
//# sourceMappingURL=invoices.service.js.map