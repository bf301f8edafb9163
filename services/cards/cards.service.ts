/**
 * Prepaid cards (issue 27, docs/cards.md): batches made, listed, suspended, released, exported and
 * printed; one card suspended or released; a card redeemed by an operator for a subscriber (and, through
 * the internal `redeemFor`, by the subscriber in the captive portal); failed tries locked out and a
 * lockout lifted by a manager.
 */
import { Readable } from 'node:stream';
import { and, count, desc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import type { ServiceSchema } from 'moleculer';
import { changedFields, recordAudit } from '../../shared/audit';
import { systemAuth, type Auth } from '../../shared/auth/claims';
import { decrypt, encrypt } from '../../shared/auth/secrets';
import {
  inScope,
  recordInScope,
  requireAdminOrReseller,
  requirePermission,
  resellerInScope,
  scopeFor,
  targetReseller,
} from '../../shared/auth/policy';
import { config } from '../../shared/config';
import { db } from '../../shared/db/client';
import { cardBatches, cardRedeemAttempts, cards, services, subscribers } from '../../shared/db/schema';
import { fail, FAILURES } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import { pageOf } from '../../shared/http/context';
import type { ActionResult } from '../../shared/http/route';
import { idParams, type IdPath } from '../../shared/http/schemas';
import { formatMoney } from '../../shared/format';
import { fromMinor, moneyField } from '../../shared/money';
import { isPaperSize, type PaperSize } from '../../shared/paper';
import { loadSettings } from '../../shared/settings';
import { createBatch, serialOf, type BatchRow } from './batches';
import { erasePins, overlapText, requestedRange, withPrinted, type CardRange } from './ranges';
import { redeemCard, type Redeemed } from './redeem';
import {
  batchCardsQuery,
  createBatchBody,
  liftBody,
  listBatchesQuery,
  pdfQuery,
  redeemBody,
  type CreateBatchInput,
  type LiftInput,
  type ListBatchesInput,
  type PdfQuery,
  type RedeemInput,
} from './schemas';
import { sheetHtml } from './sheet';
import { batchView, cardView, type CardRow } from './views';

const TAG = 'cards';

/**
 * A batch the caller may see or change: in its own tree (`view_all` widens subscriber reads, not
 * these); the operator's own batches (no reseller) are the admin's.
 */
async function batchInScope(auth: Auth, id: number, access: 'tree-read' | 'write'): Promise<BatchRow> {
  requireAdminOrReseller(auth);
  const [row] = await db().select().from(cardBatches).where(eq(cardBatches.id, id));
  if (!row) throw fail('cardBatchNotFound');
  const scope = await scopeFor(db(), auth, access);
  if (row.resellerId === null ? scope.kind !== 'all' : !(await resellerInScope(db(), scope, row.resellerId)))
    throw fail('notAuthorized');
  return row;
}

async function cardInScope(auth: Auth, id: number, access: 'tree-read' | 'write'): Promise<CardRow> {
  const { rows } = await db().execute<CardRow>(
    sql`select id, batch_id, serial, status, used_at, used_by_subscriber_id, transaction_id from cards where id = ${id}`,
  );
  if (!rows[0]) throw fail('cardNotFound');
  await batchInScope(auth, Number(rows[0].batch_id), access);
  return rows[0];
}

async function statusCounts(batchId: number): Promise<Record<string, number>> {
  const rows = await db()
    .select({ status: cards.status, n: count() })
    .from(cards)
    .where(eq(cards.batchId, batchId))
    .groupBy(cards.status);
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

function setBatchStatus(status: 'active' | 'suspended') {
  return {
    rest: `POST /api/cards/batches/:id/${status === 'active' ? 'release' : 'suspend'}`,
    http: {
      auth: 'jwt' as const,
      access: 'admin, or a reseller over its tree' as const,
      summary:
        status === 'active'
          ? 'Release a suspended batch: its unused cards redeem again'
          : 'Suspend a batch: none of its cards redeems until released',
      tag: TAG,
      params: idParams(),
      errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.cardBatchNotFound.message },
    },
    async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
      const before = await batchInScope(ctx.meta.auth!, ctx.params.id, 'write');
      const row = await db().transaction(async (tx) => {
        const [updated] = await tx.update(cardBatches).set({ status }).where(eq(cardBatches.id, before.id)).returning();
        await recordAudit(tx, ctx.meta.auth, {
          action: `card_batch.${status === 'active' ? 'release' : 'suspend'}`,
          entity: 'card_batch',
          entityId: before.id,
          resellerId: before.resellerId,
          details: changedFields({ status: before.status }, { status: updated.status }),
        });
        return updated;
      });
      return { data: batchView(row, await statusCounts(row.id)) };
    },
  };
}

