/**
 * Making a batch: one transaction writes the batch, its cards (serial, PIN hash) in multi-row inserts
 * of a few thousand, the PINs encrypted once for the printable sheet, and, for a reseller's batch
 * charged at creation, the debit of its balance with its ledger row. The PINs come back once, as CSV.
 */
import { eq, sql } from 'drizzle-orm';
import { encrypt } from '../../shared/auth/secrets';
import type { Tx } from '../../shared/db/client';
import { cardBatches, resellers } from '../../shared/db/schema';
import { fail } from '../../shared/failures';
import { recordTransaction } from '../../shared/ledger';
import { fromMinor } from '../../shared/money';
import { newPins, pinHash } from './pins';

export type BatchRow = typeof cardBatches.$inferSelect;

export interface NewBatch {
  count: number;
  /** Minor units of `currency` (money card) or null (plan card). */
  value: number | null;
  serviceId: number | null;
  /** What one card costs its reseller (minor units): the value, or the plan's price. */
  unitPrice: number;
  currency: string;
  resellerId: number | null;
  expiresAt: string | null;
  prefix: string;
  chargeMode: 'creation' | 'redemption';
  createdBy: number | null;
}

const CHUNK = 5000;

/** `PREFIX-<batch>-<n>`: the prefix has no dash, so two prefixes never make the same serial. */
export const serialOf = (prefix: string, batchId: number, n: number) =>
  `${prefix ? `${prefix}-` : ''}${batchId}-${String(n).padStart(6, '0')}`;

/** Debits a reseller (row locked) for cards; 402 when its balance is short. Returns the ledger row id. */
export async function chargeReseller(
  tx: Tx,
  resellerId: number,
  amount: number,
  currency: string,
  notes: string,
  reference: string | null,
  createdBy: number | null,
): Promise<number | null> {
  if (amount <= 0) return null;
  const [r] = await tx.select().from(resellers).where(eq(resellers.id, resellerId)).for('update');
  if (!r) throw fail('referenceNotFound', 'reseller_id');
  if (r.currency !== currency) throw fail('resellerCurrencyMismatch', currency);
  if (r.balance < amount) throw fail('insufficientBalance');
  await tx
    .update(resellers)
    .set({ balance: sql`${resellers.balance} - ${amount}`, updatedAt: new Date() })
    .where(eq(resellers.id, resellerId));
  return recordTransaction(tx, {
    type: 'reseller_debit',
    amount: -amount,
    currency,
    resellerId,
    method: 'prepaid_card',
    reference,
    notes,
    createdBy,
  });
}

export async function createBatch(tx: Tx, b: NewBatch): Promise<{ batch: BatchRow; csv: string }> {
  const pins = newPins(b.count);
  const [batch] = await tx
    .insert(cardBatches)
    .values({
      resellerId: b.resellerId,
      serviceId: b.serviceId,
      value: b.value,
      currency: b.currency,
      count: b.count,
      prefix: b.prefix,
      expiresAt: b.expiresAt,
      chargeMode: b.chargeMode,
      pinsEnc: encrypt(JSON.stringify(pins)),
      createdBy: b.createdBy,
    })
    .returning();
  // Before the cards: a short balance is refused (402) at once, not after hashing and writing them all.
  if (b.resellerId !== null && b.chargeMode === 'creation') {
    await chargeReseller(
      tx,
      b.resellerId,
      b.unitPrice * b.count,
      b.currency,
      `card batch ${batch.id} (${b.count} cards)`,
      `batch ${batch.id}`,
      b.createdBy,
    );
  }
  const serials = pins.map((_, i) => serialOf(b.prefix, batch.id, i + 1));
  for (let from = 0; from < b.count; from += CHUNK) {
    const to = Math.min(b.count, from + CHUNK);
    await tx.execute(sql`
      insert into cards (batch_id, serial, pin_hash)
      select ${batch.id}, s, h from unnest(${sql.param(serials.slice(from, to))}::text[],
                                           ${sql.param(pins.slice(from, to).map(pinHash))}::text[]) as v(s, h)`);
  }
  const worth = b.value !== null ? String(fromMinor(b.value, b.currency)) : `service ${b.serviceId}`;
  const lines = ['serial,pin,value,expires_at'];
  for (let i = 0; i < pins.length; i++) lines.push(`${serials[i]},${pins[i]},${worth},${b.expiresAt ?? ''}`);
  return { batch, csv: lines.join('\n') + '\n' };
}
