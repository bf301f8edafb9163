/**
 * What the captive portal reads: the subscriber behind a client address (its open accounting
 * session), its plan and its open invoices. Read-only.
 */
import { isIP } from 'node:net';
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { DbOrTx } from '../../../shared/db/client';
import { invoices, radacct, services, subscribers } from '../../../shared/db/schema';
import type { BlockedReason } from '../../../shared/domain/access';
import { OPEN_STATUSES } from '../documents-data';

export interface PortalSubscriber {
  id: number;
  username: string;
  expiryDate: string;
  blockedReason: BlockedReason | null;
  price: number | null;
  overridePrice: boolean;
  plan: { name: string; price: number; currency: string; durationDays: number } | null;
}

export interface PortalInvoice {
  id: number;
  invoiceNumber: string;
  status: string;
  dueDate: string;
  currency: string;
  balance: number;
  publicTokenNonce: string | null;
}

/**
 * The address as radacct stores a framed IPv4 address, or null. A dual-stack socket reports an
 * IPv4 client as `::ffff:a.b.c.d`; anything that is not an IP (a forged X-Forwarded-For) matches
 * nobody rather than failing the cast in the query.
 */
export function sessionAddress(ip: string | undefined): string | null {
  if (!ip) return null;
  const plain = ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return isIP(plain) === 4 ? plain : null;
}

/**
 * The live subscriber whose open session has this framed address. Two subscribers on one address
 * (pools that overlap across routers, a stale session the router never closed) are ambiguous:
 * nobody is shown rather than possibly the wrong person.
 */
export async function subscriberAt(db: DbOrTx, address: string): Promise<PortalSubscriber | null> {
  const sessions = await db
    .selectDistinct({ username: radacct.username })
    .from(radacct)
    .where(and(eq(radacct.framedipaddress, address), isNull(radacct.acctstoptime)))
    .limit(2);
  if (sessions.length !== 1 || !sessions[0].username) return null;
  const [row] = await db
    .select({
      id: subscribers.id,
      username: subscribers.username,
      expiryDate: subscribers.expiryDate,
      blockedReason: subscribers.blockedReason,
      price: subscribers.price,
      overridePrice: subscribers.overridePrice,
      planName: services.name,
      planPrice: services.price,
      planCurrency: services.currency,
      planDays: services.durationDays,
    })
    .from(subscribers)
    .leftJoin(services, eq(services.id, subscribers.serviceId))
    .where(and(eq(subscribers.username, sessions[0].username), isNull(subscribers.deletedAt)));
  if (!row) return null;
  const { planName, planPrice, planCurrency, planDays, ...sub } = row;
  const plan =
    planName === null || planPrice === null || planCurrency === null || planDays === null
      ? null
      : { name: planName, price: planPrice, currency: planCurrency, durationDays: planDays };
  return { ...sub, plan };
}

/** Invoices that still owe something, the one due first at the top. */
export async function openInvoices(db: DbOrTx, subscriberId: number): Promise<PortalInvoice[]> {
  const rows = await db
    .select({
      id: invoices.id,
      invoiceNumber: invoices.invoiceNumber,
      status: invoices.status,
      dueDate: invoices.dueDate,
      currency: invoices.currency,
      total: invoices.total,
      paidAmount: invoices.paidAmount,
      publicTokenNonce: invoices.publicTokenNonce,
    })
    .from(invoices)
    .where(and(eq(invoices.subscriberId, subscriberId), inArray(invoices.status, OPEN_STATUSES)))
    .orderBy(asc(invoices.dueDate), asc(invoices.id));
  return rows.map(({ total, paidAmount, ...r }) => ({ ...r, balance: total - paidAmount }));
}
