/**
 * What the captive portal reads: the subscriber behind a client address (its open accounting
 * session), its plan and its open invoices. Read-only.
 */
import { isIP } from 'node:net';
import { and, asc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../../shared/db/client';
import { invoices, radacct, services, subscribers } from '../../../shared/db/schema';
import type { BlockedReason } from '../../../shared/domain/access';
import { formatIpv6, parseIpv6Prefix } from '../../../shared/net/ipv6-prefix';
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
 * The client address as radacct's columns hold it, or null: IPv4 as is (a dual-stack socket
 * reports an IPv4 client as `::ffff:a.b.c.d`), IPv6 in its canonical text. Anything that is not an
 * IP (a forged X-Forwarded-For, a zone id) matches nobody rather than failing the cast in the query.
 */
export function sessionAddress(ip: string | undefined): string | null {
  if (!ip) return null;
  const plain = ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (isIP(plain) === 4) return plain;
  const v6 = isIP(plain) === 6 ? parseIpv6Prefix(plain) : null;
  return v6 && formatIpv6(v6.network);
}

/**
 * Open sessions at this address: the framed IPv4 address; for IPv6, the session's own address, or
 * its WAN prefix or delegated LAN prefix holding it (a host behind the subscriber's router).
 */
function openAt(address: string) {
  const open = isNull(radacct.acctstoptime);
  if (isIP(address) === 4) return and(eq(radacct.framedipaddress, address), open);
  return and(
    or(
      eq(radacct.framedipv6address, address),
      sql`${radacct.framedipv6prefix} >>= ${address}::inet`,
      sql`${radacct.delegatedipv6prefix} >>= ${address}::inet`,
    ),
    open,
  );
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
    .where(openAt(address))
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