function setCardStatus(status: 'active' | 'suspended') {
  return {
    rest: `POST /api/cards/:id/${status === 'active' ? 'release' : 'suspend'}`,
    http: {
      auth: 'jwt' as const,
      access: 'admin, or a reseller over its tree' as const,
      summary: status === 'active' ? 'Release one suspended card' : 'Suspend one card (a used card stays used)',
      tag: TAG,
      params: idParams(),
      errors: {
        403: FAILURES.notAuthorized.message,
        404: FAILURES.cardNotFound.message,
        409: FAILURES.cardUsed.message,
      },
    },
    async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
      const card = await cardInScope(ctx.meta.auth!, ctx.params.id, 'write');
      if (card.status === 'used') throw fail('cardUsed');
      const updated = await db().transaction(async (tx) => {
        const { rows } = await tx.execute<CardRow & { reseller_id: number | null }>(sql`
          update cards c set status = ${status} from card_batches b
           where c.id = ${card.id} and c.status <> 'used' and b.id = c.batch_id
          returning c.id, c.batch_id, c.serial, c.status, c.used_at, c.used_by_subscriber_id, c.transaction_id, b.reseller_id`);
        if (!rows[0]) throw fail('cardUsed');
        await recordAudit(tx, ctx.meta.auth, {
          action: `card.${status === 'active' ? 'release' : 'suspend'}`,
          entity: 'card',
          entityId: Number(card.id),
          resellerId: rows[0].reseller_id === null ? null : Number(rows[0].reseller_id),
          details: { serial: card.serial, status: [card.status, rows[0].status] },
        });
        return rows[0];
      });
      return { data: cardView(updated) };
    },
  };
}

/** Renewals a redemption asks for, through the subscribers unit, after the card's transaction committed. */
async function renewAfter(ctx: Ctx<unknown>, r: Redeemed, subscriberId: number, managerId: number | null) {
  if (!r.renew) return null;
  // The card paid for it: the renewal runs with the installation's authority, recorded as the operator's.
  const auth = systemAuth('prepaid-card', managerId);
  try {
    // A plan card paid for a period of its plan (the move and the renewal in one transaction); a
    // money card's auto-renew is paid by the wallet, checked under the row lock.
    const res =
      r.kind === 'plan' && r.serviceId !== null
        ? await ctx.call<{ data: Record<string, unknown> }, { id: number; service_id: number }>(
            'subscribers.renewOnCardPlan',
            { id: subscriberId, service_id: r.serviceId },
            { meta: { auth } },
          )
        : await ctx.call<{ data: Record<string, unknown> }, { id: number }>(
            r.kind === 'plan' ? 'subscribers.renew' : 'subscribers.renewFromWallet',
            { id: subscriberId },
            { meta: { auth } },
          );
    return { renewed: true, expiry_date: res.data.expiry_date ?? null };
  } catch (err) {
    return { renewed: false, message: (err as Error).message };
  }
}

function redeemedView(r: Redeemed, renewal: unknown) {
  return {
    card_id: r.cardId,
    serial: r.serial,
    batch_id: r.batchId,
    kind: r.kind,
    amount: fromMinor(r.amount, r.currency),
    currency: r.currency,
    service_id: r.serviceId,
    plan_name: r.planName,
    transaction_id: r.transactionId,
    paid_invoices: r.paidInvoices.map((p) => ({ invoice_id: p.invoiceId, amount: fromMinor(p.amount, r.currency) })),
    wallet_balance: fromMinor(r.walletBalance, r.currency),
    renewal,
  };
}

function chunkedStream(bytes: Buffer): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 64 * 1024) parts.push(bytes.subarray(i, i + 64 * 1024));
  return Readable.from(parts, { objectMode: false });
}

/**
 * Records cards `range` of a batch as printed and blanks their PINs, under the batch's row lock: of
 * two prints of overlapping ranges rendered at once, the second to finish is 409 and its PDF is dropped.
 */
