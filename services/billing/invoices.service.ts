/**
 * The `billing` service: invoice actions; the larger ones call their use case in use-cases/. Every
 * write runs in one transaction through the shared billing functions (shared/billing), which the
 * subscribers unit uses too; reads are prepared statements in queries.ts.
 */
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { and, eq, isNull } from 'drizzle-orm';
import { changedFields, recordAudit } from '../../shared/audit';
import {
  recordInScope,
  requireAdmin,
  requireAdminOrReseller,
  requireInvoicePermission,
  resellerInScope,
  scopeFor,
} from '../../shared/auth/policy';
import {
  consolidateInvoices,
  createInvoice,
  deleteInvoice,
  payFifo,
  quoteServiceChange,
  updatePendingInvoice,
  voidUnpaidInvoice,
} from '../../shared/billing';
import { db } from '../../shared/db/client';
import { invoices, subscribers } from '../../shared/db/schema';
import { FAILURES, fail, failure } from '../../shared/failures';
import { authOf, pageOf, type Ctx } from '../../shared/http/context';
import { rawJsonEnvelope, type ActionResult } from '../../shared/http/route';
import { clientOf } from '../../shared/billing/pg';
import type { Tx } from '../../shared/db/client';
import { fromMinor, isCurrency, moneyField } from '../../shared/money';
import { loadSettings } from '../../shared/settings';
import { looksLikePhone, phoneSearchTerm } from '../../shared/phone';
import { idempotentWrite, pruneIdempotencyKeys, requestWrite } from './idempotency';
import { markOverdue } from '../../shared/billing/overdue';
import { keepListPages, listInvoicesJson, useNameSample } from './invoice-list';
import { NAME_SAMPLE_INTERVAL_MS, sampleFullNames } from './name-lookup';
import { FOLD_INTERVAL_MS, foldStatusCounts } from './invoice-status-counts';
import { foldTreeBlockCounts } from './tree-block-counts';
import { listPageEntriesFromEnv, pruneListChanges } from './list-page-cache';
import { invoiceHead, invoiceJson, paymentsJson, subscriberHead } from './queries';
import { READ, TAG, WRITE, readErrors, writeAccess, writeErrors } from './invoice-schemas';
import {
  commissionsQuery,
  consolidateBody,
  createBody,
  listQuery,
  payBody,
  prorateBody,
  quickPayBody,
  updateBody,
} from './invoice-schemas';
import type {
  CommissionsInput,
  ConsolidateInput,
  CreateInvoiceInput,
  ListInvoicesInput,
  PayInput,
  ProrateInput,
  QuickPayInput,
  UpdateInvoiceInput,
} from './invoice-schemas';
import { idParams, object, type IdPath, type Infer } from '../../shared/http/schemas';
import { itemsInMinor } from './amounts';
import { payInvoice } from './use-cases/pay-invoice';
import { commissionReport } from './use-cases/commissions';

const subscriberPath = idParams('subscriber_id');
type SubscriberPath = Infer<typeof subscriberPath>;

const DAY_MS = 86_400_000;

async function systemCurrency(): Promise<string> {
  return (await loadSettings(db(), ['currency'])).currency;
}

