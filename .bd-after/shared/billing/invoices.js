"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.checkTaxRate = checkTaxRate;
exports.checkItems = checkItems;
exports.formatInvoiceNumber = formatInvoiceNumber;
exports.createInvoice = createInvoice;
exports.createInvoices = createInvoices;
exports.readInvoiceForPayment = readInvoiceForPayment;
exports.lockInvoice = lockInvoice;
exports.loadItems = loadItems;
exports.updatePendingInvoice = updatePendingInvoice;
exports.deleteInvoice = deleteInvoice;
exports.lockPendingInvoices = lockPendingInvoices;
exports.voidInvoices = voidInvoices;
/**
 * Invoice writes that take the caller's transaction, so a renewal (subscribers unit) and the
 * billing actions create invoices the same way: settings defaults, commission from the owning
 * reseller, gap-free numbering inside the transaction, public link columns, lines.
 */
const drizzle_orm_1 = require("drizzle-orm");
const schema_1 = require("../db/schema");
const invoice_math_1 = require("../domain/invoice-math");
const invoice_state_1 = require("../domain/invoice-state");
const errors_1 = require("../errors");
const money_1 = require("../money");
const public_links_1 = require("../public-links");
const settings_1 = require("../settings");
const dates_1 = require("./dates");
const pg_1 = require("./pg");
function checkTaxRate(rate) {
    const d = (0, money_1.parseDecimal)(rate);
    if (d.scale > 2)
        throw (0, errors_1.badRequest)('tax_rate must have at most 2 decimal places');
    if (d.digits < 0n || d.digits > 100n * 10n ** BigInt(d.scale))
        throw (0, errors_1.badRequest)('tax_rate must be between 0 and 100');
}
function checkItems(items) {
    if (items.length === 0)
        throw (0, errors_1.badRequest)('items must not be empty');
    items.forEach((it, i) => {
        const q = (0, money_1.parseDecimal)(it.qty);
        if (q.scale > 3)
            throw (0, errors_1.badRequest)(`items[${i}].qty must have at most 3 decimal places`);
        if (q.digits <= 0n)
            throw (0, errors_1.badRequest)(`items[${i}].qty must be greater than 0`);
        if (!Number.isSafeInteger(it.unitPrice) || it.unitPrice < 0)
            throw (0, errors_1.badRequest)(`items[${i}].unit_price must not be negative`);
    });
}
function totalsOrBadRequest(items, taxRate, commissionRate) {
    try {
        return (0, invoice_math_1.invoiceTotals)(items, taxRate, commissionRate);
    }
    catch {
        throw (0, errors_1.badRequest)('items total is too large');
    }
}
/** `<prefix>-<year>-<6 digits>`: the row lock on the (prefix, year) counter keeps it gap-free. */
function formatInvoiceNumber(prefix, year, n) {
    return `${prefix}-${year}-${String(n).padStart(6, '0')}`;
}
async function allocateNumber(tx, prefix, year) {
    const res = await tx.execute((0, drizzle_orm_1.sql) `
    with seq as (
      insert into invoice_sequences (prefix, year, last_value) values (${prefix}, ${year}, 1)
      on conflict (prefix, year) do update set last_value = invoice_sequences.last_value + 1
      returning last_value
    )
    select last_value, nextval(pg_get_serial_sequence('invoices', 'id'))::int as id from seq`);
    const row = res.rows[0];
    return { id: Number(row.id), invoiceNumber: formatInvoiceNumber(prefix, year, Number(row.last_value)) };
}
function itemRows(invoiceId, priced) {
    return priced.map((it, position) => ({
        invoiceId,
        position,
        description: it.description,
        qty: String(it.qty),
        unitPrice: it.unitPrice,
        amount: it.amount,
    }));
}
/** Defaults from settings, the checks and the arithmetic one new invoice gets, whichever writer stores it. */
function priceInvoice(input, s, commissionRate) {
    checkItems(input.items);
    const currency = input.currency ?? s.currency;
    if (!(0, money_1.isCurrency)(currency))
        throw (0, errors_1.badRequest)('currency must be an ISO 4217 code');
    const taxRate = input.taxRate ?? s.default_tax_rate;
    checkTaxRate(taxRate);
    if (commissionRate === undefined)
        throw (0, errors_1.badRequest)('reseller_id not found');
    const totals = totalsOrBadRequest(input.items, taxRate, commissionRate);
    const issueDate = input.issueDate ?? (0, dates_1.todayUtc)();
    const dueDate = input.dueDate ?? (0, dates_1.addDays)(issueDate, s.default_due_days);
    if (dueDate < issueDate)
        throw (0, errors_1.badRequest)('due_date must not be before the issue date');
    return { currency, taxRate: String(taxRate), commissionRate, totals, issueDate, dueDate, year: Number(issueDate.slice(0, 4)) };
}
/** Status and paid_at of an invoice whose total is (now) `total`: a zero total is settled at once. */
function settlement(total) {
    const status = (0, invoice_state_1.initialStatus)(total);
    return { status, paidAt: status === 'paid' ? (0, drizzle_orm_1.sql) `now()` : null };
}
const INVOICE_SETTINGS = ['currency', 'default_tax_rate', 'default_due_days', 'invoice_prefix'];
async function createInvoice(tx, input) {
    const s = await (0, settings_1.loadSettings)(tx, INVOICE_SETTINGS);
    const [reseller] = await tx.select({ commissionRate: schema_1.resellers.commissionRate }).from(schema_1.resellers).where((0, drizzle_orm_1.eq)(schema_1.resellers.id, input.resellerId));
    const p = priceInvoice(input, s, reseller?.commissionRate);
    const { id, invoiceNumber } = await allocateNumber(tx, s.invoice_prefix, p.year);
    const [invoice] = await tx
        .insert(schema_1.invoices)
        .values({
        id,
        invoiceNumber,
        subscriberId: input.subscriberId,
        resellerId: input.resellerId,
        kind: input.kind ?? 'manual',
        amount: p.totals.amount,
        taxRate: p.taxRate,
        taxAmount: p.totals.taxAmount,
        total: p.totals.total,
        currency: p.currency,
        issueDate: p.issueDate,
        dueDate: p.dueDate,
        notes: input.notes ?? null,
        commissionRate: p.commissionRate,
        commissionAmount: p.totals.commissionAmount,
        createdBy: input.createdBy ?? null,
        ...settlement(p.totals.total),
        ...(0, public_links_1.newPublicLink)(id),
    })
        .returning();
    const items = await tx.insert(schema_1.invoiceItems).values(itemRows(id, p.totals.items)).returning();
    return { invoice, items };
}
const NEXT_INVOICE_IDS = `select nextval(pg_get_serial_sequence('invoices', 'id'))::int as id from generate_series(1, $1::int)`;
/** Takes `count` consecutive numbers of the (prefix, year) counter with one bump; returns the first. */
const BUMP_SEQUENCE = `insert into invoice_sequences (prefix, year, last_value) values ($1, $2, $3)
  on conflict (prefix, year) do update set last_value = invoice_sequences.last_value + excluded.last_value
  returning last_value - $3 + 1 as first`;
