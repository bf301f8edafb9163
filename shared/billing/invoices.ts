/**
 * Invoice writes that take the caller's transaction, so a renewal (subscribers unit) and the
 * billing actions create invoices the same way: settings defaults, commission from the owning
 * reseller, gap-free numbering inside the transaction, public link columns, lines.
 */
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { PoolClient } from 'pg';
import type { DbOrTx, Tx } from '../db/client';
import { invoiceItems, invoices, resellers } from '../db/schema';
import { invoiceTotals, type ItemInput } from '../domain/invoice-math';
import { canDelete, canEdit, initialStatus, type InvoiceStatus } from '../domain/invoice-state';
import { fail } from '../failures';
import { isCurrency, parseDecimal } from '../money';
import { newPublicLink } from '../public-links';
import { loadSettings, type SettingKey, type Settings } from '../settings';
import { addDays, todayUtc } from './dates';
import { INVOICE_COLUMNS, txQuery } from './pg';
import type { InvoiceItemRow, InvoiceKind, InvoiceRecord, InvoiceRow } from './types';

export interface CreateInvoiceInput {
  subscriberId: number;
  /** Owning reseller (normally the subscriber's); its commission rate is frozen on the invoice. */
  resellerId: number;
  /** Unit prices in minor units of `currency`. At least one line. */
  items: ItemInput[];
  /** Percent, at most 2 decimals; default: setting `default_tax_rate`. */
  taxRate?: number | string;
  /** ISO 4217; default: setting `currency`. */
  currency?: string;
  /** Default: today (UTC). */
  issueDate?: string;
  /** Default: issue date + setting `default_due_days`. */
  dueDate?: string;
  notes?: string | null;
  kind?: InvoiceKind;
  createdBy?: number | null;
}

export function checkTaxRate(rate: number | string): void {
  const d = parseDecimal(rate);
  if (d.scale > 2) throw fail('taxRateDecimals');
  if (d.digits < 0n || d.digits > 100n * 10n ** BigInt(d.scale)) throw fail('taxRateRange');
}

export function checkItems(items: ItemInput[]): void {
  if (items.length === 0) throw fail('itemsEmpty');
  items.forEach((it, i) => {
    const q = parseDecimal(it.qty);
    if (q.scale > 3) throw fail('itemQtyDecimals', i);
    if (q.digits <= 0n) throw fail('itemQtyNotPositive', i);
    if (!Number.isSafeInteger(it.unitPrice) || it.unitPrice < 0) throw fail('itemPriceNegative', i);
  });
}

function totalsOrBadRequest(items: ItemInput[], taxRate: number | string, commissionRate: string) {
  try {
    return invoiceTotals(items, taxRate, commissionRate);
  } catch {
    throw fail('itemsTotalTooLarge');
  }
}

/** `<prefix>-<year>-<6 digits>`: the row lock on the (prefix, year) counter keeps it gap-free. */
export function formatInvoiceNumber(prefix: string, year: number, n: number): string {
  return `${prefix}-${year}-${String(n).padStart(6, '0')}`;
}

async function allocateNumber(tx: Tx, prefix: string, year: number): Promise<{ id: number; invoiceNumber: string }> {
  const res = await tx.execute<{ last_value: number; id: number }>(sql`
    with seq as (
      insert into invoice_sequences (prefix, year, last_value) values (${prefix}, ${year}, 1)
      on conflict (prefix, year) do update set last_value = invoice_sequences.last_value + 1
      returning last_value
    )
    select last_value, nextval(pg_get_serial_sequence('invoices', 'id'))::int as id from seq`);
  const row = res.rows[0];
  return { id: Number(row.id), invoiceNumber: formatInvoiceNumber(prefix, year, Number(row.last_value)) };
}