async function markPrinted(batchId: number, range: CardRange): Promise<void> {
  await db().transaction(async (tx) => {
    const [row] = await tx.select().from(cardBatches).where(eq(cardBatches.id, batchId)).for('update');
    const printed = overlapText(row.printedRanges, range);
    if (printed || !row.pinsEnc) throw fail('cardSheetPrinted', printed || `1-${row.count}`);
    const left = erasePins(JSON.parse(decrypt(row.pinsEnc)) as string[], range);
    const at = new Date();
    await tx
      .update(cardBatches)
      .set({
        pinsEnc: left ? encrypt(JSON.stringify(left)) : null,
        printedAt: left ? null : at,
        printedRanges: withPrinted(row.printedRanges, { ...range, at: at.toISOString() }),
      })
      .where(eq(cardBatches.id, batchId));
  });
}

export const cardsService: ServiceSchema = {
  name: 'cards',
  actions: {
    createBatch: {
      rest: 'POST /api/cards/batches',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller for its tree',
        summary: 'Make up to 100,000 prepaid cards (money or plan); the PINs come back once, as CSV in `csv`',
        tag: TAG,
        success: 201,
        body: createBatchBody,
        errors: {
          400: FAILURES.cardKindInvalid.message,
          402: FAILURES.insufficientBalance.message,
          403: FAILURES.notAuthorized.message,
        },
      },
      async handler(ctx: Ctx<CreateBatchInput>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const p = ctx.params;
        if ((p.value === undefined) === (p.service_id === undefined)) throw fail('cardKindInvalid');
        const resellerId =
          p.reseller_id === undefined && auth.role === 'admin' ? null : await targetReseller(db(), auth, p.reseller_id);
        const s = await loadSettings(db(), ['currency', 'cards_reseller_charge']);
        const value = p.value === undefined ? null : moneyField(p.value, s.currency, 'value');
        const { batch, csv } = await db().transaction(async (tx) => {
          let unitPrice = value ?? 0;
          let currency = s.currency;
          if (value === null) {
            // A plan card's price and currency, held until the batch commits: a plan repriced in
            // another currency meanwhile would have the reseller pay for cards no redemption takes.
            const [plan] = await tx
              .select()
              .from(services)
              .where(and(eq(services.id, p.service_id!), isNull(services.deletedAt)))
              .for('share');
            if (!plan) throw fail('referenceNotFound', 'service_id');
            unitPrice = plan.price;
            currency = plan.currency;
          }
          const made = await createBatch(tx, {
            count: p.count,
            value,
            serviceId: p.service_id ?? null,
            unitPrice,
            currency,
            resellerId,
            expiresAt: p.expires_at ?? null,
            prefix: p.prefix ?? '',
            chargeMode: s.cards_reseller_charge === 'redemption' ? 'redemption' : 'creation',
            createdBy: auth.managerId,
          });
          // One row for the batch, never its PINs (they leave once, in the answer's CSV).
          await recordAudit(tx, auth, {
            action: 'card_batch.create',
            entity: 'card_batch',
            entityId: made.batch.id,
            resellerId: made.batch.resellerId,
            details: changedFields(null, made.batch),
          });
          return made;
        });
        return { data: batchView(batch, { active: batch.count }), csv };
      },
    },

    listBatches: {
      rest: 'GET /api/cards/batches',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller over its tree',
        summary: 'Card batches, newest first',
        tag: TAG,
        query: listBatchesQuery,
      },
      async handler(ctx: Ctx<ListBatchesInput>): Promise<ActionResult> {
        const auth = requireAdminOrReseller(ctx.meta.auth);
        const scope = await scopeFor(db(), auth, 'tree-read');
        const { page, limit, offset } = pageOf(ctx.params);
        const where: SQL[] = [scope.kind === 'all' ? sql`true` : inScope(scope, cardBatches.resellerId)];
        if (ctx.params.reseller_id !== undefined) where.push(eq(cardBatches.resellerId, ctx.params.reseller_id));
        const rows = await db()
          .select()
          .from(cardBatches)
          .where(and(...where))
          .orderBy(desc(cardBatches.id))
          .limit(limit)
          .offset(offset);
        const [{ n }] = await db()
          .select({ n: count() })
          .from(cardBatches)
          .where(and(...where));
        return { data: rows.map((b) => batchView(b)), pagination: { page, limit, total: Number(n) } };
      },
    },

    getBatch: {
      rest: 'GET /api/cards/batches/:id',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller over its tree',
        summary: 'One batch with its cards counted by status',
        tag: TAG,
        params: idParams(),
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.cardBatchNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        const b = await batchInScope(ctx.meta.auth!, ctx.params.id, 'tree-read');
        return { data: batchView(b, await statusCounts(b.id)) };
      },
    },

    batchCards: {
      rest: 'GET /api/cards/batches/:id/cards',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller over its tree',
        summary: 'The cards of a batch (no PINs: they are shown once)',
        tag: TAG,
        params: idParams(),
        query: batchCardsQuery,
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.cardBatchNotFound.message },
      },
      async handler(ctx: Ctx<IdPath & { page?: number; limit?: number; status?: string }>): Promise<ActionResult> {
        const b = await batchInScope(ctx.meta.auth!, ctx.params.id, 'tree-read');
        const { page, limit, offset } = pageOf(ctx.params);
        const where = [eq(cards.batchId, b.id), ...(ctx.params.status ? [eq(cards.status, ctx.params.status)] : [])];
        // The subscriber who used a card by its username beside the id (a person reads names).
        const rows = await db()
          .select({ c: cards, username: subscribers.username })
          .from(cards)
          .leftJoin(subscribers, eq(subscribers.id, cards.usedBySubscriberId))
          .where(and(...where))
          .orderBy(cards.id)
          .limit(limit)
          .offset(offset);
        const [{ n }] = await db()
          .select({ n: count() })
          .from(cards)
          .where(and(...where));
        return {
          data: rows.map(({ c, username }) => ({
            ...cardView({
              id: c.id,
              batch_id: c.batchId,
              serial: c.serial,
              status: c.status,
              used_at: c.usedAt,
              used_by_subscriber_id: c.usedBySubscriberId,
              transaction_id: c.transactionId,
            }),
            used_by_username: username,
          })),
          pagination: { page, limit, total: Number(n) },
        };
      },
    },

    exportBatch: {
      rest: 'GET /api/cards/batches/:id/csv',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller over its tree',
        summary: 'A batch as CSV: serial, status, used_at, subscriber (no PINs)',
        tag: TAG,
        params: idParams(),
        produces: 'text',
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.cardBatchNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<string> {
        const b = await batchInScope(ctx.meta.auth!, ctx.params.id, 'tree-read');
        const { rows } = await db().execute<{ line: string }>(sql`
          select concat_ws(',', serial, status, coalesce(to_char(used_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
                           coalesce(used_by_subscriber_id::text, '')) as line
            from cards where batch_id = ${b.id} order by id`);
        ctx.meta.$responseHeaders = {
          'Content-Type': 'text/csv; charset=utf-8',
          'Content-Disposition': `attachment; filename="cards-batch-${b.id}.csv"`,
        };
        return ['serial,status,used_at,used_by_subscriber_id', ...rows.map((r) => r.line)].join('\n') + '\n';
      },
    },

    batchPdf: {
      rest: 'GET /api/cards/batches/:id/pdf',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller over its tree',
        summary:
          'The printable sheet of a batch, or of cards `from`..`to` of it (at most 500 cards and 50 pages a sheet), with their PINs, once: printing erases the PINs printed',
        tag: TAG,
        params: idParams(),
        query: pdfQuery,
        produces: 'pdf',
        errors: {
          400: 'a sheet holds at most <n> cards (...): print them in parts with from and to; to must be at most <count>',
          403: FAILURES.notAuthorized.message,
          404: FAILURES.cardBatchNotFound.message,
          409: FAILURES.cardSheetPrinted.message('<from>-<to>'),
        },
      },
      async handler(ctx: Ctx<IdPath & PdfQuery>): Promise<Readable> {
        const b = await batchInScope(ctx.meta.auth!, ctx.params.id, 'write');
        const perPage = ctx.params.per_page ?? 10;
        const range = requestedRange(b.count, perPage, ctx.params.from, ctx.params.to);
        const printed = overlapText(b.printedRanges, range);
        if (printed || !b.pinsEnc) throw fail('cardSheetPrinted', printed || `1-${b.count}`);
        const s = await loadSettings(db(), [
          'default_paper_size',
          'language',
          'operator_name',
          'operator_phone',
          'operator_logo_url',
        ]);
        const paper: PaperSize = ctx.params.paper ?? (isPaperSize(s.default_paper_size) ? s.default_paper_size : 'A4');
        const pins = JSON.parse(decrypt(b.pinsEnc)) as string[];
        let worth = b.value !== null ? formatMoney(b.value, b.currency) : '';
        if (b.serviceId !== null) {
          const [plan] = await db().select({ name: services.name }).from(services).where(eq(services.id, b.serviceId));
          worth = plan?.name ?? `#${b.serviceId}`;
        }
        const cardsOfSheet: { serial: string; pin: string }[] = [];
        for (let n = range.from; n <= range.to; n++)
          cardsOfSheet.push({ serial: serialOf(b.prefix, b.id, n), pin: pins[n - 1] });
        const html = await sheetHtml({
          language: ctx.params.language ?? s.language,
          operatorName: s.operator_name,
          operatorPhone: s.operator_phone,
          logoUrl: s.operator_logo_url,
          worth,
          kind: b.value !== null ? 'money' : 'plan',
          expiresAt: b.expiresAt,
          redeemUrl: `${config().publicBaseUrl}/portal#redeem`,
          perPage,
          cards: cardsOfSheet,
        });
        const stream = await ctx.call<Readable, { html: string; paper: PaperSize }>('pdf-renderer.render', {
          html,
          paper,
        });
        const parts: Buffer[] = [];
        for await (const part of stream) parts.push(Buffer.isBuffer(part) ? part : Buffer.from(part));
        const pdf = Buffer.concat(parts);
        // Shown once: the PINs of these cards are erased only now that their sheet exists.
        await markPrinted(b.id, range);
        const name = range.from === 1 && range.to === b.count ? `${b.id}` : `${b.id}-${range.from}-${range.to}`;
        ctx.meta.$responseHeaders = { 'Content-Disposition': `attachment; filename="cards-batch-${name}.pdf"` };
        return chunkedStream(pdf);
      },
    },

    suspendBatch: setBatchStatus('suspended'),
    releaseBatch: setBatchStatus('active'),

    getCard: {
      rest: 'GET /api/cards/:id',
      http: {
        auth: 'jwt',
        access: 'admin, or a reseller over its tree',
        summary: 'One card (no PIN)',
        tag: TAG,
        params: idParams(),
        errors: { 403: FAILURES.notAuthorized.message, 404: FAILURES.cardNotFound.message },
      },
      async handler(ctx: Ctx<IdPath>): Promise<ActionResult> {
        return { data: cardView(await cardInScope(ctx.meta.auth!, ctx.params.id, 'tree-read')) };
      },
    },
    suspendCard: setCardStatus('suspended'),
    releaseCard: setCardStatus('active'),

    redeem: {
      rest: 'POST /api/subscribers/:id/redeem-card',
      http: {
        auth: 'jwt',
        access: 'subscribers.refill_quota',
        summary:
          'Redeem a prepaid card for a subscriber: a money card credits the wallet (then open invoices, oldest first; auto-renew), a plan card renews on its plan',
        tag: 'subscribers',
        params: idParams(),
        body: redeemBody,
        errors: {
          400: FAILURES.cardPinInvalid.message,
          403: FAILURES.notAuthorized.message,
          404: FAILURES.subscriberNotFound.message,
          409: `${FAILURES.cardUsed.message}; ${FAILURES.cardSuspended.message}; ${FAILURES.cardExpired.message}; ${FAILURES.cardPlanCurrency.message('<plan currency>', '<card currency>')}`,
          429: FAILURES.redeemLocked.message,
        },
      },
      async handler(ctx: Ctx<IdPath & RedeemInput>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.refill_quota');
        const [row] = await db()
          .select({ id: subscribers.id, resellerId: subscribers.resellerId })
          .from(subscribers)
          .where(and(eq(subscribers.id, ctx.params.id), sql`${subscribers.deletedAt} is null`));
        await recordInScope(db(), auth, 'write', row, 'subscriberNotFound');
        const r = await redeemCard({
          subscriberId: ctx.params.id,
          pin: ctx.params.pin,
          address: ctx.meta.ip ?? null,
          managerId: auth.managerId,
          auth,
        });
        return { data: redeemedView(r, await renewAfter(ctx, r, ctx.params.id, auth.managerId)) };
      },
    },

    /** The portal's redemption: the subscriber is the one its session address names (billing unit). */
    redeemFor: {
      visibility: 'public',
      async handler(ctx: Ctx<{ subscriberId: number; pin: string; address: string | null }>) {
        const r = await redeemCard({
          subscriberId: ctx.params.subscriberId,
          pin: ctx.params.pin,
          address: ctx.params.address,
          managerId: null,
        });
        return redeemedView(r, await renewAfter(ctx, r, ctx.params.subscriberId, null));
      },
    },

    attempts: {
      rest: 'GET /api/cards/attempts',
      http: {
        auth: 'jwt',
        access: 'subscribers.refill_quota',
        summary: 'Card redemption tries, failed ones included, newest first',
        tag: TAG,
        query: liftBody,
      },
      async handler(ctx: Ctx<LiftInput>): Promise<ActionResult> {
        requirePermission(ctx.meta.auth, 'subscribers.refill_quota');
        const where: SQL[] = [];
        if (ctx.params.subscriber_id !== undefined)
          where.push(eq(cardRedeemAttempts.subscriberId, ctx.params.subscriber_id));
        if (ctx.params.address !== undefined) where.push(eq(cardRedeemAttempts.address, ctx.params.address));
        // Tries of no subscriber (an address in the portal) belong to no tree.
        const scope = await scopeFor(db(), ctx.meta.auth!, 'tree-read');
        if (scope.kind !== 'all') {
          where.push(
            inArray(
              cardRedeemAttempts.subscriberId,
              db().select({ id: subscribers.id }).from(subscribers).where(inScope(scope, subscribers.resellerId)),
            ),
          );
        }
        const rows = await db()
          .select()
          .from(cardRedeemAttempts)
          .where(and(...where))
          .orderBy(desc(cardRedeemAttempts.id))
          .limit(500);
        return {
          data: rows.map((a) => ({
            id: a.id,
            subscriber_id: a.subscriberId,
            address: a.address,
            ok: a.ok,
            card_id: a.cardId,
            reason: a.reason,
            manager_id: a.managerId,
            cleared_at: a.clearedAt?.toISOString() ?? null,
            created_at: a.createdAt.toISOString(),
          })),
        };
      },
    },

    liftLockout: {
      rest: 'POST /api/cards/lockouts/lift',
      http: {
        auth: 'jwt',
        access: 'subscribers.refill_quota',
        summary: "Lift a card lockout: the subscriber's or the address's failed tries stop counting",
        tag: TAG,
        body: liftBody,
        errors: { 400: 'give subscriber_id or address', 403: FAILURES.notAuthorized.message },
      },
      async handler(ctx: Ctx<LiftInput>): Promise<ActionResult> {
        const auth = requirePermission(ctx.meta.auth, 'subscribers.refill_quota');
        const { subscriber_id: subscriberId, address } = ctx.params;
        if (subscriberId === undefined && address === undefined)
          throw fail('invalidRequest', 'give subscriber_id or address');
        let liftedReseller: number | null = null;
        if (subscriberId !== undefined) {
          const [row] = await db()
            .select({ id: subscribers.id, resellerId: subscribers.resellerId })
            .from(subscribers)
            .where(eq(subscribers.id, subscriberId));
          liftedReseller = (await recordInScope(db(), auth, 'write', row, 'subscriberNotFound')).resellerId;
        } else if ((await scopeFor(db(), auth, 'write')).kind !== 'all') throw fail('notAuthorized');
        const cleared = await db().transaction(async (tx) => {
          const rows = await tx
            .update(cardRedeemAttempts)
            .set({ clearedAt: new Date() })
            .where(
              and(
                eq(cardRedeemAttempts.ok, false),
                sql`${cardRedeemAttempts.clearedAt} is null`,
                subscriberId !== undefined ? eq(cardRedeemAttempts.subscriberId, subscriberId) : sql`true`,
                address !== undefined ? eq(cardRedeemAttempts.address, address) : sql`true`,
              ),
            )
            .returning({ id: cardRedeemAttempts.id });
          await recordAudit(tx, auth, {
            action: 'card.lockout_lift',
            entity: subscriberId !== undefined ? 'subscriber' : 'card_lockout',
            entityId: subscriberId ?? null,
            resellerId: liftedReseller,
            details: { address: address ?? null, cleared: rows.length },
          });
          return rows;
        });
        return { data: { cleared: cleared.length } };
      },
    },
  },
};
