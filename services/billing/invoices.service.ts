/**
 * The `billing` service: invoice actions behind the routes in routes.ts. Every write runs in one
 * transaction through the shared billing functions (shared/billing), which the subscribers unit
 * uses too; reads are prepared statements in queries.ts.
 */
import { eq } from 'drizzle-orm';
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import type { Auth } from '../../shared/auth/claims';
import { assertRecordInScope, requireAdmin, requireAdminOrReseller, resellerInScope, scopeFor } from '../../shared/auth/policy';
import {
  applyPayment,
  consolidateInvoices,
  createInvoice,
  deleteInvoice,
  lockInvoice,
  payFifo,
  quoteServiceChange,
  readInvoiceForPayment,
  recordPayment,
  recordPaymentUnlocked,
  updatePendingInvoice,
  type PaymentMethod,
  type PaymentResult,
} from '../../shared/billing';
import type { ItemInput } from '../../shared/domain/invoice-math';
import { db, pgPool } from '../../shared/db/client';
import { resellers } from '../../shared/db/schema';
import { badRequest, forbidden, notFound } from '../../shared/errors';
import { authOf, pageOf, type Ctx } from '../../shared/http/context';
import { rawJsonEnvelope, type ActionResult } from '../../shared/http/route';
import { clientOf } from '../../shared/billing/pg';
import type { Tx } from '../../shared/db/client';
import { fromMinor, isCurrency, toMinor } from '../../shared/money';
import { loadSettings } from '../../shared/settings';
import { idempotentWrite, pruneIdempotencyKeys } from './idempotency';
import { markOverdue } from './overdue';
import { keepListPages, listInvoicesJson, useNameSample } from './invoice-list';
import { NAME_SAMPLE_INTERVAL_MS, sampleFullNames } from './name-lookup';
import { FOLD_INTERVAL_MS, foldStatusCounts } from './invoice-status-counts';
import { listPageEntriesFromEnv } from './list-page-cache';
import { commissionRows, invoiceHead, invoiceJson, paymentsJson, subscriberHead } from './queries';
import { INVOICE_STATUSES } from '../../shared/domain/invoice-state';
import { PAYMENT_METHODS } from '../../shared/billing/types';
import { READ, TAG, WRITE, items, notes, positiveAmount, readErrors, reference, taxRate, writeErrors } from './invoice-schemas';
import { currencyCode, idParams, idSchema, isoDate, isoDateTime, object, paginationProperties } from '../../shared/http/schemas';

interface ItemParam {
  description: string;
  qty: number;
  unit_price: number;
}

const DAY_MS = 86_400_000;

function minor(value: number, currency: string, field: string): number {
  try {
    return toMinor(value, currency);
  } catch {
    throw badRequest(`${field} has more decimal places than ${currency} allows`);
  }
}

function itemsInMinor(items: ItemParam[], currency: string): ItemInput[] {
  return items.map((it, i) => ({ description: it.description, qty: it.qty, unitPrice: minor(it.unit_price, currency, `items[${i}].unit_price`) }));
}

async function systemCurrency(): Promise<string> {
  return (await loadSettings(db(), ['currency'])).currency;
}

/** The invoice exists (404) and its reseller is in the caller's scope (403). */
async function invoiceInScope(auth: Auth, id: number, access: 'read' | 'write') {
  const head = await invoiceHead(id);
  await assertRecordInScope(db(), auth, access, head?.resellerId, 'invoice not found');
  return head!;
}

/**
 * The subscriber exists and is live and its reseller is in the caller's scope (403). Missing is
 * 404 `subscriber not found` for a path id, 400 `subscriber_id not found` for a body field.
 */
async function subscriberInScope(auth: Auth, id: number, access: 'read' | 'write', from: 'path' | 'body' = 'path') {
  const head = await subscriberHead(id);
  if (!head) throw from === 'path' ? notFound('subscriber not found') : badRequest('subscriber_id not found');
  await assertRecordInScope(db(), auth, access, head.resellerId, 'subscriber not found');
  return head;
}

/** POST /api/invoices/:id/payment's answer (spec 4.1). */
function paymentResponse(r: PaymentResult): ActionResult {
  const c = r.invoice.currency;
  return {
    data: {
      invoice: {
        id: r.invoice.id,
        status: r.invoice.status,
        paid_amount: fromMinor(r.invoice.paidAmount, c),
        balance: fromMinor(r.invoice.total - r.invoice.paidAmount, c),
        paid_at: r.invoice.paidAt ? r.invoice.paidAt.toISOString() : null,
      },
      payment: { id: r.payment.id, amount: fromMinor(r.payment.amount, c), method: r.payment.method },
      transaction_id: r.transactionId,
    },
  };
}

