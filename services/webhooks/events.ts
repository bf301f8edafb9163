/**
 * What a webhook can subscribe to, and how an event's stored data becomes its body. The events are
 * written by the triggers of migration 0026 (shared/db/migrations/0026_webhooks.sql) in the
 * transaction of the change; this list is what the API accepts and the console offers.
 */
import { fromMinor } from '../../shared/money';

export const WEBHOOK_EVENTS = [
  'invoice.created',
  'invoice.paid',
  'invoice.overdue',
  'payment.created',
  'subscriber.created',
  'subscriber.expired',
  'subscriber.renewed',
  'subscriber.blocked',
  'subscriber.restored',
  'subscriber.disconnected',
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Stored in minor units (the database's money); sent as decimals, as the rest of the API speaks. */
const MONEY_FIELDS = ['amount', 'tax_amount', 'total', 'paid_amount'];

export interface StoredEvent {
  eventId: string;
  event: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/** The JSON body of every attempt of a delivery: the same bytes each time (only the signature's t changes). */
export function eventBody(e: StoredEvent): string {
  const data: Record<string, unknown> = { ...e.payload };
  const currency = typeof data.currency === 'string' ? data.currency.trim() : undefined;
  if (currency) {
    data.currency = currency;
    for (const field of MONEY_FIELDS) {
      if (typeof data[field] === 'number') data[field] = fromMinor(data[field] as number, currency);
    }
  }
  return JSON.stringify({ id: e.eventId, type: e.event, created_at: e.createdAt.toISOString(), data });
}