function itemRows(invoiceId: number, priced: ReturnType<typeof invoiceTotals>['items']) {
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
function priceInvoice(
  input: CreateInvoiceInput,
  s: Pick<Settings, 'currency' | 'default_tax_rate' | 'default_due_days'>,
  commissionRate: string | undefined,
) {
  checkItems(input.items);
  const currency = input.currency ?? s.currency;
  if (!isCurrency(currency)) throw fail('currencyInvalid');
  const taxRate = input.taxRate ?? s.default_tax_rate;
  checkTaxRate(taxRate);
  if (commissionRate === undefined) throw fail('referenceNotFound', 'reseller_id');
  const totals = totalsOrBadRequest(input.items, taxRate, commissionRate);
  const issueDate = input.issueDate ?? todayUtc();
  const dueDate = input.dueDate ?? addDays(issueDate, s.default_due_days);
  if (dueDate < issueDate) throw fail('dueBeforeIssue');
  return {
    currency,
    taxRate: String(taxRate),
    commissionRate,
    totals,
    issueDate,
    dueDate,
    year: Number(issueDate.slice(0, 4)),
  };
}

/** Status and paid_at of an invoice whose total is (now) `total`: a zero total is settled at once. */
function settlement(total: number): { status: InvoiceStatus; paidAt: SQL | null } {
  const status = initialStatus(total);
  return { status, paidAt: status === 'paid' ? sql`now()` : null };
}

const INVOICE_SETTINGS: SettingKey[] = ['currency', 'default_tax_rate', 'default_due_days', 'invoice_prefix'];

export async function createInvoice(tx: Tx, input: CreateInvoiceInput): Promise<InvoiceRecord> {
  const s = await loadSettings(tx, INVOICE_SETTINGS);
  const [reseller] = await tx
    .select({ commissionRate: resellers.commissionRate })
    .from(resellers)
    .where(eq(resellers.id, input.resellerId));
  const p = priceInvoice(input, s, reseller?.commissionRate);
  const { id, invoiceNumber } = await allocateNumber(tx, s.invoice_prefix, p.year);
  const [invoice] = await tx
    .insert(invoices)
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
      ...newPublicLink(id),
    })
    .returning();
  const items = await tx.insert(invoiceItems).values(itemRows(id, p.totals.items)).returning();
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
  returning ${INVOICE_COLUMNS}`;

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
export async function createInvoices(tx: Tx, inputs: CreateInvoiceInput[]): Promise<InvoiceRecord[]> {
  if (inputs.length === 0) return [];
  const s = await loadSettings(tx, INVOICE_SETTINGS);
  const resellerIds = [...new Set(inputs.map((input) => input.resellerId))];
  const rates = new Map(
    (
      await tx
        .select({ id: resellers.id, commissionRate: resellers.commissionRate })
        .from(resellers)
        .where(inArray(resellers.id, resellerIds))
    ).map((r) => [r.id, r.commissionRate]),
  );
  const priced = inputs.map((input) => priceInvoice(input, s, rates.get(input.resellerId)));
  const ids = (await txQuery<{ id: number }>(tx, 'billing_next_invoice_ids', NEXT_INVOICE_IDS, [inputs.length]))
    .map((r) => r.id)
    .sort((a, b) => a - b);
  // One bump per year, years ascending: two batches spanning the same years lock the counters in one order.
  const numbers: string[] = new Array(inputs.length);
  for (const year of [...new Set(priced.map((p) => p.year))].sort((a, b) => a - b)) {
    const slots = priced.flatMap((p, i) => (p.year === year ? [i] : []));
    const [{ first }] = await txQuery<{ first: number }>(tx, 'billing_bump_invoice_sequence', BUMP_SEQUENCE, [
      s.invoice_prefix,
      year,
      slots.length,
    ]);
    slots.forEach((slot, k) => {
      numbers[slot] = formatInvoiceNumber(s.invoice_prefix, year, Number(first) + k);
    });
  }
  const links = ids.map((id) => newPublicLink(id));
  const rows = await txQuery<InvoiceRow>(tx, 'billing_insert_invoices', INSERT_INVOICES, [
    ids,
    numbers,
    inputs.map((i) => i.subscriberId),
    inputs.map((i) => i.resellerId),
    inputs.map((i) => i.kind ?? 'manual'),
    priced.map((p) => p.totals.amount),
    priced.map((p) => p.taxRate),
    priced.map((p) => p.totals.taxAmount),
    priced.map((p) => p.totals.total),
    priced.map((p) => p.currency),
    priced.map((p) => p.issueDate),
    priced.map((p) => p.dueDate),
    inputs.map((i) => i.notes ?? null),
    priced.map((p) => p.commissionRate),
    priced.map((p) => p.totals.commissionAmount),
    inputs.map((i) => i.createdBy ?? null),
    links.map((l) => l.publicTokenNonce),
    links.map((l) => l.publicTokenHash),
    priced.map((p) => initialStatus(p.totals.total)),
  ]);
  const lines = priced.flatMap((p, i) => itemRows(ids[i], p.totals.items));
  const items = await txQuery<InvoiceItemRow>(tx, 'billing_insert_invoice_items', INSERT_ITEMS, [
    lines.map((l) => l.invoiceId),
    lines.map((l) => l.position),
    lines.map((l) => l.description),
    lines.map((l) => l.qty),
    lines.map((l) => l.unitPrice),
    lines.map((l) => l.amount),
  ]);
  const byInvoice = new Map<number, InvoiceItemRow[]>(ids.map((id) => [id, []]));
  for (const it of items) byInvoice.get(it.invoiceId)!.push(it);
  const invoiceById = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => ({
    invoice: invoiceById.get(id)!,
    items: byInvoice.get(id)!.sort((a, b) => a.position - b.position),
  }));
}

const INVOICE_FOR_PAYMENT = `select ${INVOICE_COLUMNS}, s.username from invoices i
  left join subscribers s on s.id = i.subscriber_id where i.id = $1`;
const LOCK_INVOICE = `${INVOICE_FOR_PAYMENT} for update of i`;

/** The invoice row with its subscriber's username, unlocked (for recordPaymentUnlocked). */
export async function readInvoiceForPayment(
  client: Pick<PoolClient, 'query'>,
  id: number,
): Promise<InvoiceRow & { username: string | null }> {
  const {
    rows: [row],
  } = await client.query<InvoiceRow & { username: string | null }>({
    name: 'billing_invoice_for_payment',
    text: INVOICE_FOR_PAYMENT,
    values: [id],
  });
  if (!row) throw fail('invoiceNotFound');
  return row;
}

/** The invoice row locked for the rest of the transaction, with its subscriber's username. */
export async function lockInvoice(tx: Tx, id: number): Promise<InvoiceRow & { username: string | null }> {
  const [row] = await txQuery<InvoiceRow & { username: string | null }>(tx, 'billing_lock_invoice', LOCK_INVOICE, [id]);
  if (!row) throw fail('invoiceNotFound');
  return row;
}

export async function loadItems(db: DbOrTx, invoiceId: number) {
  return db
    .select()
    .from(invoiceItems)
    .where(eq(invoiceItems.invoiceId, invoiceId))
    .orderBy(asc(invoiceItems.position));
}

export interface InvoiceChanges {
  items?: ItemInput[];
  taxRate?: number | string;
  dueDate?: string;
  notes?: string | null;
}

/** PUT: only a pending invoice changes; totals and commission are recomputed from the new lines. */
export async function updatePendingInvoice(tx: Tx, id: number, changes: InvoiceChanges): Promise<InvoiceRecord> {
  const current = await lockInvoice(tx, id);
  if (!canEdit(current.status)) throw fail('invoiceNotEditable', current.status);
  if (changes.items) checkItems(changes.items);
  if (changes.taxRate !== undefined) checkTaxRate(changes.taxRate);
  const lines =
    changes.items ??
    (await loadItems(tx, id)).map((it) => ({ description: it.description, qty: it.qty, unitPrice: it.unitPrice }));
  const taxRate = changes.taxRate ?? current.taxRate;
  const totals = totalsOrBadRequest(lines, taxRate, current.commissionRate);
  const dueDate = changes.dueDate ?? current.dueDate;
  if (dueDate < current.issueDate) throw fail('dueBeforeIssue');
  const [invoice] = await tx
    .update(invoices)
    .set({
      amount: totals.amount,
      taxRate: String(taxRate),
      taxAmount: totals.taxAmount,
      total: totals.total,
      commissionAmount: totals.commissionAmount,
      ...settlement(totals.total),
      dueDate,
      notes: changes.notes === undefined ? current.notes : changes.notes,
      updatedAt: sql`now()`,
    })
    .where(eq(invoices.id, id))
    .returning();
  let items;
  if (changes.items) {
    await tx.delete(invoiceItems).where(eq(invoiceItems.invoiceId, id));
    items = await tx.insert(invoiceItems).values(itemRows(id, totals.items)).returning();
  } else {
    items = await loadItems(tx, id);
  }
  return { invoice, items };
}

/**
 * DELETE: a paid invoice is refused (spec); so is one with any payment, because its payment and
 * ledger rows would be orphaned (void it instead).
 */
export async function deleteInvoice(tx: Tx, id: number): Promise<void> {
  const current = await lockInvoice(tx, id);
  if (!canDelete(current.status)) throw fail('invoicePaid');
  if (current.paidAmount > 0) throw fail('invoiceHasPayments');
  await tx.delete(invoiceItems).where(eq(invoiceItems.invoiceId, id));
  await tx.delete(invoices).where(eq(invoices.id, id));
}

/** Pending invoices of a subscriber, locked in id order. */
export async function lockPendingInvoices(tx: Tx, subscriberId: number): Promise<InvoiceRow[]> {
  return tx
    .select()
    .from(invoices)
    .where(and(eq(invoices.subscriberId, subscriberId), eq(invoices.status, 'pending')))
    .orderBy(asc(invoices.id))
    .for('update');
}

/**
 * POST /api/invoices/:id/void: an invoice nobody paid stops counting and stays on record (void is
 * the spec's preferred alternative to delete). One with payments is refused: its money would need
 * a refund, which is not what void does.
 */
export async function voidUnpaidInvoice(tx: Tx, id: number): Promise<InvoiceRow> {
  const current = await lockInvoice(tx, id);
  if (current.status === 'void') throw fail('invoiceVoid');
  if (current.paidAmount > 0) throw fail('voidHasPayments');
  await voidInvoices(tx, [id], null);
  return current;
}

export async function voidInvoices(tx: Tx, ids: number[], consolidatedInto: number | null): Promise<void> {
  if (ids.length === 0) return;
  await tx
    .update(invoices)
    .set({ status: 'void', consolidatedInto, updatedAt: sql`now()` })
    .where(inArray(invoices.id, ids));
}