/** A write answers with its invoice read back through the API's one JSON view, inside its transaction. */
async function writtenInvoiceJson(tx: Tx, id: number): Promise<string> {
  const invoice = await invoiceJson(id, clientOf(tx));
  if (!invoice) throw new Error(`invoice ${id} vanished inside its own transaction`);
  return invoice.json;
}

interface BillingThis extends Service {
  overdueTimer?: NodeJS.Timeout;
  foldTimer?: NodeJS.Timeout;
  /** The fold in progress, awaited at stop so no statement outlives the service. */
  folding?: Promise<void>;
  sampleTimer?: NodeJS.Timeout;
  /** The name sample in progress, awaited at stop as the fold is. */
  sampling?: Promise<void>;
  runDailyJobs(): Promise<void>;
  scheduleFold(): void;
  sampleNames(): Promise<void>;
}

const schema: ServiceSchema<ServiceSettingSchema, BillingThis> = {
  name: 'billing',
  actions: {
    list: {
      rest: 'GET /api/invoices',
      http: {
        auth: 'jwt',
        access: READ,
        summary: 'List invoices, newest first',
        tag: TAG,
        query: object({
        ...paginationProperties,
        status: { type: 'string', enum: [...INVOICE_STATUSES] },
        subscriber_id: idSchema,
        reseller_id: idSchema,
        from: isoDate,
        to: isoDate,
        search: { type: 'string', minLength: 1, maxLength: 100 },
        order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
        }),
        errors: { 403: 'reseller_id outside the caller\'s tree' },
      },
      async handler(
        ctx: Ctx<{ page?: number; limit?: number; status?: string; subscriber_id?: number; reseller_id?: number; from?: string; to?: string; search?: string; order?: 'asc' | 'desc' }>,
      ): Promise<ActionResult> {
        const auth = authOf(ctx);
        const p = ctx.params;
        const { page, limit, offset } = pageOf(p);
        const scope = await scopeFor(db(), auth, 'read');
        if (p.reseller_id !== undefined && !(await resellerInScope(db(), scope, p.reseller_id))) throw forbidden();
        const { json, total } = await listInvoicesJson(scope, {
          status: p.status, subscriberId: p.subscriber_id, resellerId: p.reseller_id, from: p.from, to: p.to,
          search: p.search, order: p.order ?? 'desc', limit, offset,
        });
        return rawJsonEnvelope(json, { pagination: { page, limit, total } });
      },
    },

    get: {
      rest: 'GET /api/invoices/:id',
      http: {
        auth: 'jwt',
        access: READ,
        summary: 'One invoice with its lines, payment history and public link',
        tag: TAG,
        params: idParams(),
        errors: readErrors,
      },
      async handler(ctx: Ctx<{ id: number }>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const invoice = await invoiceJson(ctx.params.id);
        await assertRecordInScope(db(), auth, 'read', invoice?.resellerId, 'invoice not found');
        return rawJsonEnvelope(invoice!.json);
      },
    },

    create: {
      rest: 'POST /api/invoices',
      http: {
        auth: 'jwt',
        access: WRITE,
        summary: 'Create an invoice manually',
        tag: TAG,
        success: 201,
        idempotent: true,
        body: object({ subscriber_id: idSchema, items, tax_rate: taxRate, due_date: isoDate, notes, currency: currencyCode }, ['subscriber_id', 'items']),
        errors: { 400: 'validation (the message names the field), subscriber_id not found', 403: 'not authorized', 409: 'Idempotency-Key reused with another request' },
      },
      async handler(
        ctx: Ctx<{ subscriber_id: number; items: ItemParam[]; tax_rate?: number; due_date?: string; notes?: string; currency?: string }>,
      ): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const p = ctx.params;
        const subscriber = await subscriberInScope(auth, p.subscriber_id, 'write', 'body');
        const currency = p.currency ?? (await systemCurrency());
        if (!isCurrency(currency)) throw badRequest('currency must be an ISO 4217 code');
        const items = itemsInMinor(p.items, currency);
        return idempotentWrite(ctx, 201, async (tx) => {
          const { invoice } = await createInvoice(tx, {
            subscriberId: p.subscriber_id, resellerId: subscriber.resellerId, items, taxRate: p.tax_rate,
            dueDate: p.due_date, notes: p.notes, currency, createdBy: auth.managerId,
          });
          return rawJsonEnvelope(await writtenInvoiceJson(tx, invoice.id));
        });
      },
    },

    update: {
      rest: 'PUT /api/invoices/:id',
      http: {
        auth: 'jwt',
        access: WRITE,
        summary: 'Edit a pending invoice (items, tax_rate, due_date, notes); totals are recomputed',
        tag: TAG,
        params: idParams(),
        body: { ...object({ items, tax_rate: taxRate, due_date: isoDate, notes: { type: ['string', 'null'], maxLength: 4000 } }), minProperties: 1 },
        errors: { ...writeErrors, 409: 'the invoice is not pending' },
      },
      async handler(ctx: Ctx<{ id: number; items?: ItemParam[]; tax_rate?: number; due_date?: string; notes?: string | null }>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const p = ctx.params;
        const head = await invoiceInScope(auth, p.id, 'write');
        const items = p.items ? itemsInMinor(p.items, head.currency) : undefined;
        const json = await db().transaction(async (tx) => {
          await updatePendingInvoice(tx, p.id, { items, taxRate: p.tax_rate, dueDate: p.due_date, notes: p.notes });
          return writtenInvoiceJson(tx, p.id);
        });
        return rawJsonEnvelope(json);
      },
    },

    remove: {
      rest: 'DELETE /api/invoices/:id',
      http: {
        auth: 'jwt',
        access: 'admin',
        summary: 'Hard-delete an invoice without payments',
        tag: TAG,
        params: idParams(),
        errors: { 403: 'not an admin', 404: 'invoice not found', 409: 'cannot delete paid invoice' },
      },
      async handler(ctx: Ctx<{ id: number }>): Promise<ActionResult> {
        requireAdmin(ctx.meta.auth);
        await db().transaction((tx) => deleteInvoice(tx, ctx.params.id));
        return { data: { id: ctx.params.id, deleted: true } };
      },
    },

    pay: {
      rest: 'POST /api/invoices/:id/payment',
      http: {
        auth: 'jwt',
        access: WRITE,
        summary: 'Add a payment (ledger row and payment row in one transaction)',
        tag: TAG,
        params: idParams(),
        idempotent: true,
        body: object({ amount: positiveAmount, method: { type: 'string', enum: [...PAYMENT_METHODS] }, reference, paid_at: isoDateTime, notes }, ['amount']),
        errors: { 400: 'amount exceeds balance', ...writeErrors, 409: 'invoice is void, or Idempotency-Key reused with another request' },
      },
      async handler(
        ctx: Ctx<{ id: number; amount: number; method?: PaymentMethod; reference?: string; paid_at?: string; notes?: string }>,
      ): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const p = ctx.params;
        const details = {
          method: p.method, reference: p.reference, notes: p.notes,
          paidAt: p.paid_at ? new Date(p.paid_at) : undefined, createdBy: auth.managerId,
        };
        const amountIn = (currency: string) => minor(p.amount, currency, 'amount');
        // The common case, no wallet and no Idempotency-Key: read, check, then one compare-and-set
        // statement without a transaction; if another payment changed the invoice in between,
        // fall through to the locked path below, which always settles.
        if (p.method !== 'wallet' && !ctx.meta.idempotencyKey) {
          const invoice = await readInvoiceForPayment(pgPool(), p.id);
          await assertRecordInScope(db(), auth, 'write', invoice.resellerId, 'invoice not found');
          const r = await recordPaymentUnlocked(pgPool(), invoice, { ...details, amount: amountIn(invoice.currency) });
          if (r) return paymentResponse(r);
        }
        // A wallet payment locks the subscriber before the invoice (the lock order), so it checks
        // scope first; any other payment locks the invoice straight away and checks under the lock.
        const walletHead = p.method === 'wallet' ? await invoiceInScope(auth, p.id, 'write') : undefined;
        return idempotentWrite(ctx, 200, async (tx) => {
          if (walletHead) return paymentResponse(await applyPayment(tx, { ...details, invoiceId: p.id, amount: amountIn(walletHead.currency) }));
          const invoice = await lockInvoice(tx, p.id);
          await assertRecordInScope(tx, auth, 'write', invoice.resellerId, 'invoice not found');
          return paymentResponse(await recordPayment(tx, invoice, { ...details, amount: amountIn(invoice.currency) }));
        });
      },
    },

    payments: {
      rest: 'GET /api/invoices/:id/payments',
      http: {
        auth: 'jwt',
        access: READ,
        summary: 'Payment rows of an invoice',
        tag: TAG,
        params: idParams(),
        errors: readErrors,
      },
      async handler(ctx: Ctx<{ id: number }>): Promise<ActionResult> {
        await invoiceInScope(authOf(ctx), ctx.params.id, 'read');
        return rawJsonEnvelope(await paymentsJson(ctx.params.id));
      },
    },

    quickPay: {
      rest: 'POST /api/invoices/quick-pay/:subscriber_id',
      http: {
        auth: 'jwt',
        access: WRITE,
        summary: 'Pay the subscriber\'s open invoices oldest first; the excess goes to the wallet',
        tag: TAG,
        params: idParams('subscriber_id'),
        idempotent: true,
        body: object({ amount: positiveAmount, method: { type: 'string', enum: PAYMENT_METHODS.filter((m) => m !== 'wallet') }, reference, notes }, ['amount']),
        errors: { 403: 'not authorized', 404: 'subscriber not found', 409: 'Idempotency-Key reused with another request' },
      },
      async handler(
        ctx: Ctx<{ subscriber_id: number; amount: number; method?: Exclude<PaymentMethod, 'wallet'>; reference?: string; notes?: string }>,
      ): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const p = ctx.params;
        await subscriberInScope(auth, p.subscriber_id, 'write');
        const currency = await systemCurrency();
        const amount = minor(p.amount, currency, 'amount');
        return idempotentWrite(ctx, 200, async (tx) => {
          const r = await payFifo(tx, {
            subscriberId: p.subscriber_id, amount, method: p.method, reference: p.reference, notes: p.notes, createdBy: auth.managerId,
          });
          return {
            applied: r.applied.map((a) => ({ invoice_id: a.invoiceId, amount: fromMinor(a.amount, currency) })),
            remaining: fromMinor(r.remaining, currency),
          };
        });
      },
    },

    consolidate: {
      rest: 'POST /api/invoices/consolidate/:subscriber_id',
      http: {
        auth: 'jwt',
        access: WRITE,
        summary: 'Merge the subscriber\'s pending invoices into one new pending invoice and void them',
        tag: TAG,
        params: idParams('subscriber_id'),
        body: object({ notes }),
        errors: { 403: 'not authorized', 404: 'subscriber not found', 409: 'fewer than two pending invoices, or mixed currencies or tax rates' },
      },
      async handler(ctx: Ctx<{ subscriber_id: number; notes?: string }>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        await subscriberInScope(auth, ctx.params.subscriber_id, 'write');
        const { json, voidedIds } = await db().transaction(async (tx) => {
          const r = await consolidateInvoices(tx, { subscriberId: ctx.params.subscriber_id, notes: ctx.params.notes, createdBy: auth.managerId });
          return { json: await writtenInvoiceJson(tx, r.invoice.id), voidedIds: r.voidedIds };
        });
        return rawJsonEnvelope(`{"consolidated_invoice":${json},"voided_invoice_ids":${JSON.stringify(voidedIds)}}`);
      },
    },

    commissions: {
      rest: 'GET /api/invoices/commissions',
      http: {
        auth: 'jwt',
        access: 'any authenticated (reseller_id: admin scope, or a reseller inside its tree)',
        summary: 'Monthly commission breakdown of a reseller',
        tag: TAG,
        query: object({ reseller_id: idSchema, from: isoDate, to: isoDate, status: { type: 'string', enum: [...INVOICE_STATUSES] } }),
        errors: { 403: 'reseller_id outside the caller\'s tree' },
      },
      async handler(ctx: Ctx<{ reseller_id?: number; from?: string; to?: string; status?: string }>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const p = ctx.params;
        const scope = await scopeFor(db(), auth, 'read');
        // A reseller's commissions are on its own invoices; an admin sees all unless it names one.
        const resellerId = p.reseller_id ?? auth.resellerId ?? undefined;
        let rate: number | null = null;
        if (resellerId !== undefined) {
          const [r] = await db().select({ rate: resellers.commissionRate }).from(resellers).where(eq(resellers.id, resellerId));
          if (!r) throw badRequest('reseller_id not found');
          if (!(await resellerInScope(db(), scope, resellerId))) throw forbidden();
          rate = Number(r.rate);
        }
        const { commission_basis: basis, currency } = await loadSettings(db(), ['commission_basis', 'currency']);
        // An explicit status wins; otherwise the basis setting decides: paid invoices, or every non-void one.
        const statuses = p.status ? [p.status] : basis === 'paid' ? ['paid'] : undefined;
        const rows = await commissionRows(scope, { resellerId, from: p.from, to: p.to, statuses });
        const totalInvoiced = rows.reduce((s, r) => s + Number(r.invoiced), 0);
        const totalCommission = rows.reduce((s, r) => s + Number(r.commission), 0);
        // Without a reseller, the rate is the effective one over what was selected.
        rate ??= totalInvoiced === 0 ? 0 : Math.round((totalCommission * 10000) / totalInvoiced) / 100;
        return {
          data: {
            total_commission: fromMinor(totalCommission, currency),
            total_invoiced: fromMinor(totalInvoiced, currency),
            rate,
            rows: rows.map((r) => ({ month: r.month, invoiced: fromMinor(Number(r.invoiced), currency), commission: fromMinor(Number(r.commission), currency) })),
          },
        };
      },
    },

    prorate: {
      rest: 'POST /api/invoices/prorate',
      http: {
        auth: 'jwt',
        access: WRITE,
        summary: 'Pre-compute a prorated change of plan (nothing is written)',
        tag: TAG,
        body: object({ subscriber_id: idSchema, new_service_id: idSchema }, ['subscriber_id', 'new_service_id']),
        errors: { 400: 'new_service_id not found', 403: 'not authorized', 404: 'subscriber not found' },
      },
      async handler(ctx: Ctx<{ subscriber_id: number; new_service_id: number }>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        await subscriberInScope(auth, ctx.params.subscriber_id, 'write');
        const q = await quoteServiceChange(db(), { subscriberId: ctx.params.subscriber_id, newServiceId: ctx.params.new_service_id });
        return {
          data: {
            old_unused_credit: fromMinor(q.oldUnusedCredit, q.currency),
            new_service_charge: fromMinor(q.newServiceCharge, q.currency),
            net_amount_due: fromMinor(q.netAmountDue, q.currency),
            days_remaining: q.daysRemaining,
          },
        };
      },
    },

    /** The daily job, callable through the broker (not routed): overdue marking and key pruning. */
    markOverdue: {
      visibility: 'public',
      async handler(ctx: Ctx<{ today?: string }>): Promise<{ marked: number }> {
        return { marked: await markOverdue(ctx.params.today) };
      },
    },
  },

  methods: {
    async runDailyJobs(this: BillingThis) {
      try {
        const marked = await markOverdue();
        const pruned = await pruneIdempotencyKeys();
        this.logger.info('billing daily jobs', { marked_overdue: marked, pruned_idempotency_keys: pruned });
      } catch (err) {
        this.logger.error('billing daily jobs failed', err);
      }
    },

    /** Folds the status counts' deltas every FOLD_INTERVAL_MS, one fold at a time. */
    scheduleFold(this: BillingThis) {
      this.foldTimer = setTimeout(() => {
        this.folding = foldStatusCounts()
          .then(() => undefined, (err: unknown) => this.logger.warn('folding invoice status counts failed', err))
          .finally(() => {
            this.folding = undefined;
            if (this.foldTimer) this.scheduleFold();
          });
      }, FOLD_INTERVAL_MS);
      this.foldTimer.unref();
    },

    /** Samples full names for the name search (name-lookup.ts); a failure keeps the last sample. */
    async sampleNames(this: BillingThis) {
      try {
        useNameSample(await sampleFullNames());
      } catch (err) {
        this.logger.warn('sampling full names failed', err);
      }
    },
  },

  async started(this: BillingThis) {
    keepListPages(listPageEntriesFromEnv());
    await this.sampleNames();
    this.sampleTimer = setInterval(() => {
      this.sampling = this.sampleNames();
    }, NAME_SAMPLE_INTERVAL_MS);
    this.sampleTimer.unref();
    await this.runDailyJobs();
    this.overdueTimer = setInterval(() => void this.runDailyJobs(), DAY_MS);
    this.overdueTimer.unref();
    this.scheduleFold();
  },

  async stopped(this: BillingThis) {
    if (this.overdueTimer) clearInterval(this.overdueTimer);
    clearTimeout(this.foldTimer);
    this.foldTimer = undefined;
    clearInterval(this.sampleTimer);
    await Promise.all([this.folding, this.sampling]);
  },
};

export const invoicesService = schema as ServiceSchema;