/** The LIKE pattern of the phone a phone-like search names, in the operator's country (shared/phone.ts). */
async function phoneSearchPattern(search: string | undefined): Promise<string | undefined> {
  if (!search || !looksLikePhone(search)) return undefined;
  const term = phoneSearchTerm(search, (await loadSettings(db(), ['default_country'])).default_country);
  return term === undefined ? undefined : `%${term}%`;
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
        query: listQuery,
        errors: { 403: "reseller_id outside the caller's tree" },
      },
      async handler(ctx: Ctx<ListInvoicesInput>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const p = ctx.params;
        const { page, limit, offset } = pageOf(p);
        const scope = await scopeFor(db(), auth, 'read');
        if (p.reseller_id !== undefined && !(await resellerInScope(db(), scope, p.reseller_id)))
          throw fail('notAuthorized');
        const { json, total } = await listInvoicesJson(scope, {
          status: p.status,
          subscriberId: p.subscriber_id,
          resellerId: p.reseller_id,
          from: p.from,
          to: p.to,
          search: p.search,
          searchPhone: await phoneSearchPattern(p.search),
          order: p.order,
          limit,
          offset,
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
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = authOf(ctx);
        const invoice = await recordInScope(db(), auth, 'read', await invoiceJson(ctx.params.id), 'invoiceNotFound');
        return rawJsonEnvelope(invoice.json);
      },
    },

    create: {
      rest: 'POST /api/invoices',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.create'),
        summary: 'Create an invoice manually',
        tag: TAG,
        success: 201,
        idempotent: true,
        body: createBody,
        errors: {
          400: 'validation (the message names the field), subscriber_id not found',
          403: FAILURES.notAuthorized.message,
          409: 'Idempotency-Key reused with another request',
        },
      },
      async handler(ctx: Ctx<CreateInvoiceInput>): Promise<ActionResult> {
        const auth = requireInvoicePermission(ctx.meta.auth, 'invoices.create');
        const p = ctx.params;
        const subscriber = await recordInScope(
          db(),
          auth,
          'write',
          await subscriberHead(p.subscriber_id),
          failure('referenceNotFound', 'subscriber_id'),
        );
        const currency = p.currency ?? (await systemCurrency());
        if (!isCurrency(currency)) throw fail('currencyInvalid');
        const items = itemsInMinor(p.items, currency);
        return idempotentWrite(ctx, 201, async (tx) => {
          // The reseller billed (and paid its commission) is the subscriber's as locked: a transfer or
          // a delete committed since the check above is not billed to the old one.
          const [locked] = await tx
            .select({ resellerId: subscribers.resellerId })
            .from(subscribers)
            .where(and(eq(subscribers.id, p.subscriber_id), isNull(subscribers.deletedAt)))
            .for('update');
          // The scope is checked again only when the reseller changed since (the common case costs no query).
          if (locked?.resellerId !== subscriber.resellerId)
            await recordInScope(tx, auth, 'write', locked, failure('referenceNotFound', 'subscriber_id'));
          const { invoice } = await createInvoice(tx, {
            subscriberId: p.subscriber_id,
            resellerId: locked.resellerId,
            items,
            taxRate: p.tax_rate,
            dueDate: p.due_date,
            notes: p.notes,
            currency,
            createdBy: auth.managerId,
          });
          await recordAudit(tx, auth, {
            action: 'invoice.create',
            entity: 'invoice',
            entityId: invoice.id,
            resellerId: invoice.resellerId,
            details: changedFields(null, invoice),
          });
          return rawJsonEnvelope(await writtenInvoiceJson(tx, invoice.id));
        });
      },
    },

    update: {
      rest: 'PUT /api/invoices/:id',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.edit'),
        summary: 'Edit a pending invoice (items, tax_rate, due_date, notes); totals are recomputed',
        tag: TAG,
        params: idParams(),
        body: updateBody,
        errors: { ...writeErrors, 409: 'the invoice is not pending' },
      },
      async handler(ctx: Ctx<IdPath & UpdateInvoiceInput>): Promise<ActionResult> {
        const auth = requireInvoicePermission(ctx.meta.auth, 'invoices.edit');
        const p = ctx.params;
        const head = await recordInScope(db(), auth, 'write', await invoiceHead(p.id), 'invoiceNotFound');
        const items = p.items ? itemsInMinor(p.items, head.currency) : undefined;
        const json = await db().transaction(async (tx) => {
          const [before] = await tx.select().from(invoices).where(eq(invoices.id, p.id)).for('update');
          const { invoice } = await updatePendingInvoice(tx, p.id, {
            items,
            taxRate: p.tax_rate,
            dueDate: p.due_date,
            notes: p.notes,
          });
          await recordAudit(tx, auth, {
            action: 'invoice.update',
            entity: 'invoice',
            entityId: p.id,
            resellerId: invoice.resellerId,
            details: { ...changedFields(before, invoice), ...(p.items ? { items: p.items.length } : {}) },
          });
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
        errors: { 403: 'not an admin', 404: FAILURES.invoiceNotFound.message, 409: FAILURES.invoicePaid.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = requireAdmin(ctx.meta.auth);
        await db().transaction(async (tx) => {
          const [before] = await tx.select().from(invoices).where(eq(invoices.id, ctx.params.id)).for('update');
          await deleteInvoice(tx, ctx.params.id);
          await recordAudit(tx, auth, {
            action: 'invoice.delete',
            entity: 'invoice',
            entityId: ctx.params.id,
            resellerId: before.resellerId,
            details: changedFields(before, null),
          });
        });
        return { data: { id: ctx.params.id, deleted: true } };
      },
    },

    void: {
      rest: 'POST /api/invoices/:id/void',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.void'),
        summary: 'Void an invoice nobody paid: it stays on record and stops counting',
        tag: TAG,
        params: idParams(),
        body: object({}),
        errors: {
          ...writeErrors,
          409: `${FAILURES.invoiceVoid.message}; ${FAILURES.voidHasPayments.message}`,
        },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const auth = requireInvoicePermission(ctx.meta.auth, 'invoices.void');
        await recordInScope(db(), auth, 'write', await invoiceHead(ctx.params.id), 'invoiceNotFound');
        const json = await db().transaction(async (tx) => {
          const before = await voidUnpaidInvoice(tx, ctx.params.id);
          await recordAudit(tx, auth, {
            action: 'invoice.void',
            entity: 'invoice',
            entityId: before.id,
            resellerId: before.resellerId,
            details: { status: [before.status, 'void'] },
          });
          return writtenInvoiceJson(tx, before.id);
        });
        return rawJsonEnvelope(json);
      },
    },

    pay: {
      rest: 'POST /api/invoices/:id/payment',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.pay'),
        summary: 'Add a payment (ledger row and payment row in one transaction)',
        tag: TAG,
        params: idParams(),
        idempotent: true,
        body: payBody,
        errors: {
          400: FAILURES.amountExceedsBalance.message,
          ...writeErrors,
          409: 'invoice is void, or Idempotency-Key reused with another request',
        },
      },
      async handler(ctx: Ctx<IdPath & PayInput>): Promise<ActionResult> {
        return payInvoice(ctx.meta.auth, ctx.params, requestWrite(ctx, 200));
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
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        await recordInScope(db(), authOf(ctx), 'read', await invoiceHead(ctx.params.id), 'invoiceNotFound');
        return rawJsonEnvelope(await paymentsJson(ctx.params.id));
      },
    },

    quickPay: {
      rest: 'POST /api/invoices/quick-pay/:subscriber_id',
      http: {
        auth: 'jwt',
        access: writeAccess('invoices.pay'),
        summary: "Pay the subscriber's open invoices oldest first; the excess goes to the wallet",
        tag: TAG,
        params: subscriberPath,
        idempotent: true,
        body: quickPayBody,
        errors: {
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
          409: 'Idempotency-Key reused with another request',
        },
      },
      async handler(ctx: Ctx<SubscriberPath & QuickPayInput>): Promise<ActionResult> {
        const auth = requireInvoicePermission(ctx.meta.auth, 'invoices.pay');
        const p = ctx.params;
        const subscriber = await recordInScope(
          db(),
          auth,
          'write',
          await subscriberHead(p.subscriber_id),
          'subscriberNotFound',
        );
        const currency = await systemCurrency();
        const amount = moneyField(p.amount, currency, 'amount');
        return idempotentWrite(ctx, 200, async (tx) => {
          const r = await payFifo(tx, {
            subscriberId: p.subscriber_id,
            amount,
            currency,
            method: p.method,
            reference: p.reference,
            notes: p.notes,
            createdBy: auth.managerId,
          });
          await recordAudit(tx, auth, {
            action: 'payment.quick_pay',
            entity: 'subscriber',
            entityId: p.subscriber_id,
            resellerId: subscriber.resellerId,
            details: {
              amount: p.amount,
              method: p.method ?? 'cash',
              payments: r.applied.map((a) => ({ invoice_id: a.invoiceId, payment_id: a.paymentId })),
              to_wallet: fromMinor(r.remaining, currency),
            },
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
        access: writeAccess('invoices.consolidate'),
        summary: "Merge the subscriber's pending invoices into one new pending invoice and void them",
        tag: TAG,
        params: subscriberPath,
        body: consolidateBody,
        errors: {
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
          409: 'fewer than two pending invoices, or mixed currencies, tax rates or resellers',
        },
      },
      async handler(ctx: Ctx<SubscriberPath & ConsolidateInput>): Promise<ActionResult> {
        const auth = requireInvoicePermission(ctx.meta.auth, 'invoices.consolidate');
        const subscriber = await recordInScope(
          db(),
          auth,
          'write',
          await subscriberHead(ctx.params.subscriber_id),
          'subscriberNotFound',
        );
        const { json, voidedIds } = await db().transaction(async (tx) => {
          const r = await consolidateInvoices(tx, {
            subscriberId: ctx.params.subscriber_id,
            notes: ctx.params.notes,
            createdBy: auth.managerId,
          });
          // The invoices' own reseller, as a void of one of them asks (the subscriber may have moved
          // to the caller's tree since they were billed); refused, the transaction rolls back.
          await recordInScope(tx, auth, 'write', { resellerId: r.resellerId }, 'subscriberNotFound');
          await recordAudit(tx, auth, {
            action: 'invoice.consolidate',
            entity: 'invoice',
            entityId: r.invoice.id,
            resellerId: subscriber.resellerId,
            details: { subscriber_id: ctx.params.subscriber_id, voided_invoice_ids: r.voidedIds },
          });
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
        query: commissionsQuery,
        errors: { 400: FAILURES.currencyInvalid.message, 403: "reseller_id outside the caller's tree" },
      },
      async handler(ctx: Ctx<CommissionsInput>): Promise<ActionResult> {
        return { data: await commissionReport(ctx.meta.auth, ctx.params) };
      },
    },

    prorate: {
      rest: 'POST /api/invoices/prorate',
      http: {
        auth: 'jwt',
        access: WRITE,
        summary: 'Pre-compute a prorated change of plan (nothing is written)',
        tag: TAG,
        body: prorateBody,
        errors: {
          400: 'new_service_id not found',
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
        },
      },
      async handler(ctx: Ctx<ProrateInput>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        await recordInScope(db(), auth, 'write', await subscriberHead(ctx.params.subscriber_id), 'subscriberNotFound');
        const q = await quoteServiceChange(db(), {
          subscriberId: ctx.params.subscriber_id,
          newServiceId: ctx.params.new_service_id,
        });
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

    /**
     * Folds the status counts' and tree blocks' deltas and prunes the list changes' log every
     * FOLD_INTERVAL_MS, one run at a time.
     */
    scheduleFold(this: BillingThis) {
      this.foldTimer = setTimeout(() => {
        this.folding = Promise.all([foldStatusCounts(), foldTreeBlockCounts(), pruneListChanges()])
          .then(
            () => undefined,
            (err: unknown) => this.logger.warn('folding invoice counts or pruning list changes failed', err),
          )
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
