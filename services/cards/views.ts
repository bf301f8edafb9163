/** API views of batches and cards: money as decimals of the batch's currency, dates as ISO strings. */
import { fromMinor } from '../../shared/money';
import { isoTimestamp } from '../../shared/http/schemas';
import { serialOf, type BatchRow } from './batches';
import { unprintedRanges } from './ranges';

export function batchView(b: BatchRow, counts?: Record<string, number>) {
  return {
    id: b.id,
    kind: b.value !== null ? 'money' : 'plan',
    value: b.value !== null ? fromMinor(b.value, b.currency) : null,
    service_id: b.serviceId,
    currency: b.currency,
    count: b.count,
    prefix: b.prefix,
    reseller_id: b.resellerId,
    expires_at: b.expiresAt,
    status: b.status,
    charge_mode: b.chargeMode,
    printed_at: isoTimestamp(b.printedAt),
    printed: b.printedRanges.map((r) => ({
      from: r.from,
      to: r.to,
      first_serial: serialOf(b.prefix, b.id, r.from),
      last_serial: serialOf(b.prefix, b.id, r.to),
      printed_at: r.at,
    })),
    unprinted: unprintedRanges(b.count, b.printedRanges),
    created_by: b.createdBy,
    created_at: isoTimestamp(b.createdAt),
    ...(counts
      ? { cards: { active: counts.active ?? 0, suspended: counts.suspended ?? 0, used: counts.used ?? 0 } }
      : {}),
  };
}

export type CardRow = {
  id: number;
  batch_id: number;
  serial: string;
  status: string;
  used_at: Date | string | null;
  used_by_subscriber_id: number | null;
  transaction_id: number | null;
};

export function cardView(c: CardRow) {
  return {
    id: Number(c.id),
    batch_id: Number(c.batch_id),
    serial: c.serial,
    status: c.status,
    used_at: isoTimestamp(c.used_at),
    used_by_subscriber_id: c.used_by_subscriber_id === null ? null : Number(c.used_by_subscriber_id),
    transaction_id: c.transaction_id === null ? null : Number(c.transaction_id),
  };
}
