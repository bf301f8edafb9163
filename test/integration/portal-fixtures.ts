/**
 * Rows of the captive portal tests: a subscriber with an open accounting session at a given
 * address, and its invoices (made by the billing unit's own createInvoice, so numbers and public
 * links are the real ones).
 */
import { eq } from 'drizzle-orm';
import { radacct, subscribers } from '../../shared/db/schema';
import type { BlockedReason } from '../../shared/domain/access';
import type { TestApp } from '../helpers/app';
import { seedInvoice, seedSubscriber } from './documents-fixtures';

let session = 0;

/** An accounting Start that FreeRADIUS would write: an open session with this framed address. */
export async function openSession(
  t: TestApp,
  username: string,
  address: string | null,
  stopped = false,
  ipv6: { framedipv6prefix?: string; delegatedipv6prefix?: string; framedipv6address?: string } = {},
): Promise<void> {
  const id = `portal-${process.pid}-${++session}`;
  await t.db.insert(radacct).values({
    acctsessionid: id,
    acctuniqueid: id,
    username,
    nasipaddress: '192.0.2.1',
    acctstarttime: new Date(),
    acctstoptime: stopped ? new Date() : null,
    framedipaddress: address,
    ...ipv6,
  });
}

export async function seedPortalSubscriber(
  t: TestApp,
  resellerId: number,
  opts: { expiryDate: string; blockedReason?: BlockedReason | null; price?: number | null },
) {
  const sub = await seedSubscriber(t, resellerId);
  const [row] = await t.db
    .update(subscribers)
    .set({
      expiryDate: opts.expiryDate,
      blockedReason: opts.blockedReason ?? null,
      price: opts.price ?? null,
      overridePrice: opts.price !== undefined && opts.price !== null,
    })
    .where(eq(subscribers.id, sub.id))
    .returning();
  return row;
}

/** Two open invoices (one partly paid) and one paid one, which the portal must not list. */
export async function seedPortalInvoices(t: TestApp, sub: { id: number; resellerId: number }) {
  const pending = await seedInvoice(t, sub, {
    items: [{ description: 'Fibre 100, March', qty: 1, unitPrice: 2500 }],
    taxRate: 0,
  });
  const partial = await seedInvoice(t, sub, {
    items: [{ description: 'Router', qty: 1, unitPrice: 12000 }],
    taxRate: 0,
    paid: 4550,
  });
  const paid = await seedInvoice(t, sub, {
    items: [{ description: 'Install', qty: 1, unitPrice: 900 }],
    taxRate: 0,
    paid: 900,
  });
  return { pending, partial, paid };
}

/**
 * What a reader sees of an HTML page: inline tags dropped, block tags read as a space, entities
 * of the template decoded, spaces folded.
 */
export function visibleText(html: string): string {
  return html
    .replace(/<head>[\s\S]*?<\/head>/g, ' ')
    .replace(/<\/?(bdi|a|span)\b[^>]*>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(
      /&(amp|lt|gt|quot|#39);/g,
      (e) => ({ '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" })[e]!,
    )
    .replace(/\s+/g, ' ');
}