const INSERT_INVOICES = `insert into invoices as i (id, invoice_number, subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount,
    total, currency, issue_date, due_date, notes, commission_rate, commission_amount, created_by, public_token_nonce, public_token_hash,
    status, paid_at)
  select u.*, case when u.status = 'paid' then now() end
    from unnest($1::int[], $2::text[], $3::int[], $4::int[], $5::text[], $6::bigint[], $7::numeric[], $8::bigint[],
      $9::bigint[], $10::text[], $11::date[], $12::date[], $13::text[], $14::numeric[], $15::bigint[], $16::int[], $17::text[], $18::text[],
      $19::text[])
      as u(id, invoice_number, subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount, total, currency, issue_date, due_date,
        notes, commission_rate, commission_amount, created_by, public_token_nonce, public_token_hash, status)
  returning ${pg_1.INVOICE_COLUMNS}`;
const INSERT_ITEMS = `insert into invoice_items (invoice_id, position, description, qty, unit_price, amount)
  select * from unnest($1::int[], $2::int[], $3::text[], $4::numeric[], $5::bigint[], $6::bigint[])
  returning id, invoice_id as "invoiceId", position, description, qty, unit_price as "unitPrice", amount`;
/**
 * createInvoice for many invoices at once (bulk renewals): the same defaults, checks, totals,
 * commission and public links, but one counter bump per (prefix, year) for the whole batch and one
 * multi-row insert each for invoices and lines, so a batch costs a handful of statements instead
 * of five per invoice. Numbers are consecutive in input order and gap-free like createInvoice's (the
 * counter row stays locked until the transaction ends). Any refused input fails the whole call
 * before anything is written, as a rolled-back loop of createInvoice would.
 */
async function createInvoices(tx, inputs) {
    if (inputs.length === 0)
        return [];
    const s = await (0, settings_1.loadSettings)(tx, INVOICE_SETTINGS);
    const resellerIds = [...new Set(inputs.map((input) => input.resellerId))];
    const rates = new Map((await tx.select({ id: schema_1.resellers.id, commissionRate: schema_1.resellers.commissionRate }).from(schema_1.resellers)
        .where((0, drizzle_orm_1.inArray)(schema_1.resellers.id, resellerIds))).map((r) => [r.id, r.commissionRate]));
    const priced = inputs.map((input) => priceInvoice(input, s, rates.get(input.resellerId)));
    const ids = (await (0, pg_1.txQuery)(tx, 'billing_next_invoice_ids', NEXT_INVOICE_IDS, [inputs.length]))
        .map((r) => r.id).sort((a, b) => a - b);
    // One bump per year, years ascending: two batches spanning the same years lock the counters in one order.
    const numbers = new Array(inputs.length);
    for (const year of [...new Set(priced.map((p) => p.year))].sort((a, b) => a - b)) {
        const slots = priced.flatMap((p, i) => (p.year === year ? [i] : []));
        const [{ first }] = await (0, pg_1.txQuery)(tx, 'billing_bump_invoice_sequence', BUMP_SEQUENCE, [s.invoice_prefix, year, slots.length]);
        slots.forEach((slot, k) => { numbers[slot] = formatInvoiceNumber(s.invoice_prefix, year, Number(first) + k); });
    }
    const links = ids.map((id) => (0, public_links_1.newPublicLink)(id));
    const rows = await (0, pg_1.txQuery)(tx, 'billing_insert_invoices', INSERT_INVOICES, [
        ids, numbers, inputs.map((i) => i.subscriberId), inputs.map((i) => i.resellerId), inputs.map((i) => i.kind ?? 'manual'),
        priced.map((p) => p.totals.amount), priced.map((p) => p.taxRate), priced.map((p) => p.totals.taxAmount),
        priced.map((p) => p.totals.total), priced.map((p) => p.currency), priced.map((p) => p.issueDate), priced.map((p) => p.dueDate),
        inputs.map((i) => i.notes ?? null), priced.map((p) => p.commissionRate), priced.map((p) => p.totals.commissionAmount),
        inputs.map((i) => i.createdBy ?? null), links.map((l) => l.publicTokenNonce), links.map((l) => l.publicTokenHash),
        priced.map((p) => (0, invoice_state_1.initialStatus)(p.totals.total)),
    ]);
    const lines = priced.flatMap((p, i) => itemRows(ids[i], p.totals.items));
    const items = await (0, pg_1.txQuery)(tx, 'billing_insert_invoice_items', INSERT_ITEMS, [
        lines.map((l) => l.invoiceId), lines.map((l) => l.position), lines.map((l) => l.description), lines.map((l) => l.qty),
        lines.map((l) => l.unitPrice), lines.map((l) => l.amount),
    ]);
    const byInvoice = new Map(ids.map((id) => [id, []]));
    for (const it of items)
        byInvoice.get(it.invoiceId).push(it);
    const invoiceById = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => ({ invoice: invoiceById.get(id), items: byInvoice.get(id).sort((a, b) => a.position - b.position) }));
}
const INVOICE_FOR_PAYMENT = `select ${pg_1.INVOICE_COLUMNS}, s.username from invoices i
  left join subscribers s on s.id = i.subscriber_id where i.id = $1`;
const LOCK_INVOICE = `${INVOICE_FOR_PAYMENT} for update of i`;
/** The invoice row with its subscriber's username, unlocked (for recordPaymentUnlocked). */
async function readInvoiceForPayment(client, id) {
    const { rows: [row] } = await client.query({ name: 'billing_invoice_for_payment', text: INVOICE_FOR_PAYMENT, values: [id] });
    if (!row)
        throw (0, errors_1.notFound)('invoice not found');
    return row;
}
/** The invoice row locked for the rest of the transaction, with its subscriber's username. */
async function lockInvoice(tx, id) {
    const [row] = await (0, pg_1.txQuery)(tx, 'billing_lock_invoice', LOCK_INVOICE, [id]);
    if (!row)
        throw (0, errors_1.notFound)('invoice not found');
    return row;
}
async function loadItems(db, invoiceId) {
    return db.select().from(schema_1.invoiceItems).where((0, drizzle_orm_1.eq)(schema_1.invoiceItems.invoiceId, invoiceId)).orderBy((0, drizzle_orm_1.asc)(schema_1.invoiceItems.position));
}
/** PUT: only a pending invoice changes; totals and commission are recomputed from the new lines. */
async function updatePendingInvoice(tx, id, changes) {
    const current = await lockInvoice(tx, id);
    if (!(0, invoice_state_1.canEdit)(current.status))
        throw (0, errors_1.conflict)(`cannot edit a ${current.status} invoice; only pending invoices can be edited`);
    if (changes.items)
        checkItems(changes.items);
    if (changes.taxRate !== undefined)
        checkTaxRate(changes.taxRate);
    const lines = changes.items ?? (await loadItems(tx, id)).map((it) => ({ description: it.description, qty: it.qty, unitPrice: it.unitPrice }));
    const taxRate = changes.taxRate ?? current.taxRate;
    const totals = totalsOrBadRequest(lines, taxRate, current.commissionRate);
    const dueDate = changes.dueDate ?? current.dueDate;
    if (dueDate < current.issueDate)
        throw (0, errors_1.badRequest)('due_date must not be before the issue date');
    const [invoice] = await tx
        .update(schema_1.invoices)
        .set({
        amount: totals.amount,
        taxRate: String(taxRate),
        taxAmount: totals.taxAmount,
        total: totals.total,
        commissionAmount: totals.commissionAmount,
        ...settlement(totals.total),
        dueDate,
        notes: changes.notes === undefined ? current.notes : changes.notes,
        updatedAt: (0, drizzle_orm_1.sql) `now()`,
    })
        .where((0, drizzle_orm_1.eq)(schema_1.invoices.id, id))
        .returning();
    let items;
    if (changes.items) {
        await tx.delete(schema_1.invoiceItems).where((0, drizzle_orm_1.eq)(schema_1.invoiceItems.invoiceId, id));
        items = await tx.insert(schema_1.invoiceItems).values(itemRows(id, totals.items)).returning();
    }
    else {
        items = await loadItems(tx, id);
    }
    return { invoice, items };
}
/**
 * DELETE: a paid invoice is refused (spec); so is one with any payment, because its payment and
 * ledger rows would be orphaned (void it instead).
 */
async function deleteInvoice(tx, id) {
    const current = await lockInvoice(tx, id);
    if (!(0, invoice_state_1.canDelete)(current.status))
        throw (0, errors_1.conflict)('cannot delete paid invoice');
    if (current.paidAmount > 0)
        throw (0, errors_1.conflict)('cannot delete an invoice with payments');
    await tx.delete(schema_1.invoiceItems).where((0, drizzle_orm_1.eq)(schema_1.invoiceItems.invoiceId, id));
    await tx.delete(schema_1.invoices).where((0, drizzle_orm_1.eq)(schema_1.invoices.id, id));
}
/** Pending invoices of a subscriber, locked in id order. */
async function lockPendingInvoices(tx, subscriberId) {
    return tx
        .select()
        .from(schema_1.invoices)
        .where((0, drizzle_orm_1.and)((0, drizzle_orm_1.eq)(schema_1.invoices.subscriberId, subscriberId), (0, drizzle_orm_1.eq)(schema_1.invoices.status, 'pending')))
        .orderBy((0, drizzle_orm_1.asc)(schema_1.invoices.id))
        .for('update');
}
async function voidInvoices(tx, ids, consolidatedInto) {
    if (ids.length === 0)
        return;
    await tx.update(schema_1.invoices).set({ status: 'void', consolidatedInto, updatedAt: (0, drizzle_orm_1.sql) `now()` }).where((0, drizzle_orm_1.inArray)(schema_1.invoices.id, ids));
}
//# sourceMappingURL=invoices.js.map